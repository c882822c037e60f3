"""``rnnlib train --config run.yml``: train a model from a YAML run file (see :func:`rnnlib.train.main`).

Several processes or GPUs: ``torchrun --nproc-per-node N -m rnnlib.train --config run.yml``.
"""
from __future__ import annotations

import argparse


def add_arguments(parser) -> None:
    parser.add_argument("args", nargs=argparse.REMAINDER, help="--config FILE [--set KEY=VALUE ...] [--no-progress]")


def main(args) -> int:
    from ..train import main as train_main
    return train_main(args.args)
