"""``rnnlib spread PIECE --seed N``: one replicate of the rebuild spread, computed alone and kept
as a record in ``records/spread/`` (:mod:`rnnlib.book.spread_records`).

The pieces (:mod:`.spread_pieces`): ``rnnsearch`` (paper B's "-50" pair and RNNsearch-50⋆ with
training seed N), ``rnnsearch-30`` (the "-30" pair with seed N) and ``phrase`` (paper A's
Baseline and +RNN rows on eflomal alignment N, with their scorer, then the representations
chapter's measures on that scorer). Each computes only what its replicate needs, in the given
cache (from an empty one it prepares the corpus first).

Estimated times of the ``cpu`` profile on a 2-core machine from an empty cache (each record
states its own): ``rnnsearch`` 40 to 60 minutes (RNNsearch-50's 2,400 updates took 31 minutes
alone and about 42 two runs side by side in the stopped cpu build of ``records/timings/``,
RNNencdec-50 trains beside it, RNNsearch-50⋆'s further updates about 8 to 10, six decodings a
few, the corpus 1); ``rnnsearch-30`` about 30 (the ``spread`` profile's 27 for the pair, and
its decodings); ``phrase`` 60 to 100: the alignment and its phrase table 5 to 8, the scorer 17
to 50 and its scored pairs 13, and nine MERT systems (Baseline, the Baseline tuned on, +RNN; 3
seeds each) of 4 to 15 minutes each with their evaluations, two at a time (the artifact times
of the reference build of this session, measured under load), then about 10 for the
representations chapter's measures (its tanh network trained in 7.4 minutes in that build,
the purity and gates a few more). ``rnnsearch`` and ``rnnsearch-30`` fit in 90 minutes;
``phrase`` may not on a loaded machine: run it alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .. import machine
from ..book.params import ParameterError
from ..book.spread_records import (
    FOLDER,
    PIECES,
    artifacts_of,
    from_sidecars,
    make_record,
    write_record,
)
from ..cache import ArtifactCache, default_cache_root, find_book_root, git_commit


def positive_int(text: str) -> int:
    """A seed or alignment index: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer of at least 1, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer of at least 1, got {value}")
    return value


def existing_folder(text: str) -> Path:
    """A cache folder that exists (an empty one is fine: a run from an empty cache)."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"no such folder: {path} (create an empty one to run from an empty cache)"
        )
    return path


def add_arguments(parser) -> None:
    parser.description = (
        "Compute one replicate of the rebuild spread and write it as a record "
        "(records/spread/<piece>-<unit>-<N>-<profile>-<time>.json): its headline numbers, "
        "commit, machine, every cache key it used with its kind's code hashes, and its times."
    )
    parser.add_argument(
        "piece",
        choices=sorted(PIECES),
        help="rnnsearch: B's -50 pair and RNNsearch-50* with training seed N; rnnsearch-30: "
        "the -30 pair; phrase: A's Baseline and +RNN rows on eflomal alignment N, and the "
        "representations chapter's measures on its network",
    )
    parser.add_argument(
        "--seed",
        type=positive_int,
        required=True,
        help="the replicate: the training seed (rnnsearch pieces) or the alignment run (phrase; "
        "1 is the chapters' own)",
    )
    parser.add_argument("--profile", default="cpu", help="the profile (default cpu)")
    add_record_arguments(parser, "records/spread")


def add_record_arguments(parser, folder: str) -> None:
    """The options of a command that writes a record under ``folder``: ``--cache``, ``--out``,
    ``--allow-dirty``."""
    parser.add_argument(
        "--cache",
        type=existing_folder,
        default=None,
        help="the artifact cache (default: the book's)",
    )
    parser.add_argument("--out", type=Path, default=None, help=f"default: {folder}")
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="write the record from a working tree with uncommitted changes (it says so, and the "
        "book does not use it)",
    )


def book_and_commit(command: str, allow_dirty: bool) -> tuple[Path, str] | None:
    """``(book root, commit)`` for a command that writes a record, or ``None`` after a line on
    stderr when there is no book root here, or the tree has uncommitted changes and
    ``allow_dirty`` is false (a record names the commit its numbers come from)."""
    root = find_book_root()
    if root is None:
        print(f"rnnlib {command}: no book root (a folder with _toc.yml) here", file=sys.stderr)
        return None
    commit = git_commit(root) or "unknown"
    if commit.endswith("+dirty") and not allow_dirty:
        print(
            f"rnnlib {command}: the working tree has uncommitted changes: commit them first (a "
            "record names the commit its numbers come from), or pass --allow-dirty",
            file=sys.stderr,
        )
        return None
    return root, commit


def main(args) -> int:
    found = book_and_commit("spread", args.allow_dirty)
    if found is None:
        return 2
    root, commit = found
    from .spread_pieces import chapter_hash, chapter_values, run_piece

    cache = ArtifactCache(args.cache or default_cache_root())
    os.environ.setdefault("RNNLIB_CHAPTER", f"spread-{args.piece}")
    start, since = time.perf_counter(), datetime.now(timezone.utc)
    try:
        result = run_piece(args.piece, cache, root, args.profile, args.seed)
    except ParameterError as err:
        print(f"rnnlib spread: {err}", file=sys.stderr)
        return 2
    total = time.perf_counter() - start
    end_commit = git_commit(root) or "unknown"
    if end_commit != commit:  # the tree changed while the piece ran
        commit = commit.removesuffix("+dirty") + "+dirty"
    record = make_record(
        args.piece,
        args.seed,
        args.profile,
        result.headline,
        cache.events,
        result.parts,
        commit,
        machine.label(machine.describe()),
        total,
        arts=from_sidecars(artifacts_of(cache.events), cache, since),
        chapters=result.chapters,
    )
    chapter = PIECES[args.piece][0]
    record["config_hash"] = chapter_hash(chapter, chapter_values(root, chapter, args.profile))
    path = write_record(args.out or root / FOLDER, record)
    print(f"wrote {path}")
    for label, value in result.headline.items():
        print(f"  {label}: {value:.4g}")
    print(f"  in {total / 60:.1f} min ({sum(a['computed'] for a in record['artifacts'])} computed)")
    return 0
