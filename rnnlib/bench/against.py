"""``rnnlib bench --against DIR``: this library against another version of it, interleaved in one
process, on whole training updates and whole beam searches.

``DIR`` holds another checkout's ``rnnlib`` package (``DIR/rnnlib/__init__.py``), for example a
``git worktree`` of an older commit. It is imported under the name ``rnnlib_against``, so both
versions live in one process and their runs alternate one update, or one search, at a time
(ABBA) for ``--seconds``: the machine's drift then hits both arms alike, which separate
processes measured minutes apart do not allow (how far their windows scatter: ``BENCHMARKS.md``,
section "Interleaved comparisons"). This needs the other version's imports of itself to be
relative (``from .search import ...``), as rnnlib's are: a module of it that holds this
checkout's ``rnnlib`` modules or their functions is an error (:func:`check_separate`), not a
silent measurement of this checkout.

Both sides build their ``{profile}-{kind}`` preset with their own code (:mod:`rnnlib.presets`,
``batch.make_batch``/``source_batch``, ``minibatch_order.PoolBatcher``, ``train.make_optimizer``/
``batch_nll``, ``search.beam_search``) on the same synthetic sentences: training on ``--batches``
length-sorted minibatches of ``--batch-size`` pairs (Adadelta and gradient clipping at 1, the
library's defaults), beam search with ``--beam`` on ``--beam-sentences`` sources in one batch, up
to ``--decode-len`` words. The models are untrained: at the ``cpu`` sizes both sides' searches run
to the length limit (the same steps); at the ``smoke`` sizes of ``--quick`` they may not, and the
figures only show that the comparison runs.

If the other version reads sources without the end-of-sentence token this one appends (an older
source layout, before ``EOS`` was appended to every source), a third arm runs it on the sources
with ``EOS`` appended: the same work, which separates the code's speed from the model change.

Figures: target tokens/s (training), sentences/s (search), and this version's rate over the
other's for the whole run and as the median over the adjacent pairs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import torch

from .. import presets as this_presets
from .workload import synthetic_pairs, train_step_fn

ALIAS = "rnnlib_against"


def load_other(folder: Path) -> ModuleType:
    """The ``rnnlib`` package in ``folder`` imported as :data:`ALIAS` (a clear error if there is
    none)."""
    init = Path(folder) / "rnnlib" / "__init__.py"
    if not init.is_file():
        raise SystemExit(f"--against {folder}: no rnnlib package there (expected {init})")
    if ALIAS in sys.modules:
        loaded = Path(sys.modules[ALIAS].__file__).resolve()
        if loaded != init.resolve():
            raise SystemExit(
                f"--against {folder}: {ALIAS} is already loaded from {loaded} in this process"
            )
        return sys.modules[ALIAS]
    spec = importlib.util.spec_from_file_location(
        ALIAS, init, submodule_search_locations=[str(init.parent)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[ALIAS] = module
    try:
        spec.loader.exec_module(module)
    except Exception:
        del sys.modules[ALIAS]
        raise
    return module


MODULES = ("presets", "batch", "minibatch_order", "ragged", "train", "search", "specials")
# former names of modules, tried when another version of rnnlib predates a rename
FORMER_NAMES = {"minibatch_order": "batching"}


def import_either(package: str, mod: str):
    """``package.mod``, or its former name in a version of rnnlib from before the rename."""
    try:
        return importlib.import_module(f"{package}.{mod}")
    except ModuleNotFoundError as e:
        if mod not in FORMER_NAMES or e.name != f"{package}.{mod}":
            raise
        return importlib.import_module(f"{package}.{FORMER_NAMES[mod]}")


class Side:
    """One library version's modules: :data:`MODULES`."""

    def __init__(self, name: str, package: str | None = None) -> None:
        self.name = name
        for mod in MODULES:
            setattr(self, mod, import_either(package or "rnnlib", mod))

    def model(self, preset: str) -> torch.nn.Module:
        torch.manual_seed(0)
        return self.presets.build_model(self.presets.preset(preset))

    def appends_eos(self) -> bool:
        """Whether this version's ``source_batch`` ends each source with ``EOS``."""
        b = self.batch.source_batch([np.array([5, 6])])
        return b.src.shape[1] == 3 and int(b.src[0, 2]) == self.specials.EOS


def check_separate(package: str = ALIAS) -> None:
    """Stop with the module's name if a loaded module of ``package`` refers to this checkout's
    ``rnnlib`` (an absolute ``import rnnlib...`` in the other version: its arm would run our
    code)."""
    for name, module in list(sys.modules.items()):
        if name != package and not name.startswith(package + "."):
            continue
        for attr, value in vars(module).items():
            owner = (
                value.__name__
                if isinstance(value, ModuleType)
                else getattr(value, "__module__", None)
            )
            if isinstance(owner, str) and (owner == "rnnlib" or owner.startswith("rnnlib.")):
                raise SystemExit(
                    f"--against: {name}.{attr} is this checkout's {owner}, not the other version's "
                    "(it imports rnnlib absolutely); the comparison would time this checkout twice"
                )


def _sentences(pairs, side: Side, add_eos: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Sources and targets of :func:`~rnnlib.bench.workload.synthetic_pairs` as lists, the sources
    with ``side``'s EOS appended if ``add_eos``."""
    src = [pairs.src[i] for i in range(len(pairs.src))]
    if add_eos:
        src = [np.append(s, side.specials.EOS) for s in src]
    return src, [pairs.tgt[i] for i in range(len(pairs.tgt))]


def training_arm(side: Side, preset: str, args, add_eos: bool):
    """``(one_update, target tokens per update)`` for ``side``'s model and minibatches."""
    model = side.model(preset)
    cfg = model.config
    src, tgt = _sentences(
        synthetic_pairs(
            args.batch_size * args.batches,
            cfg.src_vocab,
            cfg.tgt_vocab,
            args.min_len,
            args.max_len,
            seed=1,
        ),
        side,
        add_eos,
    )
    R = side.ragged
    pairs = R.ParallelArrays(R.Ragged.from_lists(src), R.Ragged.from_lists(tgt))
    index = side.minibatch_order.PoolBatcher(
        pairs.src.lengths, pairs.tgt.lengths, args.batch_size, args.batches, seed=1
    ).pool_batches(0)
    batches = [side.batch.make_batch(pairs, i) for i in index]
    update, _ = train_step_fn(model, batches, train_module=side.train)
    return update, sum(b.n_target_tokens for b in batches) / len(batches)


def search_arm(side: Side, preset: str, args, add_eos: bool):
    """``(one_search, sentences per search)`` for ``side``'s model."""
    model = side.model(preset).eval()
    cfg = model.config
    src, _ = _sentences(
        synthetic_pairs(
            args.beam_sentences, cfg.src_vocab, cfg.tgt_vocab, args.min_len, args.max_len, seed=2
        ),
        side,
        add_eos,
    )
    b = side.batch.source_batch(src)

    def search() -> None:
        with torch.no_grad():
            side.search.beam_search(
                model, b.src, b.src_mask, beam_size=args.beam, max_len=args.decode_len
            )

    return search, len(src)


def interleaved(arms: dict, seconds: float, min_rounds: int = 2) -> dict[str, list[float]]:
    """Seconds of each call of every arm, the arms alternating ABBA (after one warm-up call
    each)."""
    for fn, _ in arms.values():
        fn()
    names = list(arms)
    times: dict[str, list[float]] = {n: [] for n in names}
    t0, rounds = time.perf_counter(), 0
    while rounds < min_rounds or time.perf_counter() - t0 < seconds:
        for n in names + names[::-1]:
            t = time.perf_counter()
            arms[n][0]()
            times[n].append(time.perf_counter() - t)
        rounds += 1
    return times


def report(
    kind: str, what: str, unit: str, arms: dict, times: dict[str, list[float]]
) -> list[dict]:
    rows = []
    this = times["this"]
    for name, (_, per_call) in arms.items():
        t = times[name]
        row = {
            "model": kind,
            "measure": what,
            "arm": name,
            "rate": per_call * len(t) / sum(t),
            "calls": len(t),
        }
        if name != "this":
            row["this_over_arm"] = sum(t) / sum(this)
            row["this_over_arm_median_pair"] = statistics.median(a / b for a, b in zip(t, this))
        rows.append(row)
        ratio = (
            (
                f"  this / {name}: {row['this_over_arm']:.3f} whole run, "
                f"{row['this_over_arm_median_pair']:.3f} median pair"
            )
            if name != "this"
            else ""
        )
        print(f"  {what:5s} {name:24s} {row['rate']:10.1f} {unit:7s} ({len(t)} calls){ratio}")
    return rows


def main(args: argparse.Namespace, kinds: list[str]) -> list[dict]:
    """Run the comparison for ``kinds``; print and return one row per model, measure and arm."""
    other_pkg = load_other(args.against)
    this, other = Side("this"), Side("against", ALIAS)
    check_separate()
    other_eos = other.appends_eos()
    eos_note = (
        "sources end in EOS on both"
        if other_eos
        else "its sources have no EOS: an equal-work arm adds it"
    )
    print(
        f"this rnnlib: {Path(this_presets.__file__).parent.parent}; "
        f"against: {Path(other_pkg.__file__).parent.parent} ({eos_note})"
    )
    rows = []
    for kind in kinds:
        preset = f"{args.profile}-{kind}"
        print(f"\n{preset} (arms alternate ABBA, one call at a time, {args.seconds:g} s)")
        for what, unit, make in (("train", "tok/s", training_arm), ("beam", "sent/s", search_arm)):
            arms = {
                "this": make(this, preset, args, False),
                "against": make(other, preset, args, False),
            }
            if not other_eos:
                arms["against, sources + EOS"] = make(other, preset, args, True)
            rows += report(kind, what, unit, arms, interleaved(arms, args.seconds))
    return rows
