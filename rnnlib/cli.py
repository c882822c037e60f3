"""The ``rnnlib`` console script.

Each sub-command lives in its own module, which provides ``add_arguments(parser)`` and
``main(args) -> int``; the module is imported only when its command runs, so
``rnnlib --help`` stays fast and a command's heavy dependencies load only for it.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

# command -> (module, one-line help)
COMMANDS = {
    "run": ("rnnlib.book.commands.run", "execute one chapter under a profile"),
    "build": ("rnnlib.book.commands.build", "execute every chapter, then build the HTML book"),
    "params": ("rnnlib.book.commands.params", "list a chapter's parameters and what they accept"),
    "train": ("rnnlib.train", "train a model from a YAML run file (resumable; torchrun-aware)"),
    "bench": ("rnnlib.bench.nmt", "speed and memory benchmarks against reference implementations"),
    "corpus": ("rnnlib.corpus.cli", "prepare the parallel corpus and print its statistics"),
    "smt-bench": (
        "rnnlib.bench.smt",
        "decoding speed of the phrase-based baseline on its cached artifacts",
    ),
    "compare": ("rnnlib.book.compare", "compare two builds: changed verdicts, moved numbers"),
    "publish": (
        "rnnlib.book.published",
        "write the published reference (records/published) from a finished build",
    ),
    "cache": (
        "rnnlib.experiments.cache_command",
        "the artifact cache: verify (hash every entry, quarantine what fails), ls, du, gc, clean",
    ),
    "translate": (
        "rnnlib.experiments.translate_command",
        "translate text, one sentence a line, with a trained model of the book or a model folder",
    ),
    "spread": (
        "rnnlib.experiments.spread_command",
        "compute one replicate of the rebuild spread and write it as a record (records/spread)",
    ),
    "study": (
        "rnnlib.experiments.study_command",
        "run the study of RNNencdec-50's recipe and write it as a record (records/study)",
    ),
    "export": (
        "rnnlib.experiments.export_command",
        "write a trained model of the book as a self-contained folder (safetensors, vocabularies)",
    ),
}

# commands whose module's ``main(argv)`` parses its own arguments
PASSTHROUGH = {"train": "rnnlib.train", "smt-bench": "rnnlib.bench.smt"}

# commands that train or decode models -> whether they start other processes that do
# (chapter kernels)
MODEL_COMMANDS = {
    "spread": False,
    "study": False,
    "train": False,
    "bench": False,
    "build": True,
    "run": True,
    "translate": False,
}


def choose_allocator(command: str | None) -> bool:
    """The malloc settings of :mod:`rnnlib.fast.allocator` for a command that runs models: for this
    process, and for ``build``/``run`` also for the chapter kernels they start (``GLIBC_TUNABLES``).
    ``RNNLIB_MALLOC=system`` keeps the C library's defaults. True if the settings are in effect.
    Whatever the malloc settings, oneDNN's primitive cache is bounded for this process and the
    ones it starts (:func:`rnnlib.fast.allocator.bound_primitive_cache`)."""
    if command not in MODEL_COMMANDS:
        return False
    from .fast.allocator import bound_primitive_cache, tune_allocator

    bound_primitive_cache()
    return tune_allocator(children=MODEL_COMMANDS[command])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rnnlib", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"rnnlib {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    argv = sys.argv[1:] if argv is None else argv
    wanted = argv[0] if argv and argv[0] in COMMANDS else None
    choose_allocator(wanted)
    if wanted in PASSTHROUGH:  # the command parses its own arguments
        return int(importlib.import_module(PASSTHROUGH[wanted]).main(argv[1:]) or 0)
    modules = {}
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        if name == wanted:  # only the chosen command's module is imported
            modules[name] = importlib.import_module(module)
            modules[name].add_arguments(p)
    args = parser.parse_args(argv)
    return int(modules[args.command].main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
