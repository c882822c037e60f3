"""``rnnlib cache verify [--cache DIR] [--fast] [--dry-run]``: check the artifact cache.

``verify`` hashes every file of every entry and compares it with the entry's sidecar
(:meth:`rnnlib.cache.ArtifactCache.verify`). Each entry that fails is named with the file, what
was expected and what was found; it and every entry built from it are moved to
``<cache>/.quarantine/`` and are recomputed by the next build. Exit status: 0 if every entry is
intact, 1 if some were not, 2 if there is no cache.

:func:`verify_before_build` is the same check for the start of ``rnnlib build``;
``RNNLIB_CACHE_VERIFY`` chooses it: ``full`` (the default: every file hashed), ``fast`` (sizes and
modification times, as every read does) or ``off``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

from .cache import (
    QUARANTINE,
    ArtifactCache,
    CacheIntegrityWarning,
    Verification,
    default_cache_root,
)

MODES = ("full", "fast", "off")


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    v = sub.add_parser(
        "verify",
        help="hash every entry's files against its sidecar; quarantine what fails",
        description="Hash every entry's files against its sidecar. An entry that fails, and "
        "every entry built from it, is moved to <cache>/.quarantine/ and recomputed by the "
        "next build.",
    )
    v.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="artifact cache folder (default: $RNNLIB_CACHE, <book>/_cache or ~/.cache/rnnlib)",
    )
    v.add_argument(
        "--fast",
        action="store_true",
        help="compare sizes and modification times only (hash a file only if its time changed)",
    )
    v.add_argument("--dry-run", action="store_true", help="report what fails, move nothing")


def main(args) -> int:
    root = (args.cache or default_cache_root()).resolve()
    if not root.is_dir():
        print(f"rnnlib cache verify: no cache at {root}", file=sys.stderr)
        return 2
    report = run_verify(root, full=not args.fast, repair=not args.dry_run)
    return 0 if report.ok else 1


def run_verify(
    root: Path, full: bool = True, repair: bool = True, prefix: str = ""
) -> Verification:
    """Verify the cache at ``root`` and print what was found (one line per failed entry and per
    entry built from one)."""
    start = time.perf_counter()
    with warnings.catch_warnings():  # the report below says it all, once
        warnings.simplefilter("ignore", CacheIntegrityWarning)
        report = ArtifactCache(root).verify(full=full, repair=repair)
    seconds = time.perf_counter() - start
    how = "hashed" if full else "sizes and times checked"
    print(
        f"{prefix}cache {root}: {report.entries} entries, {report.bytes / 1e6:.1f} MB "
        f"{how} in {seconds:.1f} s: "
        + ("all intact" if report.ok else f"{len(report.damaged)} failed"),
        flush=True,
    )
    for (kind, key), damage in sorted(report.damaged.items()):
        for d in damage:
            print(f"{prefix}  FAILED  {d}", file=sys.stderr)
    for (kind, key), (skind, skey) in sorted(report.dependents.items()):
        print(f"{prefix}  REBUILD {kind}/{key}: built from {skind}/{skey}", file=sys.stderr)
    if not report.ok:
        n = len(report.damaged) + len(report.dependents)
        if repair:
            print(
                f"{prefix}  {len(report.quarantined)} of {n} entries moved to "
                f"{root / QUARANTINE}/ (each with quarantine.json saying why); the next build "
                f"recomputes them",
                file=sys.stderr,
            )
        else:
            print(
                f"{prefix}  {n} entries would be moved (--dry-run: nothing moved)", file=sys.stderr
            )
    return report


def verify_before_build(cache_root: Path, mode: str | None = None) -> Verification | None:
    """The check at the start of a build: ``mode`` (default ``$RNNLIB_CACHE_VERIFY`` or
    ``full``) is ``full``, ``fast`` or ``off``. What fails is quarantined, so the build
    recomputes it; the build goes on either way."""
    mode = (mode or os.environ.get("RNNLIB_CACHE_VERIFY") or "full").lower()
    if mode not in MODES:
        raise SystemExit(
            f"rnnlib: RNNLIB_CACHE_VERIFY must be one of {', '.join(MODES)}, got {mode!r}"
        )
    if mode == "off" or not Path(cache_root).is_dir():
        return None
    return run_verify(Path(cache_root), full=mode == "full", prefix="== ")
