"""``rnnlib params chapters/<chapter>.md``: the parameters a chapter declares and what they \
accept."""

from __future__ import annotations

from pathlib import Path

from ..params import chapter_specs


def add_arguments(parser) -> None:
    parser.add_argument("chapter", type=Path, help="the chapter file, e.g. chapters/copy_task.md")


def main(args) -> int:
    specs = chapter_specs(args.chapter)
    width = max(len(n) for n in specs)
    for spec in specs.values():
        print(
            f"{spec.name:<{width}}  default {spec.default!r:<12}  accepts {spec.accepts()}"
            + (f"  -- {spec.help}" if spec.help else "")
            + (f"  [# include: {spec.block}]" if spec.block else "")
        )
    return 0
