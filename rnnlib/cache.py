"""The artifact cache: expensive results stored under a key derived from what produced them.

An *artifact* is a folder of files (a checkpoint, decoded outputs, a metric table, ...)
identified by its ``kind`` (``"copy_task/model"``), the JSON-able ``config`` that produced
it and the checksum of the data it was computed from. Its key is a hash of those three, so
changing one parameter recomputes exactly the artifacts whose config contains it.

Layout under the cache root::

    <kind>/<key>/                    a finished artifact: its files and meta.json
    <kind>/<key>/meta.json           the sidecar (config, data checksum, versions, commit, time)
    .tmp/<kind>.<key>.<pid>.<n>/     an artifact being written
    work/<kind>/<key>/               resumable state of an unfinished artifact (checkpoints)

A ``make`` that fails leaves no trace but what it wrote into its work folder: the temporary
folder goes, and so do the work folder and the folders above it when they are empty.

Writes are atomic: ``make`` fills a temporary folder, the sidecar is written last, and one
``rename`` publishes the folder. A process killed at any moment leaves either nothing or a
temporary folder that no reader ever trusts (it is removed the next time the cache opens).
A finished artifact is trusted only if its sidecar parses and every file it lists has the
recorded size.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

# Bump when the meaning of stored artifacts changes in a way configs do not capture.
CACHE_FORMAT = 1
SIDECAR = "meta.json"


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
        """The finished artifact for this config and data, or ``None`` if absent or untrusted."""
        key = self.key(kind, config, data)
        path = self.final_path(kind, key)
        meta = _read_trusted(path)
        if meta is None:
            return None
        return Artifact(kind, key, path, meta, from_cache=True)

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
        the sidecar is written.
        """
        start = time.perf_counter()
        found = self.get(kind, config, data)
        if found is not None:
            self._log(kind, found.key, hit=True, seconds=time.perf_counter() - start)
            return found
        key = self.key(kind, config, data)
        final = self.final_path(kind, key)
        if final.exists():  # present but untrusted: a leftover from an older, broken write
            shutil.rmtree(final, ignore_errors=True)
        tmp_root = self.root / ".tmp"
        tmp = tmp_root / f"{kind.replace('/', '~')}.{key}.{os.getpid()}.{time.monotonic_ns()}"
        tmp.mkdir(parents=True)
        work = self.work_dir(kind, config, data)
        work.mkdir(parents=True, exist_ok=True)
        try:
            extra = make(tmp, work)
            seconds = time.perf_counter() - start
            files = {}
            for p in sorted(tmp.rglob("*")):
                if p.is_file():
                    files[p.relative_to(tmp).as_posix()] = {
                        "bytes": p.stat().st_size,
                        "sha256": file_sha256(p),
                    }
            meta = {
                "kind": kind,
                "key": key,
                "config": config,
                "data_checksum": data,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "wall_time_s": round(seconds, 3),
                "versions": library_versions(),
                "git_commit": git_commit(),
                "cache_format": CACHE_FORMAT,
                "files": files,
                "extra": extra or {},
            }
            _write_atomic(
                tmp / SIDECAR, json.dumps(meta, indent=2, sort_keys=True, default=_jsonable)
            )
            _fsync_dir(tmp)
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(tmp, final)
            except OSError:  # another process published the same artifact first
                if _read_trusted(final) is None:
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
            _fsync_dir(final.parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            _remove_empty(tmp_root, self.root)
            _remove_empty(work, self.root)  # a work folder holding nothing is no resumable state
            raise
        shutil.rmtree(work, ignore_errors=True)
        self._log(kind, key, hit=False, seconds=time.perf_counter() - start)
        return Artifact(kind, key, final, _read_trusted(final) or meta, from_cache=False)

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

    def _log(self, kind: str, key: str, hit: bool, seconds: float) -> None:
        event = {
            "kind": kind,
            "key": key,
            "hit": hit,
            "seconds": round(seconds, 3),
            "chapter": os.environ.get("RNNLIB_CHAPTER"),
        }
        self.events.append(event)
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


def _read_trusted(path: Path) -> dict | None:
    """The sidecar of a finished artifact folder, or ``None`` if anything is off."""
    try:
        meta = json.loads((path / SIDECAR).read_text(encoding="utf-8"))
        for name, info in meta["files"].items():
            if (path / name).stat().st_size != info["bytes"]:
                return None
        return meta
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
    "canonical_json",
    "config_hash",
    "default_cache_root",
    "file_sha256",
    "find_book_root",
    "git_commit",
    "library_versions",
]
