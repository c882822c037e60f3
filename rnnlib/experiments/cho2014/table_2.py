"""A Table 2: the three best targets of long source phrases, frequent and rare, by the
translation model and by the network; the paper's own table; the claims C-A-T2-1 ... C-A-T2-3,
which read each model's best target for the sources :mod:`.long_sources` draws from the whole
phrase table, against its chance value (1 / candidates)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ... import verdicts
from ...book import papers
from ...book.claims import ClaimCheck
from ...stats import (
    bootstrap_mean,
    mean_difference,
)
from .controls import Controls, rescored
from .setting import N_BOOT, Params


# -- Tables 2 and 3 -----------------------------------------------------------------------------
#: the chapter's parameters that choose the sources of Tables 2-3 (what their tables cite)
DRAWN = [
    "seed", "min_source_words", "frequent_count", "rare_count", "phrases_per_group",
    "long_sources",
]  # fmt: skip


@dataclass
class LongPhrases:
    """The source phrases of A Tables 2-3 (:func:`long_phrases`).

    ``long``: the rows of the scored frame whose source has at least ``min_source_words``
    words; ``groups``: ``"frequent"`` and ``"rare"`` -> every such source seen at least
    ``frequent_count`` / at most ``rare_count`` times in training; ``chosen``: the same keys ->
    the ``phrases_per_group`` sources drawn from each, in the frame's order."""

    long: pd.DataFrame
    groups: dict[str, list]
    chosen: dict[str, list]
    #: how many sources each group has in the whole phrase table (``None``: ``groups`` are all)
    population: dict[str, int] | None = None


def long_phrases(frame: pd.DataFrame, P: Params) -> LongPhrases:
    """The long source phrases of ``frame`` (:func:`scored_frame`), frequent and rare, and those
    drawn for A Tables 2-3 (``numpy.random.default_rng(seed)``, the frequent group first)."""
    long = frame[frame["src_len"] >= P.min_source_words]
    by_src = long.groupby("src")["src_count"].first()
    groups = {
        "frequent": by_src[by_src >= P.frequent_count].index.tolist(),
        "rare": by_src[by_src <= P.rare_count].index.tolist(),
    }
    rng = np.random.default_rng(P.seed)
    n = P.phrases_per_group
    chosen = {
        g: [srcs[i] for i in np.sort(rng.choice(len(srcs), size=min(n, len(srcs)), replace=False))]
        if srcs
        else []
        for g, srcs in groups.items()
    }
    return LongPhrases(long, groups, chosen, frame.attrs.get("population"))


def _top3(cand: pd.DataFrame, score: str) -> list[tuple]:
    """The three targets of ``cand`` (one source's rows) with the highest ``score``."""
    return cand.sort_values(score, ascending=False, kind="stable")["tgt"].head(3).tolist()


def _overlap(tm3: list, rnn3: list, candidates: int) -> float:
    """The share of the top-3 targets the translation model and the network have in common."""
    return len(set(tm3) & set(rnn3)) / max(1, min(3, candidates))


def bracket(words: Sequence[str]) -> str:
    return "[" + " ".join(words) + "]"


def mean_or_nan(x: Sequence[float]) -> float:
    return float(np.mean(x)) if len(x) else float("nan")


def table_2(phrases: LongPhrases) -> pd.DataFrame:
    """A Table 2: for each drawn source (index: group, source), how often it was seen and the
    three best targets by the translation model's direct probability and by the network."""
    rows = []
    for g, srcs in phrases.chosen.items():
        for s in srcs:
            cand = phrases.long[phrases.long["src"] == s]
            rows.append(
                {
                    "group": g,
                    "source": " ".join(s),
                    "seen": int(cand["src_count"].iloc[0]),
                    "translation model": " · ".join(bracket(t) for t in _top3(cand, "tm")),
                    "RNN Encoder–Decoder": " · ".join(bracket(t) for t in _top3(cand, "rnn")),
                }
            )
    columns = ["group", "source", "seen", "translation model", "RNN Encoder–Decoder"]
    return pd.DataFrame(rows, columns=columns).set_index(["group", "source"])


def paper_table_2() -> pd.DataFrame:
    """Paper A's own Table 2 (:data:`rnnlib.book.papers.A_TABLE2`), in the layout of
    :func:`table_2`: one row per source phrase, its group, and the two top-3 lists."""
    rows = [
        {
            "group": group,
            "source": src,
            "translation model": " · ".join(bracket(t.split()) for t in tm),
            "RNN Encoder–Decoder": " · ".join(bracket(t.split()) for t in rnn),
        }
        for group, entries in papers.A_TABLE2.items()
        for src, tm, rnn in entries
    ]
    return pd.DataFrame(rows).set_index(["group", "source"])


def numbers(phrases: LongPhrases, P: Params) -> dict[str, Any]:
    """Table 2's settings, the sizes of its groups (in the whole phrase table when
    ``phrases.population`` says), the mean top-3 overlap of the drawn frequent and rare sources
    and the mean length of their top-3 targets by each model."""
    overlap = {g: [] for g in phrases.chosen}
    len_tm, len_rnn = [], []
    for g, srcs in phrases.chosen.items():
        for s in srcs:
            cand = phrases.long[phrases.long["src"] == s]
            tm3, rnn3 = _top3(cand, "tm"), _top3(cand, "rnn")
            overlap[g].append(_overlap(tm3, rnn3, len(cand)))
            len_tm += [len(t) for t in tm3]
            len_rnn += [len(t) for t in rnn3]
    everyone = phrases.population or {g: len(v) for g, v in phrases.groups.items()}
    return {
        "cho-min-words": P.min_source_words,
        "cho-frequent-count": P.frequent_count,
        "cho-rare-count": P.rare_count,
        "cho-n-frequent": everyone["frequent"],
        "cho-n-rare": everyone["rare"],
        "cho-overlap-frequent": (mean_or_nan(overlap["frequent"]), 2),
        "cho-overlap-rare": (mean_or_nan(overlap["rare"]), 2),
        "cho-len-tm": (mean_or_nan(len_tm), 2),
        "cho-len-rnn": (mean_or_nan(len_rnn), 2),
        "cho-t2-sources": len(phrases.groups["frequent"]) + len(phrases.groups["rare"]),
    }


def _literal(targets: list[tuple], lex: dict) -> float:
    """The mean over ``targets`` of their per-word log lexical weight ``log lex(t|s) / |t|``."""
    return float(np.mean([lex[t] / max(1, len(t)) for t in targets]))


def per_source(phrases: LongPhrases) -> pd.DataFrame:
    """One row per source of both groups (all of them, not only the drawn ones; a source in both
    groups once in each): ``group``, ``candidates`` (its targets in the table), ``agree``
    (whether the translation model and the network rank the same target first), ``chance``
    (that agreement's chance value, 1 / candidates), ``overlap`` (``agree`` minus ``chance``;
    NaN with one candidate, where the two agree by construction), ``len_gap`` (mean length of
    the translation model's top-3 targets minus the network's, in words) and ``literal_gap``
    (the per-word log lexical weight lex(t|s) of the network's best target minus the
    translation model's: how literal the targets are, word for word, by the word alignment's
    lexical translation probabilities; NaN with one candidate, as ``overlap``)."""
    rows = []
    for g in ("frequent", "rare"):
        sub = phrases.long[phrases.long["src"].isin(set(phrases.groups[g]))]
        for _, cand in sub.groupby("src", sort=False):
            tm3, rnn3 = _top3(cand, "tm"), _top3(cand, "rnn")
            lex = dict(zip(cand["tgt"], cand["lex"]))
            n = len(cand)
            agree = float(tm3[0] == rnn3[0])
            rows.append(
                {
                    "group": g,
                    "candidates": n,
                    "agree": agree,
                    "chance": 1 / n,
                    "overlap": agree - 1 / n if n > 1 else np.nan,
                    "len_gap": np.mean([len(t) for t in tm3]) - np.mean([len(t) for t in rnn3]),
                    "literal_gap": _literal(rnn3[:1], lex) - _literal(tm3[:1], lex)
                    if n > 1
                    else np.nan,
                }
            )
    columns = ["group", "candidates", "agree", "chance", "overlap", "len_gap", "literal_gap"]
    return pd.DataFrame(rows, columns=columns)


def read_numbers(phrases: LongPhrases) -> dict[str, Any]:
    """What Table 2's claims read, for the prose: per group the sources read, the share whose
    best target the two models agree on and its chance value (the mean of 1 / candidates), and
    the mean per-word log lexical weight gap of the best targets, RNN − TM."""
    src = per_source(phrases)
    out: dict[str, Any] = {}
    for g in ("frequent", "rare"):
        sub = src[src["group"] == g]
        out[f"cho-t2-read-{g}"] = len(sub)
        out[f"cho-agree-{g}"] = (mean_or_nan(sub["agree"]), 2)
        out[f"cho-chance-{g}"] = (mean_or_nan(sub["chance"]), 2)
        out[f"cho-literal-{g}"] = (mean_or_nan(sub["literal_gap"].dropna()), 2)
    return out


def untrained_long(phrases: LongPhrases) -> LongPhrases:
    """``phrases`` with the network's scores replaced by the untrained network's (the ``rnn0``
    column of :func:`.long_sources.long_sources`): the same sources, groups and draws."""
    long = phrases.long.assign(rnn=phrases.long["rnn0"])
    return LongPhrases(long, phrases.groups, phrases.chosen, phrases.population)


def untrained_phrases(phrases: LongPhrases, model: torch.nn.Module, corpus) -> LongPhrases:
    """``phrases`` with the network's scores replaced by ``model``'s (the untrained network):
    the same sources, groups and draws."""
    return LongPhrases(rescored(phrases.long, model, corpus), phrases.groups, phrases.chosen)


def judged(
    check: verdicts.Check | None,
    control: verdicts.Check | None,
    why: str,
    what: str,
    ctl: Controls | None,
) -> verdicts.Check:
    """One claim of Tables 2-3: not measurable (``why``) when the check or its control could not
    be computed, else the check against its control (``what``: the control's system), floored
    by ``ctl`` when given."""
    if check is None or control is None:
        return verdicts.not_measurable(why)
    out = verdicts.controlled(check, what, control)
    return out if ctl is None else ctl.floor(out)


def _intervals(src: pd.DataFrame, boot, n_boot: int) -> dict[str, Any]:
    """One network's intervals over the sources of :func:`per_source`, in this order from
    ``boot``: the per-word lexical weight gap of the best targets (RNN − TM), over all long
    sources and over the rare ones (``literal``, ``None`` with fewer than two of either), and
    the best-target agreement above chance, frequent − rare (``overlap``, ``None`` likewise),
    with the counts of sources each read."""
    out: dict[str, Any] = {"literal": None, "overlap": None}
    lit = src.dropna(subset=["literal_gap"])
    rare = lit.loc[lit["group"] == "rare", "literal_gap"].to_numpy()
    out["n_literal"], out["n_literal_rare"] = len(lit), len(rare)
    if len(lit) >= 2 and len(rare) >= 2:
        label = "per-word log lexical weight of the best target, RNN − TM"
        out["literal"] = [
            (f"{label}, all long sources", *bootstrap_mean(lit["literal_gap"], n_boot, boot)),
            (f"{label}, rare sources", *bootstrap_mean(rare, n_boot, boot)),
        ]
    ok = src.dropna(subset=["overlap"])
    freq, rare = (ok.loc[ok["group"] == g, "overlap"].to_numpy() for g in ("frequent", "rare"))
    out["n_frequent"], out["n_rare"] = len(freq), len(rare)
    if len(freq) >= 2 and len(rare) >= 2:
        label = "agreement of TM and RNN on the best target above chance, frequent − rare"
        out["overlap"] = [(label, *mean_difference(freq, rare, n_boot, boot))]
    return out


@dataclass
class Table2Measures:
    """What Table 2's claims read: :func:`_intervals` of the trained network's best targets,
    then of the untrained network's (the control), from one generator; each network's
    :func:`per_source`; ``note``: what the intervals cover."""

    trained: dict[str, Any]
    untrained: dict[str, Any]
    sources: pd.DataFrame
    untrained_sources: pd.DataFrame
    note: str


def table_2_measures(
    phrases: LongPhrases, untrained: LongPhrases, seed: int, min_words: int, n_boot: int = N_BOOT
) -> Table2Measures:
    """:class:`Table2Measures` of ``phrases`` and ``untrained`` (the same sources under the
    untrained network), 95% bootstrap intervals over the sources
    (:func:`rnnlib.stats.bootstrap_mean`, :func:`rnnlib.stats.mean_difference`) from
    ``default_rng(seed + 8)``."""
    src, usrc = per_source(phrases), per_source(untrained)
    boot = np.random.default_rng(seed + 8)
    note = (
        f"{len(src)} source phrases of at least {min_words} words with at least 2 targets, "
        "frequent and rare, drawn from the whole phrase table; 95% bootstrap over the sources; "
        "one trained network (one seed)"
    )
    trained = _intervals(src, boot, n_boot)
    return Table2Measures(trained, _intervals(usrc, boot, n_boot), src, usrc, note)


UNTRAINED = "the untrained network (initialisation, the run's seed) on the same sources"


def claim_t2_1(m: Table2Measures, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-T2-1, the network's best target more literal than the TM's (a higher per-word
    lexical weight, over all long sources and over the rare ones); control: the untrained
    network; floored by ``ctl``. Paper A (§4.3): "In most cases, the choices of the target
    phrases by the RNN Encoder–Decoder are closer to actual or literal translations." """
    t, u = m.trained, m.untrained
    note = (
        "'closer to literal translations' read as more probable lexical "
        "translations word for word (lex(t|s) of the word alignment, per target word, "
        f"so length does not count), of each model's best target; {t['n_literal']} sources, "
        f"{t['n_literal_rare']} of them rare; {m.note}"
    )
    check = t["literal"] and verdicts.intervals_above(t["literal"], note=note)
    control = u["literal"] and verdicts.intervals_above(u["literal"], note="")
    why = "fewer than two long sources, or two rare ones, with at least 2 candidates"
    return ClaimCheck("C-A-T2-1", judged(check, control, why, UNTRAINED, ctl))


def claim_t2_2(m: Table2Measures) -> ClaimCheck:
    """C-A-T2-2, not measurable here (see its reason, with both networks' numbers). Paper A
    (§4.3): "We can observe that the RNN Encoder–Decoder prefers shorter phrases in
    general." """
    gap, ugap = mean_or_nan(m.sources["len_gap"]), mean_or_nan(m.untrained_sources["len_gap"])
    check = verdicts.not_measurable(
        "a sum of log-probabilities prefers shorter targets before any training: the untrained "
        f"network's top-3 targets are {ugap:.2f} words shorter than the TM's, the trained "
        f"network's {gap:.2f}; no rule on the lengths tells the claim from its absence"
    )
    return ClaimCheck("C-A-T2-2", check)


def claim_t2_3(m: Table2Measures, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-T2-3, the two models agreeing less on the best target, beyond chance (1 /
    candidates), for rare sources than for frequent ones; control: the untrained network;
    floored by ``ctl``. Paper A (§4.3): "we
    expect its scores to be better estimated for the frequent phrases but badly estimated for
    rare phrases." """
    t, u = m.trained, m.untrained
    note = (
        f"{t['n_frequent']} frequent and {t['n_rare']} rare sources; whether both rank the "
        f"same target first, its chance value 1 / candidates subtracted per source; {m.note}"
    )
    check = t["overlap"] and verdicts.intervals_above(t["overlap"], note=note)
    control = u["overlap"] and verdicts.intervals_above(u["overlap"], note="")
    why = "fewer than two frequent or two rare long sources with at least 2 candidates"
    return ClaimCheck("C-A-T2-3", judged(check, control, why, UNTRAINED, ctl))


def table_2_claims(
    phrases: LongPhrases,
    untrained: LongPhrases,
    P: Params,
    ctl: Controls | None = None,
    n_boot: int = N_BOOT,
) -> dict[str, verdicts.Check]:
    """The checks of C-A-T2-1 ... C-A-T2-3 (:func:`claim_t2_1` ...) on :func:`table_2_measures`
    of ``phrases`` and ``untrained`` (the control); floored by ``ctl``."""
    m = table_2_measures(phrases, untrained, P.seed, P.min_source_words, n_boot)
    found = (claim_t2_1(m, ctl), claim_t2_2(m), claim_t2_3(m, ctl))
    return {c.claim: c.check for c in found}
