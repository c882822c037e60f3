"""``rnnlib export NAME --to FOLDER``: a model of the book as a self-contained folder.

NAME is resolved as ``rnnlib translate --model NAME`` resolves it (the last build's results and
cache, :mod:`rnnlib.experiments.trained_models`); the folder holds the parameters
(safetensors), the model configuration, both vocabularies, the tokenizer settings, the search
settings of the chapter and the training run's sidecar (:mod:`rnnlib.model_folder`), so that
``rnnlib translate --model FOLDER`` translates on another machine without the cache. Errors are
one line on standard error (with the candidates below it when the name is ambiguous) and exit
status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..model_folder import ModelFolderError, write_folder
from .trained_models import ModelNotFound, resolve
from .translate_command import add_model_arguments

PROG = "rnnlib export"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Write a trained model of the last build as a self-contained folder (weights in "
        "safetensors, model config, vocabularies, tokenizer and search settings, the training "
        "run's sidecar) that 'rnnlib translate --model FOLDER' reads without the cache."
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        help="the book's name of the model (rnnsearch-50, rnnencdec-30, rnnsearch-50*, ...) or "
        "a cache key of a training run",
    )
    parser.add_argument(
        "--to", type=Path, required=True, metavar="FOLDER", help="the folder to write"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace a model folder already at FOLDER"
    )
    add_model_arguments(parser)


def main(args: argparse.Namespace) -> int:
    try:
        tm = resolve(args.name, args.cache, args.out)
        folder = write_folder(tm, args.to, force=args.force)
    except (ModelNotFound, ModelFolderError, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    print(
        f"{folder}: {tm.name} ({tm.about.get('kind')}/{tm.about.get('key')}), {size:.1f} MB; "
        f"translate with: rnnlib translate --model {folder}"
    )
    return 0


__all__ = ["add_arguments", "main"]
