"""Weight tuning with minimum error rate training (MERT; Och 2003), as paper A does on its dev set.

Each iteration decodes the dev set with the current weights, adds the n-best lists to a
pool (all iterations' candidates), and maximises corpus BLEU over the pool:

* along a direction ``d`` from weights ``w`` every candidate's score is the line
  ``F_k . w + gamma F_k . d``; each sentence's 1-best as a function of ``gamma`` is the upper
  envelope of its lines, so corpus BLEU is piecewise constant in ``gamma`` and the exact
  best interval is found by sweeping the envelopes' breakpoints (Och 2003, Sec. 6; the sweep of
  :func:`_envelopes` in numpy, or its fast path :mod:`rnnlib.smt.envelope` compiled, which
  gives the same breakpoints: :func:`envelopes`);
* coordinate directions plus ``random_directions`` random ones are searched in turn until a
  pass gains nothing, from the current weights and from ``restarts`` random starting points
  (seeded with ``seed``); the best result wins.
* a feature the decoder marks ``fixed`` (Moses' ``tuneable=false``: the unknown-word penalty)
  is searched along no direction and random starting points keep its weight; its contribution
  still enters every candidate's score, so the line search sees the true ranking.
* every weight vector MERT starts from or returns has its tuned weights scaled to unit L1
  norm, the fixed ones kept at their value, as Moses' MERT leaves them (:func:`unit_scale`).
  The decoder's beam threshold is a fixed log distance below a stack's best, so the scale of
  the weights sets how much the search prunes: unscaled, a line search that moved far along a
  direction left weights 10^2 to 10^16 times larger and searches that pruned almost every
  hypothesis, each system by its own amount. Keeping the fixed weight at its value also keeps
  its balance against the tuned ones the same for every system and seed (1 against a unit
  norm); the price is that where candidates of one sentence differ in the fixed feature (a
  copied word that the table holds only inside longer phrases), the ranking MERT found on the
  pool can change a little.

The outer loop stops when a decoding adds no new candidate to the pool, when the weights
move less than ``tol`` (max-abs after L1 normalisation), or after ``max_iterations``
decodings. The weights returned are those whose decoding scored the best dev BLEU (Moses'
``--return-best-dev``), so a late MERT step that overfits the pool cannot make things worse.

BLEU here is computed on tokens (the decoder's output against the tokenized dev references,
4-gram, brevity penalty with the closest reference length), as Moses' MERT does; the final
scores in the pipeline use sacreBLEU on detokenized text.

Deviations
----------
* Moses' MERT takes the best single coordinate per step; we update greedily after each
  direction (both are coordinate ascent; ours converges in fewer line searches).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .compiled import envelope_module


def reference_counts(refs: Sequence[Sequence[str]], max_n: int = 4) -> tuple[Counter, list[int]]:
    """Clipping counts (max over references of each n-gram's count, n <= max_n) and lengths."""
    best: Counter = Counter()
    for ref in refs:
        ref = list(ref)
        best |= Counter(
            tuple(ref[i : i + n]) for n in range(1, max_n + 1) for i in range(len(ref) - n + 1)
        )
    return best, [len(r) for r in refs]


def bleu_stats(
    hyp: Sequence[str],
    refs: Sequence[Sequence[str]] | None = None,
    max_n: int = 4,
    ref_counts: tuple[Counter, list[int]] | None = None,
) -> np.ndarray:
    """Sufficient statistics ``(2 * max_n + 1,)``: clipped matches 1..n, totals 1..n, ref length
    (the reference length closest to the hypothesis'). Pass ``ref_counts`` from
    :func:`reference_counts` to score many hypotheses against the same references."""
    best, lens = ref_counts if ref_counts is not None else reference_counts(refs, max_n)
    stats = np.zeros(2 * max_n + 1, dtype=np.int64)
    hyp = list(hyp)
    h = Counter(tuple(hyp[i : i + n]) for n in range(1, max_n + 1) for i in range(len(hyp) - n + 1))
    for g, c in h.items():
        m = best.get(g)
        if m:
            stats[len(g) - 1] += min(c, m)
    for n in range(1, max_n + 1):
        stats[max_n + n - 1] = max(len(hyp) - n + 1, 0)
    stats[-1] = min(lens, key=lambda L: (abs(L - len(hyp)), L))
    return stats


def bleu_from_stats(stats: np.ndarray, max_n: int = 4) -> np.ndarray:
    """Corpus BLEU (0-100) of summed statistics; ``stats (..., 2n+1)`` -> ``(...)``."""
    stats = np.asarray(stats, dtype=np.float64)
    m, t, r = stats[..., :max_n], stats[..., max_n : 2 * max_n], stats[..., -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.where(
            (m > 0) & (t > 0), np.log(np.maximum(m, 1e-300) / np.maximum(t, 1)), -np.inf
        ).mean(-1)
        c = t[..., 0]
        bp = np.where(c < r, 1 - r / np.maximum(c, 1), 0.0)
        return np.where(np.isfinite(logp), 100 * np.exp(logp + bp), 0.0)


class CandidatePool:
    """All sentences' candidates in flat arrays: ``feats (N, F)``, ``stats (N, 2n+1)``;
    sentence ``s`` owns rows ``offsets[s]:offsets[s + 1]``."""

    def __init__(self, feats: list[np.ndarray], stats: list[np.ndarray]):
        self.offsets = np.r_[0, np.cumsum([len(f) for f in feats])].astype(np.int64)
        self.feats = np.vstack(feats).astype(np.float64)
        self.stats = np.vstack(stats).astype(np.int64)
        self.bounds = list(zip(self.offsets[:-1].tolist(), self.offsets[1:].tolist()))
        self.seg = np.repeat(np.arange(len(feats)), np.diff(self.offsets))

    def bleu(self, w: np.ndarray) -> float:
        """Corpus BLEU of each sentence's best candidate under ``w``."""
        scores = self.feats @ w
        order = np.lexsort((-scores, self.seg))  # per sentence, best first
        return float(bleu_from_stats(self.stats[order[self.offsets[:-1]]].sum(0)))


def envelopes(a: np.ndarray, b: np.ndarray, seg: np.ndarray, starts: np.ndarray):
    """Upper envelopes of the lines ``a_k + gamma b_k`` of every sentence (see
    :func:`_envelopes`, which computes them with numpy): the fast path, each envelope swept by
    :func:`rnnlib.smt.envelope.sweep` compiled, where it is built (:mod:`rnnlib.smt.compiled`),
    its breakpoints put in :func:`_envelopes`' order (round by round). The same arrays as
    :func:`_envelopes` (``tests/test_smt_tune.py``), several times sooner (BENCHMARKS.md)."""
    fast = envelope_module()
    if fast is None:
        return _envelopes(a, b, seg, starts)
    n = len(a)
    first = np.empty(len(starts) - 1, dtype=np.int64)
    xs, prev, new, rounds = (
        np.empty(n, dtype=t) for t in (np.float64, np.int64, np.int64, np.int64)
    )
    k = fast.sweep(
        np.ascontiguousarray(a, dtype=np.float64),
        np.ascontiguousarray(b, dtype=np.float64),
        np.ascontiguousarray(starts, dtype=np.int64),
        first,
        xs,
        prev,
        new,
        rounds,
    )
    order = np.argsort(rounds[:k], kind="stable")
    return first, xs[:k][order], prev[:k][order], new[:k][order]


def _envelopes(a: np.ndarray, b: np.ndarray, seg: np.ndarray, starts: np.ndarray):
    """Upper envelopes of the lines ``a_k + gamma b_k`` of every sentence at once.

    Rows of sentence ``s`` are ``starts[s]:starts[s+1]`` and ``seg`` gives each row's sentence.
    Returns ``(first, xs, prev, new)``: each sentence's best row at ``gamma = -inf``, and one
    entry per breakpoint: where it is and which row is best before and after it. Each round
    moves every unfinished sentence to its next envelope line: among lines with a larger
    slope, the one crossing the current line first (the steepest on ties).
    """
    order = np.lexsort((-a, b, seg))
    first = order[starts[:-1]]  # smallest slope, then largest intercept
    cur = first.copy()
    idx = np.arange(len(a))
    sg = seg
    xs, prev, new = [], [], []
    while True:
        c = cur[sg]
        keep = b[idx] > b[c]
        idx, sg, c = idx[keep], sg[keep], c[keep]
        if not len(idx):
            break
        bi = b[idx]
        x = (a[c] - a[idx]) / (bi - b[c])
        heads = np.flatnonzero(np.r_[True, sg[1:] != sg[:-1]])  # rows stay grouped by sentence
        xmin = np.minimum.reduceat(x, heads)
        counts = np.diff(np.r_[heads, len(idx)])
        at_min = x == np.repeat(xmin, counts)
        steep = np.maximum.reduceat(np.where(at_min, bi, -np.inf), heads)
        cand = np.flatnonzero(at_min & (bi == np.repeat(steep, counts)))
        ws, pos = np.unique(sg[cand], return_index=True)
        win = idx[cand[pos]]
        xs.append(xmin)
        prev.append(cur[ws])
        new.append(win)
        cur[ws] = win
    if not xs:
        return first, np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return first, np.concatenate(xs), np.concatenate(prev), np.concatenate(new)


def line_search(pool: CandidatePool, w: np.ndarray, d: np.ndarray) -> tuple[float, float]:
    """Best step ``gamma`` along ``d`` from ``w`` and the corpus BLEU it gives (Och 2003,
    Sec. 6)."""
    first, xs_arr, prev, new = envelopes(pool.feats @ w, pool.feats @ d, pool.seg, pool.offsets)
    base = pool.stats[first].sum(0)
    if not len(xs_arr):
        return 0.0, float(bleu_from_stats(base))
    order = np.argsort(xs_arr, kind="stable")
    xs_arr = xs_arr[order]
    deltas = pool.stats[new[order]] - pool.stats[prev[order]]
    interval_stats = np.vstack(
        [base[None], base + np.cumsum(deltas, axis=0)]
    )  # row i: after i breakpoints
    scores = bleu_from_stats(interval_stats)
    # interval i lies between breakpoints i-1 and i; it is empty when they coincide
    empty = np.r_[False, xs_arr[1:] == xs_arr[:-1], False]
    scores = np.where(empty, -1.0, scores)
    best = int(np.argmax(scores))
    if best == 0:
        gamma = xs_arr[0] - 1.0
    elif best == len(xs_arr):
        gamma = xs_arr[-1] + 1.0
    else:
        gamma = 0.5 * (xs_arr[best - 1] + xs_arr[best])
    return float(gamma), float(scores[best])


def mert(
    pool: CandidatePool,
    w0: np.ndarray,
    *,
    seed: int = 0,
    restarts: int = 2,
    random_directions: int = 2,
    max_passes: int = 30,
    fixed: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Maximise corpus BLEU of the pool over the weights. Returns ``(weights, BLEU)``.

    ``fixed (F,) bool``: weights no direction moves (random starts keep their value in ``w0``).
    The weights returned are scaled by :func:`unit_scale`, and so is the BLEU returned: the
    pool's at those weights (with a fixed weight it can be a little below the optimum found)."""
    rng = np.random.default_rng(seed)
    w0 = np.asarray(w0, dtype=np.float64)
    dim = len(w0)
    free = np.ones(dim, dtype=bool) if fixed is None else ~np.asarray(fixed, dtype=bool)
    if free.shape != (dim,):
        raise ValueError(f"mert: fixed has shape {free.shape} for {dim} weights")
    starts = [w0]
    for _ in range(restarts):
        starts.append(np.where(free, rng.uniform(-1, 1, dim), w0))
    best_w, best_bleu = None, -1.0
    for w in starts:
        w = w.copy()
        cur = pool.bleu(w)
        for _ in range(max_passes):
            dirs = [np.eye(dim)[k] for k in range(dim) if free[k]]
            dirs += [v / np.abs(v).sum() for v in rng.normal(size=(random_directions, dim)) * free]
            gained = False
            for d in dirs:
                gamma, score = line_search(pool, w, d)
                if score > cur + 1e-9:
                    w = w + gamma * d
                    cur = score
                    gained = True
            if not gained:
                break
        if cur > best_bleu + 1e-9:
            best_w, best_bleu = w, cur
    scaled = unit_scale(best_w, free)
    return scaled, (best_bleu if free.all() else pool.bleu(scaled))


def unit_scale(w: np.ndarray, free: np.ndarray) -> np.ndarray:
    """``w (F,)`` with its tuned weights ``free (F,) bool`` scaled to unit L1 norm and the fixed
    ones as they are (``w`` itself when the tuned ones are all 0): how far below a stack's best
    the decoder's beam threshold reaches, and the fixed weights' balance against the tuned
    ones, are then the same for every system. Without a fixed weight no ranking changes."""
    w = np.array(w, dtype=np.float64)
    norm = float(np.abs(w[free]).sum())
    if norm > 0:
        w[free] = w[free] / norm
    return w


@dataclass
class TuneResult:
    """Tuned ``weights``, their ``feature_names``, and one record per iteration in ``history``
    (dev BLEU of the decoder's 1-best with the iteration's starting weights, pool size, times)."""

    weights: np.ndarray
    feature_names: list[str]
    history: list[dict] = field(default_factory=list)
    converged: bool = False
    best_dev_bleu: float = float("nan")

    def as_dict(self) -> dict:
        return {
            "weights": dict(zip(self.feature_names, self.weights.tolist())),
            "history": self.history,
            "converged": self.converged,
            "best_dev_bleu": self.best_dev_bleu,
        }


def tune(
    decoder,
    src: Sequence[Sequence[str]],
    refs: Sequence[Sequence[Sequence[str]]],
    *,
    nbest: int = 100,
    max_iterations: int = 6,
    seed: int = 0,
    restarts: int = 2,
    random_directions: int = 2,
    tol: float = 1e-4,
    log=None,
) -> TuneResult:
    """MERT on a dev set. ``refs[s]`` is the list of tokenized references of sentence ``s``.

    ``max_iterations`` counts decodings of the dev set (MERT runs between them). The decoder's
    weights are left at the returned (best-dev) values.
    """
    if len(src) != len(refs):
        raise ValueError(f"tune: {len(src)} dev sentences but {len(refs)} reference lists")

    def decode(w: np.ndarray) -> list:
        decoder.set_weights(w)
        return decoder.translate_corpus(src, nbest)

    res = mert_loop(
        decode,
        decoder.weights,
        refs,
        feature_names=list(decoder.feature_names),
        fixed=getattr(decoder, "fixed", None),
        max_iterations=max_iterations,
        seed=seed,
        restarts=restarts,
        random_directions=random_directions,
        tol=tol,
        log=log,
    )
    decoder.set_weights(res.weights)
    return res


def mert_loop(
    decode,
    w0: np.ndarray,
    refs: Sequence[Sequence[Sequence[str]]],
    *,
    feature_names: Sequence[str],
    fixed: np.ndarray | None = None,
    max_iterations: int = 6,
    seed: int = 0,
    restarts: int = 2,
    random_directions: int = 2,
    tol: float = 1e-4,
    log=None,
) -> TuneResult:
    """MERT's outer loop (see the module notes) around any ``decode(w) -> n-best lists``.

    ``decode(w (F,))`` returns one list of candidates per dev sentence, each with ``words`` and
    ``features (F,)`` (:class:`rnnlib.smt.decoder.Translation`), best first under ``w``;
    :func:`tune` decodes with the decoder, :mod:`rnnlib.smt.rescore` also adds sentence-level
    features to every candidate. ``fixed (F,) bool``: weights MERT leaves as they are in ``w0``.
    """
    w = np.array(w0, dtype=np.float64)
    if len(feature_names) != len(w):
        raise ValueError(
            f"mert_loop: {len(w)} starting weights for {len(feature_names)} features "
            f"{list(feature_names)}"
        )
    pools = [dict() for _ in refs]  # candidate words -> row in feats/stats
    feats: list[list] = [[] for _ in refs]
    stats: list[list] = [[] for _ in refs]
    free = np.ones(len(w), dtype=bool) if fixed is None else ~np.asarray(fixed, dtype=bool)
    w = unit_scale(w, free)
    history = []
    converged = False
    best_w, best_bleu = w, -1.0
    ref_counts = [reference_counts(r) for r in refs]
    for it in range(max_iterations):
        t0 = time.perf_counter()
        lists = decode(w)
        t1 = time.perf_counter()
        if len(lists) != len(refs):
            raise ValueError(
                f"mert_loop: decode returned {len(lists)} n-best lists for {len(refs)} "
                "dev sentences"
            )
        one_best = sum(
            bleu_stats(lst[0].words, ref_counts=rc) for lst, rc in zip(lists, ref_counts)
        )
        dev_bleu = float(bleu_from_stats(one_best))
        if dev_bleu > best_bleu:
            best_w, best_bleu = w, dev_bleu
        new = _pool_candidates(lists, pools, feats, stats, ref_counts, feature_names)
        record = {
            "iteration": it,
            "dev_bleu": dev_bleu,
            "new_candidates": new,
            "pool": sum(len(p) for p in pools),
            "decode_s": round(t1 - t0, 2),
            "weights": w.tolist(),
        }
        history.append(record)
        if new == 0:
            converged = True
        elif it < max_iterations - 1:  # the last weights must still be decoded to count
            pool = CandidatePool([np.asarray(f) for f in feats], [np.asarray(x) for x in stats])
            w_new, pool_bleu = mert(
                pool,
                w,
                seed=seed + it,
                restarts=restarts,
                random_directions=random_directions,
                fixed=fixed,
            )
            record["mert_s"] = round(time.perf_counter() - t1, 2)
            record["pool_bleu"] = pool_bleu
            converged = float(np.abs(w_new - w).max()) < tol
            w = w_new
        if log:
            log(record)
        if converged:
            break
    return TuneResult(
        weights=best_w,
        feature_names=list(feature_names),
        history=history,
        converged=converged,
        best_dev_bleu=best_bleu,
    )


def _pool_candidates(
    lists: Sequence[Sequence],
    pools: list[dict],
    feats: list[list],
    stats: list[list],
    ref_counts: Sequence,
    feature_names: Sequence[str],
) -> int:
    """Add the n-best lists' candidates not yet pooled (by their words) to each sentence's pool:
    their features to ``feats``, their BLEU statistics to ``stats``. Returns how many were new."""
    new = 0
    for s, lst in enumerate(lists):
        for cand in lst:
            key = tuple(cand.words)
            if key not in pools[s]:
                if len(cand.features) != len(feature_names):
                    raise ValueError(
                        f"mert_loop: a candidate of sentence {s} has {len(cand.features)} "
                        f"feature values for {len(feature_names)} weights {list(feature_names)}"
                    )
                pools[s][key] = len(feats[s])
                feats[s].append(cand.features)
                stats[s].append(bleu_stats(cand.words, ref_counts=ref_counts[s]))
                new += 1
    return new


__all__ = [
    "CandidatePool",
    "TuneResult",
    "bleu_from_stats",
    "bleu_stats",
    "reference_counts",
    "envelopes",
    "line_search",
    "mert",
    "mert_loop",
    "tune",
]
