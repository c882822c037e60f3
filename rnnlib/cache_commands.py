"""``rnnlib cache verify|ls|clean``: check the artifact cache, see what it holds, free space.

``ls`` lists every entry (kind, key, size, when and in how long it was computed, the commit,
the settings that tell a chapter's runs apart: architecture, length, updates, seed, and whether
its code is the code of now: :func:`code_state`), then the quarantine and the work folders with
their sizes. ``clean`` deletes the quarantine and,
with ``--work``, the work folders of unfinished artifacts that no process is using (an
interrupted training's checkpoints: deleting them means it starts afresh); ``--dry-run`` says
what it would delete.

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
import shutil
import sys
import time
import warnings
from pathlib import Path

from . import code_deps
from .cache import (
    _KEY,
    QUARANTINE,
    ArtifactCache,
    CacheIntegrityWarning,
    Verification,
    _acquire,
    _key_lock,
    _read_sidecar,
    _release,
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
    ls = sub.add_parser("ls", help="list the entries, the quarantine and the work folders")
    ls.add_argument("--cache", type=Path, default=None, help="artifact cache folder")
    ls.add_argument("--kind", default="", help="only kinds starting so, e.g. rnnsearch/run")
    ls.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the build whose models are marked (the build's) (default: <book>/_build)",
    )
    clean = sub.add_parser(
        "clean", help="delete the quarantine (and with --work, unused work folders)"
    )
    clean.add_argument("--cache", type=Path, default=None, help="artifact cache folder")
    clean.add_argument(
        "--work",
        action="store_true",
        help="also delete the work folders no process is using (interrupted runs start afresh)",
    )
    clean.add_argument("--dry-run", action="store_true", help="say what would go, delete nothing")
    du = sub.add_parser("du", help="disk use by kind, and of the quarantine, work and temporaries")
    du.add_argument("--cache", type=Path, default=None, help="artifact cache folder")
    gc = sub.add_parser(
        "gc",
        help="delete what no build needs: the quarantine, the work folders and temporaries no "
        "process is using (never a live one)",
    )
    gc.add_argument("--cache", type=Path, default=None, help="artifact cache folder")
    gc.add_argument("--dry-run", action="store_true", help="say what would go, delete nothing")


#: config fields that tell a chapter's runs apart in ``rnnlib cache ls``
SHOWN = ("arch", "max_len", "corpus_max_len", "max_updates", "seed", "beam_size", "dropout")


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _settings(config: dict) -> str:
    """The :data:`SHOWN` fields found anywhere in ``config`` (nested configs included)."""
    found: dict[str, object] = {}

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in SHOWN and not isinstance(v, (dict, list)) and k not in found:
                    found[k] = v
                walk(v)

    walk(config)
    return " ".join(f"{k}={found[k]}" for k in SHOWN if k in found)


def list_entries(root: Path, kind: str = "", namer=None) -> list[dict]:
    """One row per entry of the cache at ``root`` whose kind starts with ``kind``; with
    ``namer(kind, key, config) -> str``, each row leads with the entry's name in the book (empty
    for an entry that is not a model)."""
    rows = []
    for k, key, path in ArtifactCache(root).entries():
        if not k.startswith(kind):
            continue
        meta = _read_sidecar(path) or {}
        named = {"name": namer(k, key, meta.get("config") or {}) or "-"} if namer else {}
        rows.append(
            {
                **named,
                "kind": k,
                "key": key,
                "MB": round(_size(path) / 1e6, 1),
                "created": str(meta.get("created", "?"))[:16],
                "seconds": meta.get("wall_time_s"),
                "commit": str(meta.get("git_commit") or "?")[:8],
                "settings": _settings(meta.get("config") or {}),
                "code": code_state(k, meta),
            }
        )
    return rows


def code_state(kind: str, meta: dict) -> str:
    """Whether an entry was computed by its kind's code of now (:mod:`rnnlib.code_deps`):
    ``current``, ``stale: <the files that changed>`` (a build recomputes it), ``unrecorded``
    (made before the code was recorded: a build adopts it), or ``-`` (a kind with no code)."""
    now = code_deps.code_hashes(kind)
    if now is None:
        return "-"
    recorded = code_deps.recorded(meta)
    if recorded is None:
        return "unrecorded"
    files = [f.removeprefix("rnnlib/") for f in code_deps.changed(recorded, now)]
    return "stale: " + code_deps.describe(files, 2) if files else "current"


def work_folders(root: Path) -> list[tuple[Path, bool]]:
    """``(folder, in use)`` for each work folder of an unfinished artifact under ``root``: in
    use when a process holds its key's lock."""
    cache, found = ArtifactCache(root), []
    work = root / "work"
    for k, key, path in _work_entries(work):
        lock = _key_lock(cache.lock_path(k, key))
        free = _acquire(lock, timeout=0)
        if free:
            _release(lock)
        found.append((path, not free))
    return found


def _work_entries(work: Path):
    if not work.is_dir():
        return
    for folder, subdirs, _ in os.walk(work):
        here = Path(folder)
        for d in sorted(subdirs):
            if _KEY.fullmatch(d):
                yield here.relative_to(work).as_posix(), d, here / d
        subdirs[:] = [d for d in subdirs if not _KEY.fullmatch(d)]


def ls_main(root: Path, kind: str, namer=None) -> int:
    rows = list_entries(root, kind, namer)
    if rows:
        import pandas as pd

        print(pd.DataFrame(rows).to_string(index=False))
    total = sum(r["MB"] for r in rows)
    print(f"{len(rows)} entries, {total:.1f} MB")
    stale = sum(r["code"].startswith("stale") for r in rows)
    if stale:
        print(
            f"{stale} entries computed by other code than now: a build recomputes them "
            "(rnnlib build --keep-stale keeps them)"
        )
    quarantine = root / QUARANTINE
    if quarantine.is_dir():
        print(f"quarantine: {_size(quarantine) / 1e6:.1f} MB in {quarantine}")
    for path, used in work_folders(root):
        state = "in use" if used else "not in use: resumable, or abandoned"
        print(f"work folder {path.relative_to(root)}: {_size(path) / 1e6:.1f} MB, {state}")
    return 0


def orphan_temporaries(root: Path) -> list[Path]:
    """The temporaries under ``<cache>/.tmp`` whose writing process is gone: a temporary is named
    ``<kind>.<key>.<pid>.<time>`` by the process that writes it (:meth:`ArtifactCache._make`)."""
    tmp, found = root / ".tmp", []
    if not tmp.is_dir():
        return found
    for path in sorted(tmp.iterdir()):
        parts = path.name.split(".")
        pid = int(parts[-2]) if len(parts) >= 4 and parts[-2].isdigit() else None
        if pid is not None and not _alive(pid):
            found.append(path)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def du_main(root: Path) -> int:
    """Disk use by kind (entries, MB), then the quarantine, the work folders and temporaries."""
    by_kind: dict[str, list[float]] = {}
    for k, _, path in ArtifactCache(root).entries():
        row = by_kind.setdefault(k, [0, 0.0])
        row[0] += 1
        row[1] += _size(path) / 1e6
    for k, (n, mb) in sorted(by_kind.items(), key=lambda x: -x[1][1]):
        print(f"{mb:10.1f} MB  {n:4d}  {k}")
    for name in (QUARANTINE, "work", ".tmp"):
        if (root / name).is_dir():
            print(f"{_size(root / name) / 1e6:10.1f} MB        {name}/")
    print(f"{_size(root) / 1e6:10.1f} MB        in all ({root})")
    return 0


def clean_main(root: Path, work: bool, dry_run: bool, temporaries: bool = False) -> int:
    doomed = [root / QUARANTINE] if (root / QUARANTINE).is_dir() else []
    if work:
        doomed += [path for path, used in work_folders(root) if not used]
    if temporaries:
        doomed += orphan_temporaries(root)
    verb = "would delete" if dry_run else "deleted"
    for path in doomed:
        size = _size(path) / 1e6
        if not dry_run:
            shutil.rmtree(path, ignore_errors=True)
        print(f"{verb} {path.relative_to(root)} ({size:.1f} MB)")
    if not doomed:
        print("nothing to delete")
    return 0


def main(args) -> int:
    root = (args.cache or default_cache_root()).resolve()
    if not root.is_dir():
        print(f"rnnlib cache {args.action}: no cache at {root}", file=sys.stderr)
        return 2
    if args.action == "ls":
        return ls_main(root, args.kind)
    if args.action == "clean":
        return clean_main(root, args.work, args.dry_run)
    if args.action == "du":
        return du_main(root)
    if args.action == "gc":
        return clean_main(root, work=True, dry_run=args.dry_run, temporaries=True)
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
