"""Checkpoint files: written atomically, read back without unpickling arbitrary objects.

Training (:mod:`rnnlib.train`) and the book's chapters use these two functions; neither needs
the book's artifact cache. A checkpoint is a dict of tensors, numbers, strings and lists (the
model and optimiser state, random-number states, the training history and the config).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch


def save_atomic(obj: Any, path: Path) -> None:
    """``torch.save`` to ``path`` through a temporary file, fsync and ``os.replace``.

    A reader never sees a half-written file: an interrupted save leaves the previous
    checkpoint in place (and a ``*.part`` file that the next save overwrites).
    """
    path = Path(path)
    tmp = path.with_name(path.name + f".{os.getpid()}.part")
    torch.save(obj, tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> Any:
    """Load a checkpoint written by :func:`save_atomic`, with ``weights_only=True``."""
    return torch.load(path, map_location=map_location, weights_only=True)
