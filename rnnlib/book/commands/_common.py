"""Arguments shared by ``rnnlib run`` and ``rnnlib build``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ...cache import default_cache_root, find_book_root
from ...code_deps import KEEP_STALE_ENV


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        default="cpu",
        help="profile in profiles/<name>.yml: smoke, cpu (default), spread (cpu with the "
        "rebuild spread) or paper",
    )
    parser.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="[CHAPTER.]NAME=VALUE",
        help="override a parameter (for every chapter that declares it, or one chapter)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default: <book>/_build)"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="artifact cache folder (default: $RNNLIB_CACHE or <book>/_cache)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--keep-stale",
        action="store_true",
        help="keep artifacts (and resume unfinished trainings) made by other code than their "
        "kind's of now, instead of recomputing them: for a change checked to change nothing, "
        f"such as a move (sets {KEEP_STALE_ENV}=1; the summary lists them)",
    )


def keep_stale_from(args) -> None:
    """Pass ``--keep-stale`` to the chapters' kernels (through the environment)."""
    if getattr(args, "keep_stale", False):
        os.environ[KEEP_STALE_ENV] = "1"


def book_root() -> Path:
    root = find_book_root()
    if root is None:
        raise SystemExit("rnnlib: run this inside the book (no _toc.yml found here or above)")
    return root


def folders(args, root: Path) -> tuple[Path, Path]:
    out = (args.out or root / "_build").resolve()
    if args.cache:
        cache = args.cache.resolve()
    else:
        cache = (
            Path(os.environ["RNNLIB_CACHE"]).resolve()
            if os.environ.get("RNNLIB_CACHE")
            else root / "_cache"
        )
    out.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    return out, cache


__all__ = [
    "add_profile_arguments",
    "book_root",
    "default_cache_root",
    "folders",
    "keep_stale_from",
]
