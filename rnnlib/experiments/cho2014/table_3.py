"""A Table 3: samples from the network for the long source phrases of Table 2, with their
counts; the paper's own table; the claims C-A-T3-1 and C-A-T3-2."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from ... import verdicts
from ...batch import source_batch
from ...book import papers
from ...book.claims import ClaimCheck
from ...search import beam_search, sample
from ...stats import (
    bootstrap_mean,
)
from .controls import Controls
from .rows import RNNRow
from .setting import N_BOOT
from .table_2 import LongPhrases, bracket, judged, mean_or_nan

#: C-A-T3-1's thresholds: the most frequent sample takes at least TOP_SHARE of the draws (the
#: paper's example: 24 of 50), and is among the phrase table's targets for at least
#: TOP_CORRECT of the sources ("typically a correct translation"; the table's targets are the
#: book's proxy for a correct translation)
TOP_SHARE, TOP_CORRECT = 0.1, 0.5

#: the floors of Table 3's claims, on each source's *expected table hits*: its draws times the
#: network's probability of all its phrase-table targets (those the network can write: every
#: word in its shortlist), the draws that can be a table target by the network's own account.
#: C-A-T3-1 (the most drawn sample a table target for most sources) needs the median source to
#: expect at least HITS_MEDIAN_FLOOR such draws; C-A-T3-2 (some draws in the table, some not)
#: needs at least HITS_TOTAL_FLOOR over all draws: with fewer, drawing none has a chance of
#: e^-3 (5%) or more, so no overlap seen is no evidence
HITS_MEDIAN_FLOOR, HITS_TOTAL_FLOOR = 1.0, 3.0


def paper_table_3() -> pd.DataFrame:
    """Paper A's own Table 3 (:data:`rnnlib.book.papers.A_TABLE3`): for each source, the samples
    it shows with how often each was drawn among its
    :data:`~rnnlib.book.papers.A_TABLE3_SAMPLES`."""
    rows = [
        {
            "group": group,
            "source": src,
            "samples (× times drawn)": " · ".join(
                bracket(t.split()) + ("" if n is None else f" (×{n})") for t, n in samples
            ),
        }
        for group, entries in papers.A_TABLE3.items()
        for src, samples in entries
    ]
    return pd.DataFrame(rows).set_index(["group", "source"])


def paper_samples() -> int:
    """Paper A's Table 3: the samples it drew per source phrase."""
    return papers.A_TABLE3_SAMPLES


def paper_top_count() -> int:
    """Paper A's Table 3: the largest count it prints (of its 50 samples of one source)."""
    return max(n for entries in papers.A_TABLE3.values() for _, sm in entries for _, n in sm if n)


def paper_top_share() -> float:
    """Paper A's Table 3: the share of its 50 samples taken by the most drawn one shown, in %,
    averaged over the sources with printed counts (for the prose beside ours)."""
    tops = [
        max(n for _, n in samples if n is not None)
        for entries in papers.A_TABLE3.values()
        for _, samples in entries
        if any(n is not None for _, n in samples)
    ]
    return 100 * float(np.mean(tops)) / papers.A_TABLE3_SAMPLES


@dataclass
class Table3:
    """A Table 3 (:func:`table_3_samples`): ``table`` (index: group, source); ``in_table``: for
    each shown sample, whether the phrase table has it for its source; ``top_share``: for each
    source, the share of its samples that are its most frequent one; ``top_in_table``: for each
    source, whether that most frequent sample is among the phrase table's targets for it;
    ``expected``: each source's expected table hits (:func:`expected_hits`); ``hits``: how many
    of its draws are table targets; ``draws``: draws per source; ``beam_in_table``: whether the
    network's beam-search output for the source is a table target."""

    table: pd.DataFrame
    in_table: list[bool]
    top_share: list[float]
    top_in_table: list[bool] = dataclasses.field(default_factory=list)
    expected: list[float] = dataclasses.field(default_factory=list)
    hits: list[int] = dataclasses.field(default_factory=list)
    draws: int = 0
    beam_in_table: list[bool] = dataclasses.field(default_factory=list)


def expected_hits(cand: pd.DataFrame, vocab, n_samples: int) -> float:
    """``n_samples`` times the network's probability of the targets of ``cand`` (one source's
    rows of the table, ``rnn`` its ``log p(t|s)``) whose every word is in ``vocab`` (a target
    with a word outside it cannot be drawn as itself): the draws expected to be table
    targets."""
    ok = [all(w in vocab for w in t) for t in cand["tgt"]]
    return float(n_samples * np.exp(cand.loc[ok, "rnn"].to_numpy(dtype=np.float64)).sum())


def table_3_samples(
    phrases: LongPhrases,
    rnn: RNNRow,
    corpus,
    n_samples: int,
    seed: int,
    model: torch.nn.Module | None = None,
) -> Table3:
    """A Table 3: ``n_samples`` ancestral samples from the network (``model``, ``rnn.model``
    when ``None``; :func:`rnnlib.search.sample`, one ``torch.Generator`` seeded with ``seed`` on
    the network's device, the sources in order) for each source of Table 2; the five best
    distinct samples by the network's score with how often each was drawn, a star on those the
    phrase table lacks for that source; the draws that are table targets against those
    expected (:func:`expected_hits`, from ``phrases``' scores: pass the same network's), and
    the network's beam-search output (beam 10)."""
    model = rnn.model if model is None else model
    gen = torch.Generator(device=rnn.scorer.device).manual_seed(seed)
    rows, t3 = [], Table3(pd.DataFrame(), [], [], [], draws=n_samples)
    for g, srcs in phrases.chosen.items():
        for s in srcs:
            src = source_batch([corpus.src_vocab.encode(s)])
            hyps = sample(model, src, n=n_samples, generator=gen)[0]
            counts, best = {}, {}
            for h in hyps:
                words = tuple(corpus.tgt_vocab.decode(h.tokens))
                counts[words] = counts.get(words, 0) + 1
                best[words] = h.score
            top = sorted(counts, key=lambda w: -best[w])[:5]
            cand = phrases.long[phrases.long["src"] == s]
            known = set(cand["tgt"])
            beam = tuple(
                corpus.tgt_vocab.decode(beam_search(model, src, beam_size=10)[0][0].tokens)
            )
            t3.in_table += [w in known for w in top]
            t3.top_share.append(max(counts.values()) / len(hyps))
            t3.top_in_table.append(max(counts, key=counts.get) in known)
            t3.expected.append(expected_hits(cand, corpus.tgt_vocab, n_samples))
            t3.hits.append(sum(c for w, c in counts.items() if w in known))
            t3.beam_in_table.append(beam in known)
            shown = " · ".join(
                f"{bracket(w)} (×{counts[w]})" + ("" if w in known else " *") for w in top
            )
            rows.append(
                {
                    "group": g,
                    "source": " ".join(s),
                    "samples (top 5 by score)": shown,
                    "table targets drawn": t3.hits[-1],
                    "expected": round(t3.expected[-1], 2),
                    "beam output": bracket(beam) + ("" if beam in known else " *"),
                }
            )
    columns = ["group", "source", "samples (top 5 by score)", "table targets drawn", "expected"]
    t3.table = pd.DataFrame(rows, columns=columns + ["beam output"]).set_index(["group", "source"])
    return t3


def numbers(t3: Table3, n_samples: int) -> dict[str, Any]:
    """The samples per source, the share (%) of the shown samples in the phrase table, the mean
    share (%) of the most frequent sample and the share (%) of sources whose most frequent
    sample is in the table; the share (%) of all draws that are table targets and the share
    expected (:func:`expected_hits`), the median and total expected hits with their floors, and
    the share (%) of sources whose beam output is a table target."""
    all_draws = t3.draws * len(t3.hits)
    return {
        "cho-n-samples": n_samples,
        "cho-in-table": (100 * mean_or_nan(t3.in_table), 1),
        "cho-top-share": (100 * mean_or_nan(t3.top_share), 1),
        "cho-top-in-table": (100 * mean_or_nan(t3.top_in_table), 1),
        "cho-draws-in-table": (100 * sum(t3.hits) / all_draws if all_draws else np.nan, 1),
        "cho-expected-in-table": (100 * sum(t3.expected) / all_draws if all_draws else np.nan, 1),
        "cho-hits-median": (float(np.median(t3.expected)) if t3.expected else np.nan, 2),
        "cho-hits-total": (float(np.sum(t3.expected)), 2),
        "cho-hits-median-floor": HITS_MEDIAN_FLOOR,
        "cho-hits-total-floor": HITS_TOTAL_FLOOR,
        "cho-beam-in-table": (100 * mean_or_nan(t3.beam_in_table), 1),
    }


def _concentration(t3: Table3, boot, n_boot: int):
    """``((share, low, high), (correct, low, high))``: the mean share of the draws that are each
    source's most frequent sample, and the share of sources whose most frequent sample is a
    phrase-table target, with 95% bootstrap intervals over the sources from ``boot`` (in this
    order); ``None`` with fewer than two sources."""
    share, top_in = t3.top_share, [float(x) for x in t3.top_in_table]
    if len(share) < 2 or len(top_in) != len(share):
        return None
    return bootstrap_mean(share, n_boot, boot), bootstrap_mean(top_in, n_boot, boot)


@dataclass
class Table3Measures:
    """What Table 3's claims read: :func:`_concentration` of the trained network's samples and
    then of the untrained network's (the control), from one generator, and both tables."""

    samples: Table3
    control: Table3
    trained: tuple | None
    untrained: tuple | None
    n_samples: int


def table_3_measures(
    t3: Table3, n_samples: int, seed: int, control: Table3, n_boot: int = N_BOOT
) -> Table3Measures:
    """:class:`Table3Measures` of ``t3`` and ``control`` (the same sources sampled from the
    untrained network), from ``default_rng(seed + 9)``."""
    boot = np.random.default_rng(seed + 9)
    trained = _concentration(t3, boot, n_boot)
    return Table3Measures(t3, control, trained, _concentration(control, boot, n_boot), n_samples)


def _note(m: Table3Measures) -> str:
    return (
        f"{len(m.samples.top_share)} sources, {m.n_samples} samples each; 95% bootstrap over "
        "the sources; one trained network (one seed)"
    )


UNTRAINED = "the untrained network's samples (initialisation, the run's seed), the same sources"


def _concentrated(measured, n_samples: int, note: str = "") -> verdicts.Check | None:
    if measured is None:
        return None
    (m, lo, hi), (c, clo, chi) = measured
    share = f"share of the {n_samples} draws that are the most frequent sample − {TOP_SHARE:g}"
    correct = (
        f"share of sources whose most frequent sample is a phrase-table target − {TOP_CORRECT:g}"
    )
    return verdicts.intervals_above(
        [
            (share, m - TOP_SHARE, lo - TOP_SHARE, hi - TOP_SHARE),
            (correct, c - TOP_CORRECT, clo - TOP_CORRECT, chi - TOP_CORRECT),
        ],
        note=note,
    )


def hits_floored(check: verdicts.Check, t3: Table3, total: bool) -> verdicts.Check:
    """``check`` also floored on the expected table hits of ``t3``'s sources
    (:func:`expected_hits`): their median at :data:`HITS_MEDIAN_FLOOR` (C-A-T3-1), or their sum
    over all draws at :data:`HITS_TOTAL_FLOOR` (``total``, C-A-T3-2). A check that judges
    nothing is returned as it is."""
    if check.rule in verdicts.NO_CONTROL_RULES:
        return check
    n, e = len(t3.expected), t3.expected
    if total:
        value = float(np.sum(e)) if n else None
        values, floor = [(f"sum over the {n} sources", value)], HITS_TOTAL_FLOOR
        what = "all draws (the draws times the network's probability of the table's targets)"
    else:
        value = float(np.median(e)) if n else None
        values, floor = [(f"median of the {n} sources", value)], HITS_MEDIAN_FLOOR
        what = "a source's draws (its draws times the network's probability of its targets)"
    return verdicts.floored(
        check, values, floor, f"expected phrase-table targets in {t3.draws} draws", what, add=True
    )


def claim_t3_1(m: Table3Measures, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-T3-1, the samples concentrated on one (:data:`TOP_SHARE`) that is typically a correct
    translation, read as one of the table's targets for the source (:data:`TOP_CORRECT`);
    control: the untrained network's samples; floored by ``ctl`` and on the median source's
    expected table hits (:func:`hits_floored`). Paper A (§4.3): "We can see that the RNN
    Encoder–Decoder is able to propose well-formed target phrases without looking at the actual
    phrase table." """
    check = _concentrated(m.trained, m.n_samples, _note(m))
    control = _concentrated(m.untrained, m.n_samples)
    why = "fewer than two sources were drawn"
    out = judged(check, control, why, UNTRAINED, ctl)
    return ClaimCheck("C-A-T3-1", hits_floored(out, m.samples, total=False))


def _overlapping(t3: Table3, note: str = "") -> verdicts.Check | None:
    """Some of all of ``t3``'s draws are table targets, and some are not (``None``: no draw)."""
    if not t3.hits:
        return None
    n = t3.draws * len(t3.hits)
    inside = sum(t3.hits)
    some = f"some of the {n} draws are phrase-table targets ({inside})"
    return verdicts.all_true(
        [(some, inside > 0), (f"some are not ({n - inside})", inside < n)], note=note
    )


def claim_t3_2(m: Table3Measures, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-T3-2, the draws overlap the phrase table's targets, but not completely (over every
    draw of every source); control: the untrained network's samples; floored by ``ctl`` and on
    the expected table hits over all draws (:func:`hits_floored`). Paper A (§4.3):
    "Importantly, the generated phrases do not overlap completely with the target phrases from
    the phrase table." """
    check, control = _overlapping(m.samples, _note(m)), _overlapping(m.control)
    out = judged(check, control, "no samples were drawn", UNTRAINED, ctl)
    return ClaimCheck("C-A-T3-2", hits_floored(out, m.samples, total=True))


def table_3_claims(
    t3: Table3,
    n_samples: int,
    seed: int,
    control: Table3,
    ctl: Controls | None = None,
    n_boot: int = N_BOOT,
) -> dict[str, verdicts.Check]:
    """The checks of C-A-T3-1 and C-A-T3-2 (:func:`claim_t3_1`, :func:`claim_t3_2`) on
    :func:`table_3_measures` of ``t3`` and ``control`` (the same sources sampled from the
    untrained network); floored by ``ctl``."""
    m = table_3_measures(t3, n_samples, seed, control, n_boot)
    return {c.claim: c.check for c in (claim_t3_1(m, ctl), claim_t3_2(m, ctl))}
