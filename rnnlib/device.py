"""Choosing the device: ``"auto"`` means CUDA when present, else the CPU."""

from __future__ import annotations

import torch


def resolve_device(spec: str = "auto", local_rank: int | None = None) -> torch.device:
    """``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` as a :class:`torch.device`.

    Under ``torchrun`` on GPUs, ``local_rank`` picks this process's GPU for ``"auto"``/``"cuda"``.
    """
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if spec == "cuda" and local_rank is not None:
        spec = f"cuda:{local_rank}"
    try:
        device = torch.device(spec)
    except RuntimeError as e:
        raise ValueError(
            f"device {spec!r} is not a device name (use auto, cpu, cuda or cuda:N)"
        ) from e
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {spec!r} asked for, but CUDA is not available here")
    return device
