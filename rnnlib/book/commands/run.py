"""``rnnlib run chapters/<chapter>.md --profile P -p name=value``: execute one chapter."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..params import ParameterError, overrides_in_environment
from ..execute import (
    ChapterFailed,
    ChapterInterrupted,
    execute_chapter,
    resolve_all,
    summary_table,
)
from ._common import add_profile_arguments, book_root, folders, keep_stale_from


def add_arguments(parser) -> None:
    parser.add_argument("chapter", type=Path, help="the chapter file, e.g. chapters/copy_task.md")
    add_profile_arguments(parser)


def main(args) -> int:
    root = book_root()
    path = args.chapter.resolve()
    try:
        stem = path.relative_to(root / "chapters").with_suffix("").as_posix()
    except ValueError:
        print(
            f"rnnlib run: {args.chapter} is not a chapter under {root / 'chapters'}",
            file=sys.stderr,
        )
        return 2
    try:
        chapters, params = resolve_all(root, args.profile, args.param, only=[stem])
    except (ParameterError, FileNotFoundError) as e:
        print(f"rnnlib run: {e}", file=sys.stderr)
        return 2
    out, cache = folders(args, root)
    keep_stale_from(args)
    start = time.perf_counter()
    try:
        with overrides_in_environment(
            args.param
        ):  # for a chapter that reads another chapter's parameters
            result = execute_chapter(
                root, stem, chapters[stem], params[stem], out, cache, progress=not args.no_progress
            )
    except (ChapterFailed, ChapterInterrupted) as e:
        print(f"rnnlib run: {e}", file=sys.stderr)
        return 130 if isinstance(e, ChapterInterrupted) else 1
    print(summary_table([result], None, time.perf_counter() - start))
    print(f"executed notebook: {result.notebook}")
    return 0
