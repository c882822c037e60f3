"""Speed: every trick that makes training and search faster, behind one boundary.

The model modules (:mod:`rnnlib.gru`, :mod:`rnnlib.attention`, :mod:`rnnlib.encoders`,
:mod:`rnnlib.decoders`, :mod:`rnnlib.loss`) are the papers' equations as printed. This package
computes the same numbers faster, from the same parameters (each trick kept for a measured
gain; the measurements, and the tricks dropped for lack of one, in ``BENCHMARKS.md``):

- :mod:`rnnlib.fast.kernels`: :class:`~rnnlib.fast.kernels.FastModel`, the models' fast path;
- :mod:`rnnlib.fast.softmax`: search's log-softmax in place;
- :mod:`rnnlib.fast.precision`: bf16 autocast and :func:`~rnnlib.fast.precision.bf16_error`;
- :mod:`rnnlib.fast.allocator`: glibc ``malloc`` settings, chosen at the program entry points.

Training (:mod:`rnnlib.train`) and search (:mod:`rnnlib.search`) use the fast path by default;
``TrainConfig(fast=False)`` and ``fast=False`` of the search functions run the plain modules.
``tests/test_fast.py`` checks that both give the same numbers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "FastModel": "kernels",
    "wrap": "kernels",
    "log_softmax_": "softmax",
    "autocast": "precision",
    "bf16_error": "precision",
    "tune_allocator": "allocator",
}


def __getattr__(name: str):
    """``rnnlib.fast.X`` for the names above, importing their module on first use (so the
    console script can set the allocator without importing torch)."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
