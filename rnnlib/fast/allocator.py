"""Keep freed memory in the process: glibc ``malloc`` settings for training and search on the CPU.

torch's CPU tensors come straight from ``malloc``. With glibc's defaults, a large block
(above a threshold that grows to at most 32 MB) is a fresh ``mmap`` that is unmapped again
when the tensor dies, and the top of the heap is trimmed back to the system. A training step
or a beam-search step allocates the same large tensors again at every step (the ``(N, K)``
logits of the output layer, the ``(B, S, n')`` map of the alignment model), so every step
pays a page fault for every 4 KiB page of them. The settings below remove those faults; what
they save, on single tensors and over whole training and search steps, is measured in
``BENCHMARKS.md``, section "The allocator".

The settings (:data:`SETTINGS`):

- ``M_MMAP_MAX = 0``: large blocks come from the heap, not from ``mmap``;
- ``M_TRIM_THRESHOLD = 1 GiB`` and ``M_TOP_PAD = 64 MiB``: freed memory stays in the process
  for the next step instead of going back to the system.

The cost is that the process keeps its peak heap until it exits (training and search reach
their peak within the first steps and then reuse it). This is what the PyTorch CPU tuning
guides obtain by preloading jemalloc or tcmalloc; glibc's own settings need no library
beyond pip's. Results are unchanged: only where memory comes from changes.

Who sets them: the program entry points, visibly, never a library function as a side effect.
The ``rnnlib`` console script (:mod:`rnnlib.cli`) calls :func:`tune_allocator` for its
``train``, ``bench``, ``build`` and ``run`` commands, and so does ``python -m rnnlib.train``.
``build`` and ``run`` execute chapters in Jupyter kernels (other processes), so for them it
also exports the same settings as glibc tunables (:func:`tunables`, the environment variable
``GLIBC_TUNABLES``), which glibc reads when each kernel process starts.

Set the environment variable ``RNNLIB_MALLOC=system`` to keep glibc's defaults. On systems
without glibc (macOS, Windows, musl) nothing is changed.

**oneDNN's primitive cache** (:func:`bound_primitive_cache`). Under bf16 autocast on a CPU with
bf16 instructions, torch's matrix products go through oneDNN, which compiles a kernel
("primitive") for each shape it meets and keeps up to ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` of
them (oneDNN's default: 1024). Training used to meet a new shape at almost every step (the
output layer ran on the batch's real target tokens, a different count each time), so two
RNNsearch trainings side by side (the rnnsearch chapter's pool) grew without bound and ran a
24 GiB machine out of memory; a small capacity bounded the memory but cost time, each update
compiling again what the cache had dropped.

The fast path now rounds the output layer's row count up to a multiple of 64 under bf16
(:func:`rnnlib.fast.kernels.output_rows`), so a run meets a bounded set of shapes, and the
entry points set the capacity to :data:`PRIMITIVE_CACHE` (2048, enough for all of them) unless
the environment already sets it. The memory and the time of each capacity, before and after
the rounding, are measured in ``BENCHMARKS.md``, section "oneDNN's primitive cache under bf16".
In float32 the matrix products do not go through oneDNN and none of this applies.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_MAX = -1, -2, -4  # glibc <malloc.h>
SETTINGS = {M_MMAP_MAX: 0, M_TRIM_THRESHOLD: 1 << 30, M_TOP_PAD: 64 << 20}
# the same settings as glibc tunables (glibc >= 2.26), for processes started from here
TUNABLES = {
    "glibc.malloc.mmap_max": SETTINGS[M_MMAP_MAX],
    "glibc.malloc.trim_threshold": SETTINGS[M_TRIM_THRESHOLD],
    "glibc.malloc.top_pad": SETTINGS[M_TOP_PAD],
}

#: the oneDNN primitive cache's capacity the entry points set (:func:`bound_primitive_cache`)
PRIMITIVE_CACHE = 2048
PRIMITIVE_CACHE_VAR = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"

_state: dict[str, object] = {}


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # glibc only
        return libc
    except (OSError, AttributeError):
        return None


def _mode() -> str:
    mode = os.environ.get("RNNLIB_MALLOC", "tuned")
    if mode not in ("tuned", "system"):
        raise ValueError(f"RNNLIB_MALLOC={mode!r}: expected 'tuned' (the default) or 'system'")
    return mode


def tunables() -> str:
    """:data:`TUNABLES` in ``GLIBC_TUNABLES`` syntax (``name=value:name=value``)."""
    return ":".join(f"{k}={v}" for k, v in TUNABLES.items())


def tune_allocator(children: bool = False) -> bool:
    """Apply :data:`SETTINGS` to this process (once; safe to call again); True if they are in
    effect.

    ``children``: also put them into ``os.environ["GLIBC_TUNABLES"]`` (added to what it holds),
    so that processes started from now on (chapter kernels) run with them too.
    False (and nothing changed) when ``RNNLIB_MALLOC=system`` or the C library is not glibc.
    """
    if "applied" not in _state:
        libc = _libc() if _mode() == "tuned" else None
        _state["applied"] = libc is not None and all(
            libc.mallopt(k, v) == 1 for k, v in SETTINGS.items()
        )
    if children and _state["applied"]:
        current = os.environ.get("GLIBC_TUNABLES", "")
        if tunables() not in current:
            os.environ["GLIBC_TUNABLES"] = f"{current}:{tunables()}" if current else tunables()
    return bool(_state["applied"])


def allocator_description() -> str:
    """One line for reports: which allocator settings this process runs with."""
    if _state.get("applied"):
        return (
            "glibc malloc, freed memory kept (rnnlib.fast.allocator; "
            "RNNLIB_MALLOC=system turns it off)"
        )
    if tunables() in os.environ.get("GLIBC_TUNABLES", ""):
        return (
            "glibc malloc, freed memory kept (GLIBC_TUNABLES set by the rnnlib command that "
            "started this process; RNNLIB_MALLOC=system turns it off)"
        )
    return "the C library's default malloc settings"


def bound_primitive_cache() -> str:
    """Bound oneDNN's primitive cache (see the module docstring): set the environment variable
    ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` to :data:`PRIMITIVE_CACHE` unless it is already set,
    for this process (oneDNN reads it when it first builds a primitive, so call this before any
    bf16 matrix product) and for the processes it starts (chapter kernels, and the training
    processes they fork). Returns the capacity in effect."""
    return os.environ.setdefault(PRIMITIVE_CACHE_VAR, str(PRIMITIVE_CACHE))
