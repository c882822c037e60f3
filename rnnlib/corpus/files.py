"""The user's own parallel corpus: plain-text files, one sentence per line.

Two layouts, per split (``train``, ``dev``, ``test``):

* ``pair``: ``<dir>/<split>.<lang>`` for each language, e.g. ``train.en`` and ``train.fr``
  (the name pattern is a parameter, default ``"{split}.{lang}"``); line ``i`` of one file
  translates line ``i`` of the other.
* ``tsv``: ``<dir>/<split>.tsv`` with ``source<TAB>target`` on every line, in the order
  ``src_lang``, ``tgt_lang``.

Files are streamed, never held whole in memory. Bad input stops with a
:class:`CorpusFileError` naming the file and the line (byte offsets count from 1, like line
numbers): a missing file, an empty file, a compressed file (recognised by its magic bytes
whatever its name), bytes that are not UTF-8, bytes that are not text inside a line (a control
character other than the tab: NUL and the rest of C0, DEL, C1; typically binary content or a
carriage return of old line endings), files whose line counts differ, a TSV line without
exactly one tab. The lines are read while the prepared corpus is built: such an error stops
the build, and the cache keeps nothing of it. A pair where either side is empty (after
stripping spaces) is passed on with that side ``""``: the prepared corpus skips it and lists
it by file and line.

Deviations: none (the papers' WMT'14 files are in this format; no cleaning rule is applied to
user files, only the stripping of spaces at both ends of a line, so a control character in
one of them is refused rather than cleaned).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Iterator

from ..cache import config_hash, file_sha256

SPLITS = ("train", "dev", "test")


class CorpusFileError(ValueError):
    """Bad user corpus input; the message starts with ``<file>:<line>:`` where a line applies."""


@dataclass
class FileSpec:
    """Where the files of one split are."""

    split: str
    paths: tuple[Path, ...]  # (src, tgt) for ``pair``, (tsv,) for ``tsv``


#: magic bytes at the start of a compressed file -> (format, how to decompress it)
COMPRESSED = {
    b"\x1f\x8b": ("gzip", "gunzip -k"),
    b"BZh": ("bzip2", "bunzip2 -k"),
    b"\xfd7zXZ\x00": ("xz", "unxz -k"),
    b"\x28\xb5\x2f\xfd": ("zstd", "unzstd"),
}


def _compression(path: Path) -> tuple[str, str] | None:
    with open(path, "rb") as f:
        head = f.read(6)
    return next((v for magic, v in COMPRESSED.items() if head.startswith(magic)), None)


def locate(
    folder: Path, layout: str, src_lang: str, tgt_lang: str, pattern: str = "{split}.{lang}"
) -> list[FileSpec]:
    """The files of every split; raises :class:`CorpusFileError` for a missing or empty file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CorpusFileError(f"{folder}: the corpus folder (corpus_dir) does not exist")
    if layout not in ("pair", "tsv"):
        raise CorpusFileError(f"corpus_layout={layout!r}: choose 'pair' or 'tsv'")
    specs = []
    for split in SPLITS:
        if layout == "pair":
            paths = tuple(
                folder / pattern.format(split=split, lang=lang) for lang in (src_lang, tgt_lang)
            )
        else:
            paths = (folder / f"{split}.tsv",)
        for p in paths:
            if not p.is_file():
                raise CorpusFileError(f"{p}: file not found (the {split} split needs it)")
            if p.stat().st_size == 0:
                raise CorpusFileError(f"{p}: the file is empty")
            packed = _compression(p)
            if packed:
                raise CorpusFileError(
                    f"{p}: this is a {packed[0]}-compressed file (it starts with {packed[0]}'s "
                    f"magic bytes), not plain text: decompress it first ({packed[1]} {p.name}) "
                    "and give the plain file that name"
                )
        specs.append(FileSpec(split, paths))
    return specs


def checksum(specs: list[FileSpec]) -> str:
    """A hash of every file's content (the ``data=`` of the prepared corpus)."""
    return config_hash(
        {f"{s.split}:{i}": file_sha256(p) for s in specs for i, p in enumerate(s.paths)}, 16
    )


#: the control characters (Unicode category Cc) that may not appear inside a line: all but the tab
#: (the newline ends the line; a carriage return before it is part of the line ending)
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROL_NAMES = {
    0x00: "NUL",
    0x0B: "vertical tab",
    0x0C: "form feed",
    0x0D: "carriage return",
    0x1B: "escape",
    0x7F: "DEL",
    0x85: "next line",
}


def _not_text(path: Path, number: int, text: str, at: int) -> CorpusFileError:
    """The error for the control character ``text[at]`` on line ``number``."""
    code = ord(text[at])
    name = f"U+{code:04X}" + (f" {_CONTROL_NAMES[code]}" if code in _CONTROL_NAMES else "")
    byte = len(text[:at].encode("utf-8")) + 1
    more = len(CONTROL.findall(text)) - 1
    if code == 0x0D:
        hint = "does the file end its lines with CR only (old Mac)? Convert them to LF"
    elif code == 0x00:
        hint = "is the file UTF-16, or binary? Give UTF-8 text"
    else:
        hint = "is it binary content? Remove or replace such characters"
    return CorpusFileError(
        f"{path}:{number}: bytes that are not text: the control character {name} at byte "
        f"{byte} of the line" + (f" (and {more} more on the line)" if more else "") + " "
        f"({text[max(0, at - 10) : at + 10]!r}); {hint} (the tab is the only control "
        "character allowed inside a line)"
    )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without the newline)``, decoding each line strictly as UTF-8 and
    refusing a line with a control character other than the tab (:data:`CONTROL`)."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise CorpusFileError(
                    f"{path}:{number}: bytes that are not UTF-8 at byte {e.start + 1} "
                    f"of the line ({raw[max(0, e.start - 10) : e.start + 10]!r})"
                ) from None
            text = text.rstrip("\r\n")
            bad = CONTROL.search(text)
            if bad:
                raise _not_text(path, number, text, bad.start())
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]  # a UTF-8 byte-order mark
            yield number, text


def read_pairs(spec: FileSpec) -> Iterator[tuple[int, str | None, str | None]]:
    """``(line number, source, target)`` for every line of one split, spaces stripped at both
    ends; an empty line gives an empty side (``""``), for the caller to skip."""
    if len(spec.paths) == 2:
        src_path, tgt_path = spec.paths
        for a, b in zip_longest(_lines(src_path), _lines(tgt_path)):
            if a is None or b is None:
                longer, shorter, at = (
                    (tgt_path, src_path, b[0]) if a is None else (src_path, tgt_path, a[0])
                )
                raise CorpusFileError(
                    f"{longer}:{at}: line {at} has no partner: {shorter} has only "
                    f"{at - 1} lines (the two files must have equal line counts)"
                )
            yield a[0], a[1].strip(), b[1].strip()
    else:
        (path,) = spec.paths
        for number, line in _lines(path):
            if not line.strip():
                yield number, "", ""
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                raise CorpusFileError(
                    f"{path}:{number}: expected 'source<TAB>target', found {len(fields) - 1} tabs"
                )
            yield number, fields[0].strip(), fields[1].strip()
