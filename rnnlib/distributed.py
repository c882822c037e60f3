"""Several processes through ``torchrun``: process-group set-up and small collectives.

``torchrun --nproc-per-node N`` sets ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``; :func:`setup`
then joins the process group (``nccl`` when CUDA is present, ``gloo`` on the CPU). Without
those variables everything runs as a single process and the collectives are no-ops.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int | None = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.size > 1


def setup() -> World:
    """Join the process group if ``torchrun`` started us (idempotent)."""
    if dist.is_available() and dist.is_initialized():
        return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0)))
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend)
    return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0)))


def all_sum(values: list[float], world: World, device: torch.device) -> list[float]:
    """Sum a few numbers over all processes (float64)."""
    if not world.active:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.tolist()


def gather_object(obj, world: World) -> list | None:
    """Every process's ``obj`` (picklable), in rank order, on rank 0; ``None`` on the others."""
    if not world.active:
        return [obj]
    out = [None] * world.size if world.is_main else None
    dist.gather_object(obj, out, dst=0)
    return out


def barrier(world: World) -> None:
    if world.active:
        dist.barrier()


def shard(indices, world: World):
    """This process's share of a global minibatch: every ``size``-th pair from ``rank``.

    The pools are length-sorted, so striding gives each process pairs of similar lengths.
    """
    return indices[world.rank :: world.size]
