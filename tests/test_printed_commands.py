"""The commands the book and the README print for rerunning chapters parse as printed: every
chapter, profile and ``-p`` override they name is one the build accepts
(rnnlib.book.execute.resolve_all, the check ``rnnlib run`` and ``rnnlib build`` make before any
work)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from rnnlib.book.params import ParameterError
from rnnlib.book.execute import resolve_all

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["chapters/results.md", "README.md", "CONTRIBUTING.md"]


def printed_commands(text: str) -> list[list[str]]:
    """argv of every line of a ```bash block that runs the book: .ci/build-book, rnnlib run or
    build."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split(" #")[0].strip()
            argv = shlex.split(line) if line else []
            if argv[:2] == ["bash", ".ci/build-book"]:
                out.append(["build"] + argv[2:])
            elif argv and argv[0].endswith("rnnlib") and argv[1:2] in (["run"], ["build"]):
                out.append(argv[1:])
    return out


def check(argv: list[str], corpus_dir: Path) -> None:
    """Resolve the chapters and parameters of ``rnnlib <argv>`` as the command would."""
    command, rest = argv[0], argv[1:]
    only, profile, overrides = None, "cpu", []
    while rest:
        arg = rest.pop(0)
        if arg == "--profile":
            profile = rest.pop(0)
        elif arg == "-p":
            override = rest.pop(0)
            if override.split("=")[0].endswith(
                "corpus_dir"
            ):  # the user's folder: one that exists here
                override = f"{override.split('=')[0]}={corpus_dir}"
            overrides.append(override)
        elif arg.endswith(".md") and command == "run":
            only = [Path(arg).stem]
            assert (ROOT / arg).is_file(), f"{argv}: no chapter {arg}"
        elif arg.startswith("-"):
            raise AssertionError(f"{argv}: the test does not know the option {arg}")
    resolve_all(ROOT, profile, overrides, only)


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mydata")
    for split in ("train", "dev", "test"):
        for side in ("en", "fr"):
            (folder / f"{split}.{side}").write_text("a b c\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("page", PAGES)
def test_every_printed_rerun_command_resolves(page, corpus_dir):
    commands = printed_commands((ROOT / page).read_text(encoding="utf-8"))
    assert commands, f"{page}: no command found: the check would check nothing"
    for argv in commands:
        check(argv, corpus_dir)


def test_the_check_fails_on_a_parameter_no_chapter_has(corpus_dir):
    commands = printed_commands((ROOT / "chapters/results.md").read_text(encoding="utf-8"))
    assert any("-p" in argv for argv in commands)
    with pytest.raises(ParameterError, match="beam_sise"):
        check(["build", "-p", "rnnsearch.beam_sise=5"], corpus_dir)
    with pytest.raises(ParameterError):
        check(["run", "chapters/rnnsearch.md", "-p", "seed=two"], corpus_dir)
