"""``rnnlib params chapters/<chapter>.md``: the parameters a chapter declares and what they \
accept."""

from __future__ import annotations

import sys
from pathlib import Path

from ..params import ParameterError, chapter_specs


def add_arguments(parser) -> None:
    parser.add_argument(
        "chapter",
        type=Path,
        help="the chapter file, e.g. chapters/copy_task.md (or its name, copy_task, from the "
        "book's root)",
    )


def main(args) -> int:
    path = Path(args.chapter)
    if not path.exists() and (Path("chapters") / f"{path}.md").exists():
        path = Path("chapters") / f"{path}.md"  # a chapter's name, from the book's root
    try:
        specs = chapter_specs(path)
    except ParameterError as e:
        print(f"rnnlib params: {e}", file=sys.stderr)
        return 2
    width = max(len(n) for n in specs)
    for spec in specs.values():
        print(
            f"{spec.name:<{width}}  default {spec.default!r:<12}  accepts {spec.accepts()}"
            + (f"  -- {spec.help}" if spec.help else "")
            + (f"  [# include: {spec.block}]" if spec.block else "")
        )
    return 0
