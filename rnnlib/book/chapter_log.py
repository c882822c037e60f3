"""What a running chapter says, kept and summarised: the build's view of a long run.

papermill hands every stream the chapter's kernel writes (training bars, the cache's messages,
warnings) to a file-like object (its ``stdout_file``/``stderr_file``). :class:`ChapterLog` is
that object: it appends everything to ``<build>/logs/<chapter>.log``, and prints a summary on the
terminal, each line led by the chapter and the time since it started:

* every line of the cache (``rnnlib cache: computing ...``, ``... computed in ...``,
  ``waiting for another process ...``), as it comes;
* the latest progress line (a tqdm bar, a training evaluation), at most once every ``every``
  seconds, so a two-hour training shows that it moves without flooding the terminal.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Callable, TextIO

#: lines of the cache (rnnlib.cache), echoed as they come
CACHE_PREFIX = "rnnlib cache:"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss (or m:ss under an hour)."""
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ChapterLog:
    """A chapter's kernel output: everything to ``path``, a summary to ``terminal``.

    ``write`` takes text in any pieces (papermill passes each stream message whole; a tqdm bar
    redraws its line with ``\\r``). ``every``: seconds between two progress lines on the
    terminal; ``clock``: the time source (tests pass their own)."""

    def __init__(
        self,
        path: Path,
        chapter: str,
        terminal: TextIO | None = None,
        every: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "a", encoding="utf-8")
        self.chapter = chapter
        self.terminal = terminal if terminal is not None else sys.stderr
        self.every = every
        self.clock = clock
        self.start = clock()
        self.last_echo = self.start
        self.pending = ""  # the latest progress line not yet shown
        self.partial = ""  # text after the last line break

    def _say(self, line: str) -> None:
        stamp = _clock(self.clock() - self.start)
        print(f"  [{self.chapter} {stamp}] {line}", file=self.terminal, flush=True)

    def write(self, text: str) -> int:
        self.file.write(text)
        self.file.flush()
        pieces = re.split(r"[\r\n]", self.partial + text)
        self.partial = pieces.pop()  # unfinished: wait for the rest
        for piece in pieces:
            line = _ANSI.sub("", piece).strip()
            if not line:
                continue
            if line.startswith(CACHE_PREFIX):
                self._say(line[len(CACHE_PREFIX) :].strip())
                self.pending = ""
            else:
                self.pending = line
        bar = _ANSI.sub("", self.partial).strip()
        if bar:  # a bar redrawn in place has no line break yet
            self.pending = bar
        if self.pending and self.clock() - self.last_echo >= self.every:
            self._say(self.pending)
            self.pending = ""
            self.last_echo = self.clock()
        return len(text)

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        if self.partial:
            self.file.write("\n")
        self.file.close()

    def __enter__(self) -> ChapterLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
