"""The artifact cache: expensive results stored under a key derived from what produced them.

An *artifact* is a folder of files (a checkpoint, decoded outputs, a metric table, ...)
identified by its ``kind`` (``"copy_task/model"``), the JSON-able ``config`` that produced
it and the checksum of the data it was computed from. Its key is a hash of those three, so
changing one parameter recomputes exactly the artifacts whose config contains it.

Layout under the cache root::

    <kind>/<key>/                    a finished artifact: its files and meta.json
    <kind>/<key>/meta.json           the sidecar (config, data, code, versions, machine, commit,
                                     time)
    .tmp/<kind>.<key>.<pid>.<n>/     an artifact being written
    work/<kind>/<key>/               resumable state of an unfinished artifact (checkpoints,
                                     and code.json: the code that wrote them)
    .locks/<kind>.<key>.lock         the lock of a key being built (``/`` in kinds written ``~``)
    .quarantine/<kind>.<key>.<time>/ an entry that failed verification, moved out of the way

A ``make`` that fails leaves no trace but what it wrote into its work folder: the temporary
folder goes, and so do the work folder and the folders above it when they are empty.

Writes are atomic: ``make`` fills a temporary folder, the sidecar is written last, and one
``rename`` publishes the folder. A process killed at any moment leaves either nothing or a
temporary folder that no reader ever trusts (it is removed the next time the cache opens).

Concurrent builds: each key has a lock (``.locks/<kind>.<key>.lock``, :mod:`filelock`). A build
that misses takes it before computing, then looks again: of two processes building one key, the
first computes it and the second waits, then reuses the first's artifact. ``make`` runs under the
lock, so a work folder is used by one process at a time. A lock file exists only while its key
is being built (it is never taken for an artifact: nothing under a name starting with ``.`` is).

Integrity: the sidecar records every file's size, sha256 and modification time. A read checks
sizes and times (a ``stat`` per file); a file whose time changed is hashed again, and trusted if
its sha256 still matches (its new time is then recorded). :meth:`ArtifactCache.verify` (``rnnlib
cache verify``, and the check at the start of a build) hashes every file. An entry that fails
is never trusted: a :class:`CacheIntegrityWarning` names it, it is moved to ``.quarantine/`` with
a ``quarantine.json`` saying why, and so is every entry built from it (see
:meth:`ArtifactCache.dependents`), so the next lookup recomputes them all. Sidecars written
before times were recorded are checked by size on read, and get their times from ``verify``.

Code: keys name the config and the data, not the code; the sidecar records it instead. Each
artifact's ``meta.json`` holds ``code``, the hash of every source file its kind depends on (the
map kind -> files is :data:`rnnlib.code_deps.SOURCES`, kept honest by a test that traces a
computation). A build that finds an artifact compares that record with the files of now:

* no record (an artifact made before it existed, or a record hashed another way:
  ``code_scheme``): *adopted*, the code of now is written into its sidecar, nothing is
  recomputed (and so for a file added to the kind's set since);
* the same: reused (a file is hashed as its code: docstrings and comments do not count; a file
  the kind's set no longer names does not count either);
* different (a recorded file edited, moved or deleted): *stale*. By default the
  build recomputes it: the old entry is moved to ``.quarantine/`` (``quarantine.json`` names the
  files that changed) with the entries that name its key (built from its files: their inputs
  change, their keys do not), as for a damaged entry, and a :class:`StaleArtifactWarning` says
  so. With ``RNNLIB_KEEP_STALE=1`` (``rnnlib build --keep-stale``, for a change checked to
  change nothing, such as a move) it is kept and its record brought up to date (the old hashes
  of the changed files under ``code_kept``). Inside :meth:`lookup_only` a stale entry is not
  used and left in place. The build log's event of each such entry says ``adopted`` or
  ``stale`` (the files that changed, and whether it was kept), and the build's summary lists
  them.

A work folder records the code that wrote its state (``work/<kind>/<key>/code.json``). State
written by other code is moved to ``.quarantine/work~<kind>.<key>...`` and the artifact starts
over, with a one-line message on stderr (``RNNLIB_KEEP_STALE=1`` resumes it instead); state
without a record is adopted. A training checkpoint also records its code itself
(:mod:`rnnlib.train`), so that one copied elsewhere is refused under other code.

Lookup only: inside ``with cache.lookup_only():`` a build returns what the cache holds and raises
:class:`NotCached` instead of computing a missing artifact. A chapter reads that way what another
profile's build left in the cache (the further alignments or seeds of the ``spread`` profile)
without ever paying for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from filelock import FileLock, Timeout

from . import code_deps, machine

# Bump when the meaning of stored artifacts changes in a way configs do not capture.
CACHE_FORMAT = 1
SIDECAR = "meta.json"
LOCKS = ".locks"
QUARANTINE = ".quarantine"
QUARANTINE_NOTE = "quarantine.json"
WORK_CODE = "code.json"  # in a work folder: the code that wrote its state
KEEP = f"--keep-stale / {code_deps.KEEP_STALE_ENV}=1"  # how a build keeps what other code made
_KEY = re.compile(r"[0-9a-f]{16}")
_KEY_TOKEN = re.compile(r"(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])")


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal configs give equal strings."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable
    )


def _jsonable(obj: Any) -> Any:
    if hasattr(
        obj, "__dataclass_fields__"
    ):  # a config: as it keys itself (to_dict), else every field
        import dataclasses

        return obj.to_dict() if hasattr(obj, "to_dict") else dataclasses.asdict(obj)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item"):  # numpy / torch scalars
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON-serialisable: {obj!r}")


def config_hash(obj: Any, length: int = 12) -> str:
    """A short stable hash of a JSON-able object (``sha256`` of its canonical JSON)."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:length]


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def content_checksum(meta: dict) -> str:
    """The hash of an artifact's recorded file checksums: what downstream artifacts take as
    ``data=`` when they are computed from its files (the corpus's ``checksum``)."""
    return config_hash({name: f["sha256"] for name, f in meta["files"].items()}, 16)


class NotCached(LookupError):
    """A build inside :meth:`ArtifactCache.lookup_only` met an artifact the cache does not hold."""

    def __init__(self, kind: str, key: str) -> None:
        super().__init__(f"{kind}/{key} is not in the cache (looked up only, not computed)")
        self.kind, self.key = kind, key


class CacheIntegrityWarning(UserWarning):
    """A cache entry failed verification: it was moved to ``.quarantine`` and will be rebuilt."""


class StaleArtifactWarning(UserWarning):
    """A cache entry was computed by other code than its kind's of now (:mod:`rnnlib.code_deps`):
    it is recomputed (moved to ``.quarantine``), or kept when asked to."""


@dataclass(frozen=True)
class Damage:
    """Why an entry is not trusted: ``file`` (None for the entry as a whole) and what was
    expected against what was found."""

    kind: str
    key: str
    file: str | None
    problem: str
    expected: Any = None
    found: Any = None

    def __str__(self) -> str:
        return f"{self.kind}/{self.key}: {self.detail()}"

    def detail(self) -> str:
        """The damage without the entry's name: file, problem, expected and found."""
        what = (f"{self.file}: " if self.file else "") + self.problem
        if self.expected is None and self.found is None:
            return what
        return f"{what} (expected {self.expected}, found {self.found})"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "key": self.key,
            "file": self.file,
            "problem": self.problem,
            "expected": self.expected,
            "found": self.found,
        }


@dataclass
class Verification:
    """What :meth:`ArtifactCache.verify` found: entries checked (and their bytes), the damage of
    each entry that failed, and the entries built from a failed one (key -> the failed key)."""

    entries: int = 0
    bytes: int = 0
    damaged: dict[tuple[str, str], list[Damage]] = field(default_factory=dict)
    dependents: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    quarantined: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.dependents


def find_book_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: cwd) holding ``_toc.yml``."""
    env = os.environ.get("RNNLIB_BOOK_ROOT")
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    return None


def default_cache_root() -> Path:
    """``$RNNLIB_CACHE``, else ``<book root>/_cache``, else ``~/.cache/rnnlib``."""
    env = os.environ.get("RNNLIB_CACHE")
    if env:
        return Path(env).resolve()
    root = find_book_root()
    return root / "_cache" if root else Path.home() / ".cache" / "rnnlib"


_VERSIONS: dict[str, str] | None = None


def library_versions() -> dict[str, str]:
    """Versions of Python and the libraries that shape results (for the sidecar)."""
    global _VERSIONS
    if _VERSIONS is None:
        from importlib import metadata

        out = {"python": platform.python_version(), "platform": platform.platform()}
        for dist in (
            "rnnlib",
            "torch",
            "numpy",
            "pandas",
            "sacrebleu",
            "sacremoses",
            "eflomal",
            "kenlm",
        ):
            try:
                out[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        _VERSIONS = out
    return dict(_VERSIONS)


def git_commit(folder: Path | None = None) -> str | None:
    """``HEAD`` of the repository holding ``folder`` (with ``+dirty`` if the tree has changes)."""
    folder = folder or find_book_root() or Path.cwd()
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        if not head:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass
class Artifact:
    """A finished artifact: read its files under ``path``; ``meta`` is its sidecar."""

    kind: str
    key: str
    path: Path
    meta: dict
    from_cache: bool

    def file(self, name: str) -> Path:
        p = self.path / name
        if not p.exists():
            raise FileNotFoundError(
                f"artifact {self.kind}/{self.key} has no file {name!r} "
                f"(it has: {sorted(self.meta.get('files', {}))})"
            )
        return p

    @property
    def config(self) -> dict:
        return self.meta["config"]

    @property
    def extra(self) -> dict:
        """What ``make`` returned (small JSON results, e.g. wall time of training)."""
        return self.meta.get("extra") or {}


@dataclass
class ArtifactCache:
    """Look up or compute artifacts under ``root`` (see the module docstring)."""

    root: Path = field(default_factory=default_cache_root)
    events: list = field(default_factory=list)
    _lookup_depth: int = field(default=0, init=False, repr=False, compare=False)
    # (kind, key) -> what the build log's next event of the key says about its code
    _notes: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._sweep_temporaries()

    # -- keys and lookup -------------------------------------------------------------------
    @staticmethod
    def key(kind: str, config: dict, data: str | None) -> str:
        return config_hash(
            {"format": CACHE_FORMAT, "kind": kind, "config": config, "data": data}, 16
        )

    def final_path(self, kind: str, key: str) -> Path:
        _check_kind(kind)
        return self.root / kind / key

    def work_dir(self, kind: str, config: dict, data: str | None = None) -> Path:
        """A folder that survives interruptions, for checkpoints of an unfinished artifact."""
        _check_kind(kind)
        return self.root / "work" / kind / self.key(kind, config, data)

    def get(self, kind: str, config: dict, data: str | None = None) -> Artifact | None:
        """The finished artifact for this config and data, or ``None`` if absent or untrusted
        (an untrusted entry is quarantined with what depends on it, and a warning says why)."""
        key = self.key(kind, config, data)
        path = self.final_path(kind, key)
        meta = self._lookup(kind, key)
        if meta is None:
            return None
        return Artifact(kind, key, path, meta, from_cache=True)

    @property
    def looking_up(self) -> bool:
        """Whether :meth:`build` is inside :meth:`lookup_only` (it computes nothing)."""
        return self._lookup_depth > 0

    @contextmanager
    def lookup_only(self) -> Iterator["ArtifactCache"]:
        """Within the block, :meth:`build` raises :class:`NotCached` for a missing artifact
        instead of computing it (nestable; what is in the cache is returned as usual)."""
        self._lookup_depth += 1
        try:
            yield self
        finally:
            self._lookup_depth -= 1

    def build(
        self,
        kind: str,
        config: dict,
        make: Callable[[Path, Path], dict | None],
        data: str | None = None,
    ) -> Artifact:
        """Return the artifact, computing it with ``make(out_dir, work_dir)`` when missing.

        ``make`` writes its files into ``out_dir`` (a fresh temporary folder) and may keep
        resumable state in ``work_dir``; it may return a small JSON-able dict stored in the
        sidecar as ``extra``. Nothing becomes visible to readers until ``make`` returned and
        the sidecar is written. ``make`` runs under the key's lock: another process building
        the same key meanwhile waits, then reuses this artifact. Inside :meth:`lookup_only` a
        missing artifact raises :class:`NotCached` and nothing is computed.
        """
        start = time.perf_counter()
        found = self._current(self.get(kind, config, data))
        if found is not None:
            self._log(kind, found.key, hit=True, seconds=time.perf_counter() - start)
            return found
        key = self.key(kind, config, data)
        if self._lookup_depth:
            self._log_stale(kind, key)
            raise NotCached(kind, key)
        with self._hold(kind, key, waiting=True):
            # built by another process while we waited
            found = self._current(self.get(kind, config, data))
            if found is not None:
                self._log(kind, key, hit=True, seconds=time.perf_counter() - start)
                return found
            return self._make(kind, key, config, data, make, start)

    # -- the code an artifact was computed with --------------------------------------------
    def _current(self, found: Artifact | None) -> Artifact | None:
        """``found`` if it was computed by the code of now (or kept, or adopted), else ``None``.

        A sidecar without ``code`` (written before it was recorded) is adopted: its kind's code
        of now is written into it, nothing is recomputed; so are the files added to the kind's
        set since the record was written (:func:`rnnlib.code_deps.changed`). A sidecar whose
        ``code`` differs (a recorded file changed, or gone from the package) is
        stale: with ``$RNNLIB_KEEP_STALE`` it is kept and its record brought up to date (the old
        one under ``code_kept``); else, outside :meth:`lookup_only`, it is quarantined with the
        entries built from it, so that the build recomputes them. Either way the build log's
        event of the key names the files that changed (``stale``).
        """
        if found is None:
            return None
        now = code_deps.code_hashes(found.kind)
        if now is None:
            return found
        recorded = code_deps.recorded(found.meta)
        if recorded is None:
            found.meta.update(code_deps.stamped(now))
            self._notes[(found.kind, found.key)] = {"adopted": True}
            _rewrite_sidecar(found.path, found.meta)
            return found
        files = code_deps.changed(recorded, now)
        if not files:
            if set(now) - set(recorded):  # files added to the kind's set since: adopted
                found.meta.update(code_deps.stamped(now))
                self._notes[(found.kind, found.key)] = {"adopted": True}
                _rewrite_sidecar(found.path, found.meta)
            return found
        keep = code_deps.keep_stale()
        self._notes[(found.kind, found.key)] = {"stale": {"changed": files, "kept": keep}}
        what = f"cache entry {found.kind}/{found.key} was computed by other code"
        if keep:
            old = {f: recorded.get(f) for f in files}
            when = datetime.now(timezone.utc).isoformat(timespec="seconds")
            found.meta["code_kept"] = {"changed": old, "kept": when}
            found.meta.update(code_deps.stamped(now))
            _rewrite_sidecar(found.path, found.meta)
            _warn_stale(f"{what} (changed: {code_deps.describe(files)}): kept, as {KEEP} asks")
            return found
        if not self._lookup_depth:
            _warn_stale(
                f"{what} (changed: {code_deps.describe(files)}): it will be recomputed "
                f"({KEEP} keeps it)"
            )
            self._reject_stale(found.kind, found.key, files)
        return None

    def _reject_stale(self, kind: str, key: str, files: list[str]) -> None:
        """Quarantine a stale entry, and the entries that name its key (their inputs change with
        it, their keys do not; those that name its content checksum get new keys if it does)."""
        self._quarantine(kind, key, {"stale_code": files, "damage": []})
        for (dkind, dkey), _ in self.dependents({(kind, key)}, by_content=False).items():
            reason = {"built_from": f"{kind}/{key}", "damage": []}
            if self._quarantine(dkind, dkey, reason) is not None:
                self._notes[(dkind, dkey)] = {"stale": {"built_from": f"{kind}/{key}"}}
                _warn_stale(
                    f"cache entry {dkind}/{dkey} was built from {kind}/{key}, which other "
                    "code computed: it will be recomputed too"
                )

    def _work_code(self, kind: str, key: str, work: Path) -> None:
        """Record in ``work`` the code of now (``code.json``); state there that other code left
        is moved to ``.quarantine`` and the artifact starts over, unless ``$RNNLIB_KEEP_STALE``
        (then it resumes). State without a record (left by older code) is adopted."""
        now = code_deps.code_hashes(kind)
        if now is None:
            return
        note = work / WORK_CODE
        try:
            recorded = code_deps.recorded(json.loads(note.read_text(encoding="utf-8")))
        except (OSError, ValueError, AttributeError):
            recorded = None
        if recorded is not None and code_deps.changed(recorded, now):
            files = code_deps.changed(recorded, now)
            if not code_deps.keep_stale():
                stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
                target = self.root / QUARANTINE / f"work~{_flat(kind)}.{key}.{stamp}.{os.getpid()}"
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(work, target)
                except OSError:  # cannot be moved aside: it goes, as it must not be resumed
                    shutil.rmtree(work, ignore_errors=True)
                    target = "nowhere (it could not be moved aside, and was deleted)"
                work.mkdir(parents=True, exist_ok=True)
                print(
                    f"rnnlib cache: the unfinished state of {kind}/{key} was written by other "
                    f"code (changed: {code_deps.describe(files)}): starting over ({KEEP} "
                    f"resumes it; the old state is in {target})",
                    file=sys.stderr,
                    flush=True,
                )
        _write_atomic(note, json.dumps(code_deps.stamped(now), indent=2, sort_keys=True))

    def _log_stale(self, kind: str, key: str) -> None:
        """Log a key that lookup only found stale (so the build's summary names it)."""
        if "stale" in self._notes.get((kind, key), {}):
            self._log(kind, key, hit=False, seconds=0.0, missing=True)

    def _make(self, kind, key, config, data, make, start) -> Artifact:
        """Compute and publish the artifact (the caller holds the key's lock)."""
        final = self.final_path(kind, key)
        if final.exists():  # untrusted and not movable (get() quarantines what it can)
            shutil.rmtree(final, ignore_errors=True)
        tmp_root = self.root / ".tmp"
        tmp = tmp_root / f"{_flat(kind)}.{key}.{os.getpid()}.{time.monotonic_ns()}"
        tmp.mkdir(parents=True)
        work = self.work_dir(kind, config, data)
        work.mkdir(parents=True, exist_ok=True)
        self._say(f"computing {kind}/{key}")
        try:
            self._work_code(kind, key, work)
            code = code_deps.code_hashes(kind)
            extra = make(tmp, work)
            seconds = time.perf_counter() - start
            files = {}
            for p in sorted(tmp.rglob("*")):
                if p.is_file():
                    st = p.stat()
                    files[p.relative_to(tmp).as_posix()] = {
                        "bytes": st.st_size,
                        "sha256": file_sha256(p),
                        "mtime_ns": st.st_mtime_ns,
                    }
            meta = {
                "kind": kind,
                "key": key,
                "config": config,
                "data_checksum": data,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "wall_time_s": round(seconds, 3),
                "versions": library_versions(),
                "machine": machine.describe(),
                "git_commit": git_commit(),
                "cache_format": CACHE_FORMAT,
                "files": files,
                "extra": extra or {},
                **(code_deps.stamped(code) if code is not None else {}),
            }
            _write_atomic(
                tmp / SIDECAR, json.dumps(meta, indent=2, sort_keys=True, default=_jsonable)
            )
            _fsync_dir(tmp)
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(tmp, final)
            except OSError:  # published meanwhile by a process that does not take the lock
                there, damage, _ = _inspect(final, kind, key)
                if there is None or damage:
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
            _fsync_dir(final.parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            _remove_empty(tmp_root, self.root)
            try:  # the record of the code alone is no resumable state
                if [p.name for p in work.iterdir()] == [WORK_CODE]:
                    (work / WORK_CODE).unlink()
            except OSError:
                pass
            _remove_empty(work, self.root)  # a work folder holding nothing is no resumable state
            raise
        shutil.rmtree(work, ignore_errors=True)
        self._log(kind, key, hit=False, seconds=time.perf_counter() - start)
        meta = _inspect(final, kind, key)[0] or meta
        return Artifact(kind, key, final, meta, from_cache=False)

    # -- locks -----------------------------------------------------------------------------
    def lock_path(self, kind: str, key: str) -> Path:
        _check_kind(kind)
        return self.root / LOCKS / f"{_flat(kind)}.{key}.lock"

    def _hold(self, kind: str, key: str, waiting: bool = False) -> _Held:
        """The key's lock, acquired (use as a context manager). Reentrant within a thread; with
        ``waiting``, says on stderr when another process holds it."""
        lock = _key_lock(self.lock_path(kind, key))
        if not _acquire(lock, timeout=0):
            if waiting:
                print(
                    f"rnnlib cache: waiting for another process to finish {kind}/{key} "
                    f"(lock {lock.lock_file})",
                    file=sys.stderr,
                    flush=True,
                )
            _acquire(lock)
        return _Held(lock)

    # -- integrity -------------------------------------------------------------------------
    def _lookup(self, kind: str, key: str) -> dict | None:
        """The trusted sidecar of ``kind/key`` (size and time check), or ``None``; a damaged
        entry is quarantined, with its dependents, and named in a warning."""
        path = self.final_path(kind, key)
        meta, damage, retimed = _inspect(path, kind, key)
        if damage:
            self._reject({(kind, key): damage})
            return None
        if retimed:
            _record_times(path, meta, retimed)
        return meta

    def entries(self) -> Iterator[tuple[str, str, Path]]:
        """Every finished (or damaged) entry under the root as ``(kind, key, folder)``; the
        ``work`` folder and names starting with ``.`` (temporaries, locks, quarantine) are not
        entries."""
        for top in sorted(self.root.iterdir()):
            if top.name.startswith(".") or top.name == "work" or not top.is_dir():
                continue
            for folder, subdirs, _ in os.walk(top):
                here = Path(folder)
                keep = []
                for d in sorted(subdirs):
                    if d.startswith("."):
                        continue
                    if _KEY.fullmatch(d):
                        yield here.relative_to(self.root).as_posix(), d, here / d
                    else:
                        keep.append(d)
                subdirs[:] = keep

    def dependents(
        self,
        failed: set[tuple[str, str]],
        metas: dict[tuple[str, str], dict] | None = None,
        by_content: bool = True,
    ) -> dict[tuple[str, str], tuple[str, str]]:
        """Entries built from a failed one, transitively: ``{(kind, key): (kind, key) of the
        entry it was built from}`` (without ``by_content``: only those that name its key).

        An entry depends on another when its config or its ``data`` names the other's key or
        :func:`content_checksum` (a 16-hex-digit token). Chapter code passes upstream artifacts
        that way (``{"run": run.key}``, ``data=corpus.checksum``). Dependencies recorded only as
        a hash of content read from the upstream files (``data=checksum(sentences)``) are not
        seen, and need not be: rebuilt inputs with other content give other keys.
        """
        if metas is None:
            metas = {}
            for kind, key, path in self.entries():
                meta = _read_sidecar(path)
                if meta is not None:
                    metas[(kind, key)] = meta
        aliases: dict[str, set[tuple[str, str]]] = {}  # a key or content checksum -> entries
        for ident in set(metas) | set(failed):
            aliases.setdefault(ident[1], set()).add(ident)
        for ident, meta in metas.items() if by_content else ():
            try:
                aliases.setdefault(content_checksum(meta), set()).add(ident)
            except (KeyError, TypeError, AttributeError):
                pass
        users: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for ident, meta in metas.items():
            text = canonical_json([meta.get("config"), meta.get("data_checksum")])
            for token in set(_KEY_TOKEN.findall(text)):
                for source in aliases.get(token, ()):
                    if source != ident:
                        users.setdefault(source, set()).add(ident)
        out: dict[tuple[str, str], tuple[str, str]] = {}
        todo = sorted(failed)
        while todo:
            source = todo.pop()
            for user in sorted(users.get(source, ())):
                if user not in failed and user not in out:
                    out[user] = source
                    todo.append(user)
        return out

    def verify(self, full: bool = True, repair: bool = True) -> Verification:
        """Check every entry against its sidecar: by sha256 (``full``) or by size and time.

        With ``repair``, each entry that fails and every entry built from it (transitively,
        :meth:`dependents`) is quarantined; without, they are only reported. Sidecars without
        recorded times (written by older code) get them once their files hashed correctly.
        """
        report = Verification()
        metas = {}
        for kind, key, path in self.entries():
            report.entries += 1
            meta, damage, retimed = _inspect(path, kind, key, full=full)
            if meta is not None:
                metas[(kind, key)] = meta
                report.bytes += sum(int(f.get("bytes", 0)) for f in meta["files"].values())
            if damage:
                report.damaged[(kind, key)] = damage
            elif retimed and repair:
                _record_times(path, meta, retimed)
        report.dependents = self.dependents(set(report.damaged), metas)
        if repair and report.damaged:
            report.quarantined = self._reject(report.damaged, report.dependents)
        return report

    def _reject(
        self,
        damaged: dict[tuple[str, str], list[Damage]],
        dependents: dict[tuple[str, str], tuple[str, str]] | None = None,
    ) -> list[Path]:
        """Warn about and quarantine damaged entries and the entries built from them."""
        if dependents is None:
            dependents = self.dependents(set(damaged))
        moved = []
        for (kind, key), damage in damaged.items():
            users = sum(1 for source in dependents.values() if source == (kind, key))
            also = f", with {users} entries built from it" if users else ""
            _warn(
                f"cache entry {kind}/{key} is not trusted and will be rebuilt{also}: "
                + "; ".join(d.detail() for d in damage)
            )
            where = self._quarantine(kind, key, {"damage": [d.to_dict() for d in damage]})
            if where is not None:
                moved.append(where)
        for (kind, key), (skind, skey) in dependents.items():
            reason = {"built_from": f"{skind}/{skey}", "damage": []}
            where = self._quarantine(kind, key, reason)
            if where is not None:
                _warn(
                    f"cache entry {kind}/{key} was built from {skind}/{skey}, which is not "
                    f"trusted: it will be rebuilt too"
                )
                moved.append(where)
        return moved

    def _quarantine(self, kind: str, key: str, reason: dict) -> Path | None:
        """Move ``kind/key`` into ``.quarantine`` (under its lock); the new place, or ``None``
        if it was gone or replaced meanwhile."""
        path = self.final_path(kind, key)
        try:
            ident = _identity(path)
        except OSError:
            return None
        lock = _key_lock(self.lock_path(kind, key))
        while not _acquire(lock, timeout=1):
            if not _same(path, ident):  # a holder moved it (and may be rebuilding it)
                return None
        try:
            if not _same(path, ident):
                return None
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
            target = (
                self.root
                / QUARANTINE
                / (f"{_flat(kind)}.{key}.{stamp}.{os.getpid()}.{time.monotonic_ns()}")
            )
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, target)
            except OSError:  # cannot be moved aside: it goes, as it must not be read again
                shutil.rmtree(path, ignore_errors=True)
                return None
            note = {"kind": kind, "key": key, "moved": stamp, **reason}
            try:
                _write_atomic(target / QUARANTINE_NOTE, json.dumps(note, indent=2, default=str))
            except OSError:
                pass
            return target
        finally:
            _release(lock)

    # -- housekeeping ----------------------------------------------------------------------
    def _sweep_temporaries(self) -> None:
        """Remove temporary folders of writers that are no longer running."""
        tmp_root = self.root / ".tmp"
        if not tmp_root.is_dir():
            return
        for entry in tmp_root.iterdir():
            parts = entry.name.split(".")
            pid = int(parts[-2]) if len(parts) >= 4 and parts[-2].isdigit() else None
            if pid is None or not _pid_alive(pid):
                shutil.rmtree(entry, ignore_errors=True)

    def _say(self, message: str) -> None:
        """One line on stderr during a build (``$RNNLIB_BUILD_LOG`` set): what the cache is
        computing and how long it took, for the build's terminal summary
        (:mod:`rnnlib.book.chapter_log`)."""
        if os.environ.get("RNNLIB_BUILD_LOG"):
            print(f"rnnlib cache: {message}", file=sys.stderr, flush=True)

    def _log(self, kind: str, key: str, hit: bool, seconds: float, missing: bool = False) -> None:
        event = {
            "kind": kind,
            "key": key,
            "hit": hit,
            "seconds": round(seconds, 3),
            "chapter": os.environ.get("RNNLIB_CHAPTER"),
            **self._notes.pop((kind, key), {}),
            **({"missing": True} if missing else {}),
        }
        self.events.append(event)
        if not hit and not missing:
            self._say(f"{kind}/{key} computed in {seconds:.0f} s")
        log = os.environ.get("RNNLIB_BUILD_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(event) + "\n")


def _remove_empty(folder: Path, root: Path) -> None:
    """Remove ``folder`` and then its parents below ``root`` while they are empty."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (or already gone, or another writer's): leave it
            return
        folder = folder.parent


def _check_kind(kind: str) -> None:
    parts = kind.split("/")
    if not kind or any(p in ("", ".", "..", "work") or p.startswith(".") for p in parts):
        raise ValueError(
            f"artifact kind {kind!r} must be slash-separated names, e.g. 'copy_task/model'"
        )


def _warn(message: str, category: type[Warning] | None = None) -> None:
    """A warning (default :class:`CacheIntegrityWarning`) attributed to the first caller outside
    this module."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category or CacheIntegrityWarning, stacklevel=level)


def _warn_stale(message: str) -> None:
    _warn(message, StaleArtifactWarning)


def _flat(kind: str) -> str:
    return kind.replace("/", "~")


def _key_lock(path: Path) -> FileLock:
    return FileLock(str(path), is_singleton=True)


def _acquire(lock: FileLock, timeout: float = -1) -> bool:
    """Acquire ``lock`` (``timeout`` < 0: wait as long as it takes); False on timeout."""
    while True:
        try:
            lock.acquire(timeout=timeout)
            return True
        except Timeout:
            return False
        except FileNotFoundError:  # .locks was removed between its creation and our open
            continue
        except FileExistsError:  # .locks was removed and made again while filelock made it
            continue


def _release(lock: FileLock) -> None:
    """Release ``lock``; the outermost release first removes the lock file (and ``.locks`` if
    it is empty), so that a finished or failed build leaves no trace.

    Removing a held lock file is safe with the pinned filelock: a process that was waiting on
    the removed file finds, once it gets it, that the file has no name any more
    (``st_nlink == 0``) and starts over on a new file. One arriving after the removal takes a
    new file while we still hold the old one; that overlap is harmless because we remove the
    file only once our work under the lock is done (the artifact published, or the failed
    attempt cleaned up), so whoever comes next finds it, or starts afresh.
    """
    if lock.lock_counter == 1:
        path = Path(lock.lock_file)
        try:
            path.unlink()
            path.parent.rmdir()
        except OSError:
            pass
    lock.release()


class _Held:
    """An acquired key lock, released when the ``with`` block ends."""

    def __init__(self, lock: FileLock) -> None:
        self.lock = lock

    def __enter__(self) -> FileLock:
        return self.lock

    def __exit__(self, *exc) -> None:
        _release(self.lock)


def _read_sidecar(path: Path) -> dict | None:
    try:
        meta = json.loads((path / SIDECAR).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict):
        return None
    return meta


def _inspect(
    path: Path, kind: str, key: str, full: bool = False
) -> tuple[dict | None, list[Damage], dict[str, int]]:
    """Check the entry folder ``path`` against its sidecar: ``(meta, damage, retimed)``.

    ``meta`` is the sidecar if it parses (also when damaged), ``damage`` empty if the entry can
    be trusted (or is absent), ``retimed`` the files whose content matched their sha256 but
    whose modification time is not the recorded one (to record). Without ``full``, a file is
    hashed only when its time differs from a recorded one; with ``full``, every file is.
    """
    if not path.is_dir():
        return None, [], {}
    meta = _read_sidecar(path)
    if meta is None:
        return None, [Damage(kind, key, SIDECAR, "sidecar missing or unreadable")], {}
    damage: list[Damage] = []
    retimed: dict[str, int] = {}
    if meta.get("key", key) != key:
        damage.append(Damage(kind, key, SIDECAR, "sidecar of another key", key, meta["key"]))
    for name, info in meta["files"].items():
        try:
            size, sha = int(info["bytes"]), str(info["sha256"])
        except (KeyError, TypeError, ValueError):
            damage.append(Damage(kind, key, name, "sidecar entry unreadable"))
            continue
        recorded = info.get("mtime_ns")
        try:
            st = (path / name).stat()
            if st.st_size != size:
                damage.append(Damage(kind, key, name, "size changed", size, st.st_size))
                continue
            if full or (recorded is not None and st.st_mtime_ns != recorded):
                found = file_sha256(path / name)
                if found != sha:
                    damage.append(Damage(kind, key, name, "sha256 changed", sha, found))
                    continue
                if st.st_mtime_ns != recorded:
                    retimed[name] = st.st_mtime_ns
        except FileNotFoundError:
            damage.append(Damage(kind, key, name, "file missing", f"{size} bytes", "no file"))
        except OSError as e:
            damage.append(Damage(kind, key, name, "file unreadable", f"{size} bytes", str(e)))
    return meta, damage, retimed


def _record_times(path: Path, meta: dict, retimed: dict[str, int]) -> None:
    """Record the modification times of files whose content was checked (best effort: a
    read-only cache keeps its sidecars, and its changed files are hashed on each read)."""
    for name, mtime in retimed.items():
        meta["files"][name]["mtime_ns"] = mtime
    try:
        _write_atomic(path / SIDECAR, json.dumps(meta, indent=2, sort_keys=True, default=_jsonable))
    except OSError:
        pass


def _rewrite_sidecar(path: Path, meta: dict) -> None:
    """Write ``meta`` as the sidecar of the entry folder ``path`` (best effort: a read-only
    cache keeps its sidecars, and adopts or re-records them on each read)."""
    try:
        _write_atomic(path / SIDECAR, json.dumps(meta, indent=2, sort_keys=True, default=_jsonable))
    except OSError:
        pass


def _identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _same(path: Path, ident: tuple[int, int]) -> bool:
    try:
        return _identity(path) == ident
    except OSError:
        return False


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process not yet reaped by its parent is a zombie: it writes nothing more
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


__all__ = [
    "Artifact",
    "ArtifactCache",
    "CacheIntegrityWarning",
    "Damage",
    "StaleArtifactWarning",
    "Verification",
    "canonical_json",
    "config_hash",
    "content_checksum",
    "default_cache_root",
    "file_sha256",
    "find_book_root",
    "git_commit",
    "library_versions",
]
