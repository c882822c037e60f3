"""``rnnlib build --profile P -p [chapter.]name=value``: execute every chapter, then build the \
HTML."""

from __future__ import annotations

import sys
import time

from ..params import ParameterError, overrides_in_environment
from ..execute import (
    ChapterFailed,
    ChapterInterrupted,
    build_html,
    execute_chapter,
    new_build,
    resolve_all,
    stage_book,
    summary_table,
    write_build_record,
)
from ...cache_commands import verify_before_build
from ..claims import reconcile
from ._common import add_profile_arguments, book_root, folders, keep_stale_from


def add_arguments(parser) -> None:
    add_profile_arguments(parser)
    parser.add_argument("--no-html", action="store_true", help="execute the chapters only")


def main(args) -> int:
    root = book_root()
    try:  # every chapter's parameters are checked before any work starts
        chapters, params = resolve_all(root, args.profile, args.param)
    except (ParameterError, FileNotFoundError) as e:
        print(f"rnnlib build: {e}", file=sys.stderr)
        return 2
    out, cache = folders(args, root)
    keep_stale_from(args)
    verify_before_build(cache)  # RNNLIB_CACHE_VERIFY=full (default) | fast | off
    (out / "build-log.jsonl").unlink(missing_ok=True)
    (out / "build.json").unlink(missing_ok=True)  # written again when this build finishes
    build = new_build(root)  # every chapter's claims name it
    start = time.perf_counter()
    stage_book(root, out)
    # a build replaces every chapter's claims: none survives from an earlier build, even if this
    # one stops partway
    reconcile(out / "results", chapters, chapters)
    results = []
    for stem, path in chapters.items():
        print(f"== chapter {stem} (profile {args.profile})", flush=True)
        try:
            with overrides_in_environment(
                args.param
            ):  # for a chapter that reads another chapter's parameters
                results.append(
                    execute_chapter(
                        root, stem, path, params[stem], out, cache, progress=not args.no_progress
                    )
                )
        except (ChapterFailed, ChapterInterrupted) as e:
            print(summary_table(results, None, time.perf_counter() - start))
            print(f"rnnlib build: {e}", file=sys.stderr)
            return 130 if isinstance(e, ChapterInterrupted) else 1
    html_seconds = None
    if not args.no_html:
        print("== jupyter-book build", flush=True)
        t = time.perf_counter()
        try:
            build_html(out / "src", out)
        except RuntimeError as e:
            print(summary_table(results, time.perf_counter() - t, time.perf_counter() - start))
            print(f"rnnlib build: {e}", file=sys.stderr)
            return 1
        html_seconds = time.perf_counter() - t
    print(summary_table(results, html_seconds, time.perf_counter() - start))
    write_build_record(out, build, args.profile, time.perf_counter() - start)
    if not args.no_html:
        print(f"book: {out / '_build' / 'html' / 'index.html'}")
    return 0
