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
from ...search import sample
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
    source, whether that most frequent sample is among the phrase table's targets for it."""

    table: pd.DataFrame
    in_table: list[bool]
    top_share: list[float]
    top_in_table: list[bool] = dataclasses.field(default_factory=list)


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
    phrase table lacks for that source."""
    model = rnn.model if model is None else model
    gen = torch.Generator(device=rnn.scorer.device).manual_seed(seed)
    rows, in_table, top_share, top_in = [], [], [], []
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
            known = set(phrases.long[phrases.long["src"] == s]["tgt"])
            in_table += [w in known for w in top]
            top_share.append(max(counts.values()) / len(hyps))
            top_in.append(max(counts, key=counts.get) in known)
            shown = " · ".join(
                f"{bracket(w)} (×{counts[w]})" + ("" if w in known else " *") for w in top
            )
            rows.append({"group": g, "source": " ".join(s), "samples (top 5 by score)": shown})
    columns = ["group", "source", "samples (top 5 by score)"]
    table = pd.DataFrame(rows, columns=columns).set_index(["group", "source"])
    return Table3(table, in_table, top_share, top_in)


def numbers(t3: Table3, n_samples: int) -> dict[str, Any]:
    """The samples per source, the share (%) of the shown samples in the phrase table, the mean
    share (%) of the most frequent sample and the share (%) of sources whose most frequent
    sample is in the table."""
    return {
        "cho-n-samples": n_samples,
        "cho-in-table": (100 * mean_or_nan(t3.in_table), 1),
        "cho-top-share": (100 * mean_or_nan(t3.top_share), 1),
        "cho-top-in-table": (100 * mean_or_nan(t3.top_in_table), 1),
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


def claim_t3_1(m: Table3Measures, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-T3-1, the samples concentrated on one (:data:`TOP_SHARE`) that is typically a correct
    translation, read as one of the table's targets for the source (:data:`TOP_CORRECT`);
    control: the untrained network's samples; floored by ``ctl``. Paper A (§4.3): "We can see
    that the RNN Encoder–Decoder is able to propose well-formed target phrases without looking
    at the actual phrase table." """
    check = _concentrated(m.trained, m.n_samples, _note(m))
    control = _concentrated(m.untrained, m.n_samples)
    why = "fewer than two sources were drawn"
    return ClaimCheck("C-A-T3-1", judged(check, control, why, UNTRAINED, ctl))


def _overlapping(t3: Table3, note: str = "") -> verdicts.Check | None:
    if not t3.in_table:
        return None
    shown, inside = len(t3.in_table), sum(t3.in_table)
    some = f"some shown samples are in the phrase table ({inside} of {shown})"
    return verdicts.all_true(
        [(some, any(t3.in_table)), (f"some are not ({shown - inside})", not all(t3.in_table))],
        note=note,
    )


def claim_t3_2(m: Table3Measures, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-T3-2, the samples overlap the phrase table's targets, but not completely; control:
    the untrained network's samples; floored by ``ctl``. Paper A (§4.3): "Importantly, the
    generated phrases do not overlap completely with the target phrases from the phrase
    table." """
    check, control = _overlapping(m.samples, _note(m)), _overlapping(m.control)
    return ClaimCheck("C-A-T3-2", judged(check, control, "no samples were drawn", UNTRAINED, ctl))


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
