"""``rnnlib bench``: training and beam-search speed, memory and FLOP utilisation, side by side
with the straightforward reference of :mod:`rnnlib.bench.reference`, in the same process.

For each model (RNNsearch, RNNencdec) at a preset's size it prints

- training target tokens per second (Adadelta updates with gradient clipping on length-sorted
  minibatches of synthetic pairs, the same step :mod:`rnnlib.train` takes);
- beam-search sentences per second (the library's batched :func:`rnnlib.search.beam_search`
  against one-sentence-at-a-time :func:`rnnlib.bench.reference.beam_search_one`);
- peak memory: the growth of the resident set size (``VmRSS`` from ``/proc/self/statm``,
  sampled every 2 ms by a thread, above its level when the measurement starts, after
  ``gc.collect`` and ``malloc_trim``) during two repetitions of the measured operation; the
  process's lifetime peak (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is printed at the end;
- model FLOP utilisation (MFU): the model's matrix-multiply FLOPs per training token, counted
  analytically from the architecture (:func:`forward_flops`; backward = 2 x forward), times
  tokens per second, over the machine's fp32 ``torch.mm`` rate measured in the same run,
  interleaved with the training steps (so other load on the machine affects both alike).

  The FLOPs counted are the model's matrix products only (see :func:`forward_flops`); with
  ``--bf16`` the bf16 run's MFU is printed against both the fp32 and the bf16 ``torch.mm`` rates.

Every pair of measurements alternates the library and the reference step by step
(:func:`timed_group`), so their ratio holds even when the machine's load changes.

Both sides run in one process, so both run with the allocator setting that the ``rnnlib``
console script chose (:mod:`rnnlib.fast.allocator`; printed; ``RNNLIB_MALLOC=system`` runs both
with glibc's defaults).
The ``torch.mm`` rates at the model's own shapes (one decoder step's product of the state, one
row per sentence; the output layer, one row per target token) show how far below the
square-matrix rate these products run on the machine: the MFU a model made of them can reach.

Beam search decodes copies of the models taken BEFORE the training measurement (their
initialisation), so both sides decode the same sentences with untrained models that rarely
meet ``EOS``: every hypothesis runs to ``--decode-len`` words plus the final step, in both
implementations alike (the library's ``max_len=L`` allows ``L`` words and a forced ``EOS``
step; the reference is given ``L + 1`` steps). The hypothesis-steps each side computed per
sentence are printed, so the workloads can be compared.
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import gc
import json
import os
import resource
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..fast.allocator import allocator_description
from ..fast.kernels import FastModel
from ..fast.precision import cpu_bf16_instructions
from ..batch import make_batch, source_batch
from ..minibatch_order import PoolBatcher
from ..specials import EOS
from .workload import synthetic_pairs, train_step_fn

KINDS = ("rnnsearch", "rnnencdec")


# ---------------------------------------------------------------------------------------------
# sizes and FLOPs


@dataclass(frozen=True)
class Dims:
    """``m`` embedding, ``n`` hidden, ``l`` maxout units, ``a`` alignment units, ``V`` target
    vocabulary."""

    kind: str
    m: int
    n: int
    l: int
    a: int
    V: int
    Vs: int


def forward_flops(d: Dims, src_len: int, tgt_len: int) -> int:
    """Matrix-multiply FLOPs (2 per multiply-add) of one teacher-forced forward pass of one pair.

    ``src_len`` source tokens (words + ``EOS``); ``tgt_len`` decoder steps (target words +
    ``EOS``). Element-wise work (gates, tanh, softmax normalisation, maxout) is not counted.
    RNNsearch (B A.2): two encoder GRUs, ``U_a h_j`` once per word, ``s_0``; per step ``W_a s``,
    the energies ``v_a^T tanh(.)`` and the context over ``S`` words, the GRU on ``[E y; c]``, the
    deep output ``[U_o V_o C_o]`` and ``W_o``. RNNencdec (A App. A): one encoder GRU, ``c``,
    ``s_0``, ``C c`` (the same every step, so once); per step the GRU, the deep output and ``W_o``.
    """
    m, n, l, a, V = d.m, d.n, d.l, d.a, d.V
    S, T = src_len, tgt_len
    gru = lambda inp: 2 * inp * 3 * n + 2 * n * 3 * n  # noqa: E731
    if d.kind == "rnnsearch":
        enc = 2 * S * gru(m) + S * 2 * (2 * n) * a + 2 * n * n
        step = (
            2 * n * a
            + 2 * S * a
            + 2 * S * 2 * n
            + gru(m + 2 * n)
            + 2 * (n + m + 2 * n) * 2 * l
            + 2 * l * V
        )
    else:
        # C c enters every step's gates but is the same product each step: counted once
        enc = S * gru(m) + 2 * n * n + 2 * n * n + 2 * n * 3 * n
        step = gru(m) + 2 * (n + m + n) * 2 * l + 2 * l * V
    return enc + T * step


def batch_train_flops(d: Dims, src_lengths, tgt_lengths) -> int:
    """Training FLOPs of a minibatch: 3 x forward (the backward pass costs twice the forward)."""
    return 3 * sum(
        forward_flops(d, int(s) + 1, int(t) + 1) for s, t in zip(src_lengths, tgt_lengths)
    )


def matmul_rate(seconds: float, size: int = 2048, dtype=torch.float32) -> float:
    """The machine's measured ``torch.mm`` rate in FLOP/s (square ``size`` matrices)."""
    fn, flops = matmul_fn(size, dtype=dtype)
    reps, dt = timed(fn, seconds)
    return flops * reps / dt


# ---------------------------------------------------------------------------------------------
# models


def build_pair(kind: str, profile: str, vocab: int | None):
    """``(model, reference, dims, preset name)`` of the same sizes, from :mod:`rnnlib.presets`."""
    from .. import presets

    name = f"{profile}-{kind}"
    kwargs = {} if vocab is None else {"src_vocab": vocab, "tgt_vocab": vocab}
    cfg = presets.preset(name, **kwargs)
    model = presets.build_model(cfg)
    d = dims_of(kind, cfg)
    from .reference import ReferenceRNNEncDec, ReferenceRNNSearch

    if kind == "rnnsearch":
        ref = ReferenceRNNSearch(d.Vs, d.V, d.m, d.n, d.l, d.a)
    else:
        ref = ReferenceRNNEncDec(d.Vs, d.V, d.m, d.n, d.l)
    return model, ref, d, name


def dims_of(kind: str, cfg) -> Dims:
    get = lambda *names: next(getattr(cfg, k) for k in names if hasattr(cfg, k))  # noqa: E731
    return Dims(
        kind,
        m=get("emb", "embedding", "emb_dim"),
        n=get("hidden", "hidden_size"),
        l=get("maxout", "maxout_units"),
        a=get("align", "align_hidden", "attention") if kind == "rnnsearch" else 0,
        V=get("tgt_vocab"),
        Vs=get("src_vocab"),
    )


# ---------------------------------------------------------------------------------------------
# measurement helpers


def timed(fn, seconds: float, min_reps: int = 2) -> tuple[int, float]:
    """Run ``fn`` (after one warm-up call) until ``seconds`` passed and ``min_reps`` calls were
    made."""
    fn()
    reps, t0 = 0, time.perf_counter()
    while True:
        fn()
        reps += 1
        dt = time.perf_counter() - t0
        if dt >= seconds and reps >= min_reps:
            return reps, dt


def timed_group(fns, seconds: float, min_reps: int = 2) -> list[tuple[int, float]]:
    """Alternate the functions ``fns`` (after a warm-up call of each) until each ran ``min_reps``
    times and ``len(fns) * seconds`` passed in all; returns ``(reps, seconds)`` of each.

    Alternating makes ratios robust to other load on the machine changing during the run.
    """
    for fn in fns:
        fn()
    reps, spent = [0] * len(fns), [0.0] * len(fns)
    while True:
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            spent[k] += time.perf_counter() - t0
            reps[k] += 1
        if sum(spent) >= len(fns) * seconds and min(reps) >= min_reps:
            return list(zip(reps, spent))


def bf16_mm_size(args) -> int:
    """The matrix size of the bf16 rate measurement: ``--mm-size``, capped at 512 when the CPU has
    no bf16 instructions (an emulated 2048 product takes about a minute)."""
    return args.mm_size if cpu_bf16_instructions() else min(args.mm_size, 512)


def matmul_fn(m: int, k: int | None = None, n: int | None = None, dtype=torch.float32):
    """A ``torch.mm`` of an ``(m, k)`` by a ``(k, n)`` matrix (square ``m`` when ``k``, ``n`` are
    omitted; fp32 by default), and its FLOPs."""
    k, n = (m if k is None else k), (m if n is None else n)
    a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
    return (lambda: torch.mm(a, b)), 2 * m * k * n


def model_shapes(d: Dims, batch: int, tokens: int) -> dict[str, tuple[int, int, int]]:
    """The ``(m, k, n)`` of two products the training step is made of: the decoder step's
    product of the state (``[W_a; U_r; U_z]`` for RNNsearch, ``[U_r; U_z; U]`` for RNNencdec, one
    row per sentence) and the output layer ``W_o`` (one row per target token)."""
    q = d.a + 2 * d.n if d.kind == "rnnsearch" else 3 * d.n
    return {"decoder step": (batch, d.n, q), "output layer": (tokens, d.l, d.V)}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _trim() -> None:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def peak_rss_growth(fn, reps: int = 2) -> int:
    """Bytes of resident-set growth while ``fn`` runs ``reps`` times (2 ms sampling)."""
    _trim()
    base = peak = _rss()
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _rss())
            time.sleep(0.002)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    try:
        for _ in range(reps):
            fn()
    finally:
        stop.set()
        th.join()
    return max(peak, _rss()) - base


@dataclass
class Side:
    train_tok_s: float = 0.0
    train_flop_s: float = 0.0
    train_mem: int = 0
    beam_sent_s: float = 0.0
    beam_mem: int = 0
    beam_steps: float = 0.0  # hypothesis-steps (decoder rows) per sentence
    bf16_tok_s: float | None = None
    bf16_flop_s: float | None = None
    bf16_beam_sent_s: float | None = None


@dataclass
class ModelReport:
    kind: str
    preset: str
    dims: dict
    flops_per_token: float
    rnnlib: Side = field(default_factory=Side)
    reference: Side = field(default_factory=Side)
    bf16_nll: dict | None = None
    profile: str | None = None
    mm_flop_s: float = 0.0  # fp32 torch.mm rate measured interleaved with the training steps
    mm_bf16_flop_s: float | None = None  # the same for bf16 (with --bf16)
    shape_flop_s: dict = field(default_factory=dict)  # torch.mm rate at the model's own shapes


def bench_model(kind: str, args, peak: float) -> ModelReport:
    """Measure one model (``kind``) against its reference implementation: training throughput
    and memory, the bf16 agreement (with ``--bf16``), beam search, and an operator profile (with
    ``--profile-ops``)."""
    model, ref, d, name = build_pair(kind, args.profile, args.vocab)
    beam_model, beam_ref = (
        copy.deepcopy(model).eval(),
        copy.deepcopy(ref).eval(),
    )  # untrained, for search
    batches, tokens, flops = _training_batches(args, d)
    rep = ModelReport(kind, name, asdict(d), flops_per_token=sum(flops) / sum(tokens))
    _bench_training(rep, model, ref, d, batches, tokens, flops, args)
    if args.bf16:
        rep.bf16_nll = bf16_agreement(
            lambda: build_pair(kind, args.profile, args.vocab)[0], batches, args.bf16_updates
        )
    _bench_search(rep, beam_model, beam_ref, d, args)
    if args.profile_ops:
        rep.profile = _op_profile(beam_model, batches, args.profile_ops)
    return rep


def _training_batches(args, d: Dims) -> tuple[list, list[int], list[float]]:
    """The training minibatches of the benchmark (one pool of synthetic pairs, seed 1), the
    target tokens and the FLOPs of each."""
    data = synthetic_pairs(
        args.batch_size * args.batches, d.Vs, d.V, args.min_len, args.max_len, seed=1
    )
    batcher = PoolBatcher(data.src.lengths, data.tgt.lengths, args.batch_size, args.batches, seed=1)
    index = batcher.pool_batches(0)
    batches = [make_batch(data, i) for i in index]
    tokens = [b.n_target_tokens for b in batches]
    flops = [batch_train_flops(d, data.src.lengths[i], data.tgt.lengths[i]) for i in index]
    return batches, tokens, flops


def _bench_training(rep: ModelReport, model, ref, d: Dims, batches, tokens, flops, args) -> None:
    """Time the training steps of both sides interleaved with ``torch.mm`` at a square size and
    at the model's own shapes (and in bf16, with ``--bf16``); then each side's memory growth."""
    steps = {}
    for side, net in (("rnnlib", model), ("reference", ref)):
        net.train()
        steps[side] = train_step_fn(net, batches)[0]
    mm, mm_flops = matmul_fn(args.mm_size)
    shapes = model_shapes(d, args.batch_size, round(sum(tokens) / len(tokens)))
    shaped = {label: matmul_fn(*mkn) for label, mkn in shapes.items()}
    group = [steps["rnnlib"], steps["reference"], mm]
    if args.bf16:
        bf16_mm, bf16_mm_flops = matmul_fn(bf16_mm_size(args), dtype=torch.bfloat16)
        group += [train_step_fn(model, batches, bf16=True)[0], bf16_mm]
    group += [fn for fn, _ in shaped.values()]  # last: timings[-len(shaped):]
    timings = timed_group(group, args.seconds)
    mm_reps, mm_dt = timings[2]
    rep.mm_flop_s = mm_reps * mm_flops / mm_dt
    for (label, (_, fl)), (reps, dt) in zip(shaped.items(), timings[-len(shaped) :]):
        m, k, n = shapes[label]
        rep.shape_flop_s[f"{label} ({m}x{k} by {k}x{n})"] = reps * fl / dt
    if args.bf16:
        reps, dt = timings[3]
        rep.rnnlib.bf16_tok_s = sum(tokens[k % len(batches)] for k in range(1, reps + 1)) / dt
        rep.rnnlib.bf16_flop_s = sum(flops[k % len(batches)] for k in range(1, reps + 1)) / dt
        mm_reps, mm_dt = timings[4]
        rep.mm_bf16_flop_s = mm_reps * bf16_mm_flops / mm_dt
    for side, (reps, dt) in zip(("rnnlib", "reference"), timings[:2]):
        out: Side = getattr(rep, side)
        done = range(1, reps + 1)  # the warm-up call used batch 0
        out.train_tok_s = sum(tokens[k % len(batches)] for k in done) / dt
        out.train_flop_s = sum(flops[k % len(batches)] for k in done) / dt
        out.train_mem = peak_rss_growth(steps[side])


def _bench_search(rep: ModelReport, model, ref, d: Dims, args) -> None:
    """Time beam search of both (untrained) sides on synthetic sources (seed 2), their memory
    growth, the bf16 search (with ``--bf16``), and the hypothesis-steps each computes."""
    from .reference import beam_search_one
    from ..search import beam_search

    src_data = synthetic_pairs(
        args.beam_sentences, d.Vs, d.V, args.min_len, args.max_len, seed=2
    ).src
    sources = [torch.as_tensor(src_data[i], dtype=torch.int64) for i in range(len(src_data))]
    ref_sources = [torch.cat([s, torch.tensor([EOS])]) for s in sources]  # source_batch appends EOS

    def run_lib(bf16: bool = False):
        with torch.no_grad():
            for i in range(0, len(sources), args.beam_batch):
                b = source_batch(sources[i : i + args.beam_batch])
                beam_search(
                    model,
                    b.src,
                    b.src_mask,
                    beam_size=args.beam,
                    max_len=args.decode_len,
                    bf16=bf16,
                )

    def run_ref():
        for s in ref_sources:  # decode_len words + the step that may end with EOS, as the library
            beam_search_one(ref, s, args.beam, args.decode_len + 1)

    fns = [run_lib, run_ref] + ([lambda: run_lib(bf16=True)] if args.bf16 else [])
    timings = timed_group(fns, args.seconds, min_reps=1)
    for side, fn, (reps, dt) in zip(("rnnlib", "reference"), (run_lib, run_ref), timings):
        out = getattr(rep, side)
        out.beam_sent_s = reps * len(sources) / dt
        out.beam_mem = peak_rss_growth(fn, reps=1)
    if args.bf16:
        reps, dt = timings[2]
        rep.rnnlib.bf16_beam_sent_s = reps * len(sources) / dt
    # the library's search steps through the fast path (rnnlib.fast.kernels.FastModel.step)
    rep.rnnlib.beam_steps, rep.reference.beam_steps = (
        _count_rows(FastModel, run_lib, len(sources)),
        _count_rows(ref, run_ref, len(sources)),
    )


def _op_profile(model, batches, row_limit: int) -> str:
    """torch.profiler's table of two training steps of ``model`` (after one warm-up), by self CPU
    time, ``row_limit`` rows."""
    model.train()
    step, _ = train_step_fn(model, batches)
    step()
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            step()
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=row_limit)


def _count_rows(owner, run, n_sentences: int) -> float:
    """Hypothesis-steps (rows of all ``step`` calls) per sentence that ``run()`` computes through
    ``owner.step``: ``owner`` is a model, or a class whose instances ``run`` creates."""
    count = [0]
    plain = owner.step

    def counting(*args):
        prev = args[1] if isinstance(owner, type) else args[0]  # (self,) prev_word, state, enc
        count[0] += prev.shape[0]
        return plain(*args)

    owner.step = counting
    try:
        run()
    finally:
        if isinstance(owner, type):
            owner.step = plain
        else:
            del owner.step
    return count[0] / n_sentences


def bf16_agreement(make_model, batches, updates: int) -> dict:
    """NLL per token over ``updates`` updates from a fresh model, fp32 against bf16 autocast.

    The yardstick of "fp32 noise" is the gap between two fp32 runs that differ only in the
    initialisation seed. ``make_model()`` builds a fresh model from the current torch seed.
    """
    curves = {}
    for name, seed, bf16 in (("fp32", 0, False), ("fp32_seed1", 1, False), ("bf16", 0, True)):
        torch.manual_seed(seed)
        m = make_model()
        m.train()
        step, st = train_step_fn(m, batches, bf16=bf16)
        for _ in range(updates):
            step()
        curves[name] = np.array(st["nll"])
    a = curves["fp32"]
    gap = lambda c: float(np.max(np.abs(c - a) / np.abs(a)))  # noqa: E731
    return {
        "updates": updates,
        "fp32_first": float(a[0]),
        "fp32_last": float(a[-1]),
        "bf16_last": float(curves["bf16"][-1]),
        "max_rel_diff": gap(curves["bf16"]),
        "seed_rel_diff": gap(curves["fp32_seed1"]),
    }


# ---------------------------------------------------------------------------------------------
# the command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile", default="cpu", help="preset size prefix: cpu, smoke or paper (default cpu)"
    )
    p.add_argument("--models", default=",".join(KINDS), help="comma-separated: rnnsearch,rnnencdec")
    p.add_argument(
        "--vocab", type=int, default=None, help="vocabulary size (default: the preset's)"
    )
    p.add_argument("--batch-size", type=int, default=80, help="training minibatch (default 80)")
    p.add_argument(
        "--batches",
        type=int,
        default=4,
        help="distinct length-sorted minibatches cycled (default 4)",
    )
    p.add_argument(
        "--min-len", type=int, default=10, help="shortest synthetic sentence (default 10)"
    )
    p.add_argument(
        "--max-len", type=int, default=30, help="longest synthetic sentence (default 30)"
    )
    p.add_argument("--beam", type=int, default=10, help="beam size (default 10)")
    p.add_argument(
        "--beam-sentences",
        type=int,
        default=80,
        help="sentences decoded per repetition (default 80)",
    )
    p.add_argument(
        "--beam-batch", type=int, default=80, help="sentences per batched beam search (default 80)"
    )
    p.add_argument("--decode-len", type=int, default=30, help="maximum output length (default 30)")
    p.add_argument(
        "--seconds", type=float, default=10.0, help="time budget of each measurement (default 10)"
    )
    p.add_argument(
        "--mm-size",
        type=int,
        default=2048,
        help="matrix size of the fp32 rate measurement (default 2048)",
    )
    p.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's choice)"
    )
    p.add_argument(
        "--bf16", action="store_true", help="also train under bf16 autocast and compare the loss"
    )
    p.add_argument(
        "--bf16-updates", type=int, default=10, help="updates of the fp32/bf16 loss comparison"
    )
    p.add_argument(
        "--profile-ops",
        type=int,
        default=0,
        metavar="N",
        help="print the N operators taking the most time in two training updates",
    )
    p.add_argument("--quick", action="store_true", help="tiny sizes and budgets (for tests)")
    p.add_argument(
        "--json", type=Path, default=None, help="also write the figures to this JSON file"
    )
    p.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="DIR",
        help="instead: compare with the rnnlib package in DIR (another checkout), interleaved "
        "in one process on whole training updates and beam searches (rnnlib.bench.against)",
    )


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.2f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def print_report(r: ModelReport, peak: float, beam: int) -> None:
    d = r.dims
    size = (
        f"m={d['m']} n={d['n']} l={d['l']}"
        + (f" n'={d['a']}" if r.kind == "rnnsearch" else "")
        + f" V={d['V']}"
    )
    bf = f", bf16 {r.mm_bf16_flop_s / 1e9:.1f}" if r.mm_bf16_flop_s else ""
    print(
        f"\n{r.preset}  ({size}; {r.flops_per_token / 1e6:.1f} MFLOP of matrix products per "
        f"training target token, forward + 2x backward; torch.mm fp32 {r.mm_flop_s / 1e9:.1f}{bf} "
        f"GFLOP/s measured between the training steps)"
    )
    rows = [
        ("train target tokens/s", r.rnnlib.train_tok_s, r.reference.train_tok_s, _fmt_rate),
        (
            f"beam search sentences/s (k={beam})",
            r.rnnlib.beam_sent_s,
            r.reference.beam_sent_s,
            _fmt_rate,
        ),
        (
            "train GFLOP/s (model FLOPs)",
            r.rnnlib.train_flop_s / 1e9,
            r.reference.train_flop_s / 1e9,
            lambda x: f"{x:.2f}",
        ),
        (
            "train MFU vs fp32 mm",
            r.rnnlib.train_flop_s / r.mm_flop_s,
            r.reference.train_flop_s / r.mm_flop_s,
            lambda x: f"{100 * x:.1f}%",
        ),
    ]
    print(f"  {'':36s}{'rnnlib':>12s}{'reference':>12s}{'ratio':>9s}")
    for label, a, b, fmt in rows:
        print(f"  {label:36s}{fmt(a):>12s}{fmt(b):>12s}{_ratio(a, b):>9s}")
    mb = lambda x: f"{x / 2**20:.0f} MB"  # noqa: E731
    print(
        f"  {'train peak RSS growth':36s}{mb(r.rnnlib.train_mem):>12s}"
        f"{mb(r.reference.train_mem):>12s}"
    )
    print(
        f"  {'beam peak RSS growth':36s}{mb(r.rnnlib.beam_mem):>12s}{mb(r.reference.beam_mem):>12s}"
    )
    print(
        f"  {'beam hypothesis-steps per sentence':36s}{r.rnnlib.beam_steps:>12.0f}"
        f"{r.reference.beam_steps:>12.0f}"
    )
    for label, rate in r.shape_flop_s.items():
        print(
            f"  torch.mm at the {label}: {rate / 1e9:.1f} GFLOP/s = "
            f"{100 * rate / r.mm_flop_s:.0f}% of the square-matrix rate "
            f"(the ceiling of the MFU these products allow)"
        )
    if r.rnnlib.bf16_tok_s is not None:
        n = r.bf16_nll
        print(
            f"  bf16 autocast: {_fmt_rate(r.rnnlib.bf16_tok_s)} target tokens/s "
            f"({_ratio(r.rnnlib.bf16_tok_s, r.reference.train_tok_s)} the reference, "
            f"{_ratio(r.rnnlib.bf16_tok_s, r.rnnlib.train_tok_s)} fp32); "
            f"NLL/token after {n['updates']} updates "
            f"fp32 {n['fp32_last']:.4f}, bf16 {n['bf16_last']:.4f}; "
            f"largest relative gap along the curve {100 * n['max_rel_diff']:.2f}% "
            f"(fp32 noise, another init seed: {100 * n['seed_rel_diff']:.2f}%)"
        )
        f = r.rnnlib.bf16_flop_s
        print(
            f"  bf16 autocast: train MFU {100 * f / r.mm_flop_s:.1f}% of the fp32 mm rate, "
            f"{100 * f / r.mm_bf16_flop_s:.1f}% of the bf16 mm rate; beam search "
            f"{_fmt_rate(r.rnnlib.bf16_beam_sent_s)} sentences/s "
            f"({_ratio(r.rnnlib.bf16_beam_sent_s, r.reference.beam_sent_s)} the reference)"
        )
    if r.profile:
        print(r.profile)


def main(args: argparse.Namespace) -> int:
    if args.quick:
        args.profile, args.seconds, args.batch_size, args.batches = (
            "smoke",
            min(args.seconds, 0.2),
            8,
            2,
        )
        args.min_len, args.max_len, args.beam_sentences, args.beam_batch = 3, 8, 3, 3
        args.beam, args.decode_len, args.bf16_updates, args.mm_size = 3, 6, 2, 256
        args.threads = args.threads or 1  # tiny operations: threads only add overhead
    if args.threads:
        torch.set_num_threads(args.threads)
    kinds = [k.strip() for k in args.models.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS:
            raise SystemExit(f"--models: unknown model {k!r} (choose from {', '.join(KINDS)})")
    if args.against is not None:
        from . import against

        print(
            f"rnnlib bench --against: profile {args.profile}, torch {torch.__version__}, "
            f"{torch.get_num_threads()} threads; allocator: {allocator_description()}"
        )
        rows = against.main(args, kinds)
        if args.json:
            args.json.write_text(json.dumps({"against": str(args.against), "rows": rows}, indent=1))
        return 0
    torch.manual_seed(0)
    peak = matmul_rate(min(args.seconds, 2.0), size=args.mm_size)
    bf16_isa = cpu_bf16_instructions()
    peak_bf16 = (
        matmul_rate(min(args.seconds, 2.0), size=bf16_mm_size(args), dtype=torch.bfloat16)
        if args.bf16
        else None
    )
    print(
        f"rnnlib bench: profile {args.profile}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, batch {args.batch_size}, "
        f"lengths {args.min_len}-{args.max_len}, {args.seconds:g} s per measurement"
    )
    bf = (
        f", bf16 {peak_bf16 / 1e9:.1f} GFLOP/s ({bf16_mm_size(args)}x{bf16_mm_size(args)})"
        if args.bf16
        else ""
    )
    print(
        f"measured fp32 torch.mm rate: {peak / 1e9:.1f} GFLOP/s "
        f"({args.mm_size}x{args.mm_size}){bf}; "
        f"MFU below uses the rates measured between each model's training steps"
    )
    print(f"allocator: {allocator_description()}")
    print(
        "CPU bf16 matrix instructions: "
        + (
            ", ".join(bf16_isa)
            if bf16_isa
            else "none (no avx512_bf16 or amx_bf16 in /proc/cpuinfo): bf16 autocast is emulated "
            "here, slower than fp32"
        )
    )
    reports = []
    for k in kinds:
        r = bench_model(k, args, peak)
        print_report(r, peak, args.beam)
        reports.append(r)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"\nprocess peak RSS (getrusage ru_maxrss): {maxrss / 2**20:.0f} MB")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "matmul_flop_s": peak,
                    "matmul_bf16_flop_s": peak_bf16,
                    "cpu_bf16_instructions": list(bf16_isa),
                    "threads": torch.get_num_threads(),
                    "models": [asdict(r) for r in reports],
                    "maxrss": maxrss,
                },
                indent=1,
                default=float,
            )
        )
    return 0
