"""The rebuild spread: the Baseline and +RNN rows on further eflomal alignments (built, or read
from the cache where a ``spread`` build left them), their table, and the claims about the network
(Fig. 3, Table 3) measured on every alignment's network and judged on each."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ... import verdicts
from ...book.claims import ClaimCheck
from ...cache import ArtifactCache
from ..spread import across, further_cached, with_mean_sd
from .controls import controls, rescored
from .figure_3 import figure_3_claims, figure_3_pairs, scored_frame
from .network import best_eval
from .rows import BaselineRow, Replicate, RNNRow, bleu_of
from .setting import Params
from .systems import baseline_row, rnn_row
from .table_1 import dev_parts
from .long_sources import long_sources
from .table_2 import long_phrases, untrained_long
from .table_3 import table_3_claims, table_3_samples


def alignment_replicates(
    cache: ArtifactCache, P: Params, base: BaselineRow, rnn: RNNRow
) -> list[Replicate]:
    """The Baseline and +RNN rows on eflomal's alignments 1 (``base``, ``rnn``: the book's), 2,
    ..., ``alignment_replicates``: each further one its own alignment, phrase table, network
    (the same seed, updates and optimiser; its pairs are its table's) and MERT runs with every
    seed. eflomal's sampler takes no seed, so these are what a rebuild from an empty cache moves;
    the rows no claim reads (:data:`EXTENSION_ROWS`) are not built again. With
    ``cached_spread``, the further alignments whose rows the cache holds follow, none computed
    (:func:`rnnlib.experiments.spread.further_cached`)."""

    def replicate(r: int) -> Replicate:
        b = baseline_row(cache, P, alignment_run=r)
        only = dataclasses.replace(
            P, per_word_row=False, mert_default_seeds=0
        )  # the rows claims read
        return Replicate(r, b, rnn_row(cache, b, only))

    n = P.alignment_replicates
    out = [Replicate(1, base, rnn)] + [replicate(r) for r in range(2, n + 1)]
    if P.cached_spread:
        out += further_cached(cache, replicate, n + 1)
    return out


def network_claims(
    rnn: RNNRow, corpus, P: Params, cache: ArtifactCache
) -> dict[str, verdicts.Check]:
    """The claims about the network (Fig. 3: C-A-F3-1, C-A-F3-2; Table 3: C-A-T3-1, C-A-T3-2)
    measured on ``rnn`` exactly as the chapter measures them on its own row (the same pairs
    drawn from its frame, the long sources drawn from its phrase table with ``cache``
    (:func:`.long_sources.long_sources`), the same seeds, its untrained network as the
    control): the checks of a further alignment, which :func:`rnnlib.experiments.spread.across`
    sets beside the chapter's. Torch's global random state is left as it was."""
    seed, n_samples = P.seed, P.n_samples
    with torch.random.fork_rng(devices=[]):
        ctl = controls(rnn, corpus)
        frame = scored_frame(rnn, corpus)
        pick = figure_3_pairs(frame, P.scatter_points, seed)
        out = dict(figure_3_claims(pick, seed, rescored(pick, ctl.model, corpus), ctl))
        long, _ = long_sources(cache, rnn.scorer, rnn.model, ctl.model, corpus, P)
        phrases = long_phrases(long, P)
        samples = table_3_samples(phrases, rnn, corpus, n_samples, seed)
        uphrases = untrained_long(phrases)
        control = table_3_samples(uphrases, rnn, corpus, n_samples, seed, ctl.model)
        out.update(table_3_claims(samples, n_samples, seed, control, ctl))
    return out


def further_network_claims(
    replicates: Sequence[Replicate], corpus, P: Params, cache: ArtifactCache
) -> list[tuple[int, dict[str, verdicts.Check]]]:
    """``(alignment, network_claims)`` of every alignment but the chapter's first."""
    return [(rep.alignment, network_claims(rep.rnn, corpus, P, cache)) for rep in replicates[1:]]


def claims_across(
    found: dict[str, verdicts.Check], further: Sequence[tuple[int, dict[str, verdicts.Check]]]
) -> dict[str, verdicts.Check]:
    """``found`` (the chapter's checks on alignment 1), each judged on every alignment of
    ``further`` (:func:`further_network_claims`) that measures it (C-A-F3-3 is measured on the
    first alignment only: its count-drawn network is trained there); ``found`` itself with no
    further one."""
    return {
        claim: across(check, [(a, checks[claim]) for a, checks in further if claim in checks])
        for claim, check in found.items()
    }


def across_alignments(
    found: dict[str, verdicts.Check], further: Sequence[tuple[int, dict[str, verdicts.Check]]]
) -> list[ClaimCheck]:
    """:func:`claims_across` as the chapter records the checks
    (:func:`rnnlib.book.claims.record_all`; each verdict glued as ``claim-<ID>`` only)."""
    return [ClaimCheck(c, check) for c, check in claims_across(found, further).items()]


def replicates_table(replicates: Sequence[Replicate], n_tune: int) -> pd.DataFrame:
    """One row per word alignment: the Baseline's and +RNN's test BLEU (means over the MERT
    seeds), the gain on test and on the held-out dev sentences (:func:`dev_parts`), and the
    network's best held-out NLL per pair and per target token, and, when every alignment has
    its CSLM rows, their test gain +CSLM+RNN − +RNN; with ``mean`` and ``sd`` rows when there
    are several alignments."""
    rows = []
    with_cslm = all(rep.cslm is not None for rep in replicates)
    for rep in replicates:
        runs = {"Baseline": rep.base.runs, "+RNN": rep.rnn.runs}
        parts = dev_parts(runs, rep.base.data.dev_refs[0], n_tune)
        base_test = bleu_of(rep.base.runs, "test").mean()
        rnn_test = bleu_of(rep.rnn.runs, "test").mean()
        rows.append(
            {
                "alignment": str(rep.alignment),
                "Baseline test": base_test,
                "+RNN test": rnn_test,
                "+RNN − Baseline, test": rnn_test - base_test,
                "+RNN − Baseline, dev held out": parts["+RNN"][1].mean()
                - parts["Baseline"][1].mean(),
                "network NLL per pair": float(rep.rnn.scorer.artifact.extra["dev_nll"]),
                "network NLL per token": float(best_eval(rep.rnn.scorer)["dev_nll_token"]),
            }
        )
        if with_cslm:
            rows[-1]["+CSLM+RNN − +RNN, test"] = (
                bleu_of(rep.cslm["+CSLM+RNN"], "test").mean() - rnn_test
            )
    table = pd.DataFrame(rows).set_index("alignment")
    return with_mean_sd(table).round(3)


def _alignments(table: pd.DataFrame) -> int:
    """The alignments of a :func:`replicates_table` (its rows but ``mean`` and ``sd``)."""
    return len(table.index.difference(["mean", "sd"]))


def numbers(table: pd.DataFrame) -> dict[str, Any]:
    """The number of alignments and, with several, the standard deviation of the test and
    held-out dev gains and of the network's best held-out NLL per pair over them, as siblings
    ``-spread`` and ``-spread-n`` of ``cho-gain-test``, ``cho-gain-heldout`` and
    ``cho-best-dev-nll`` (read by ``rnnlib compare`` as their rebuild noise)."""
    n = _alignments(table)
    out: dict[str, Any] = {"cho-replicates-n": n}
    if n < 2:
        return out
    for col, name in (
        ("+RNN − Baseline, test", "cho-gain-test"),
        ("+RNN − Baseline, dev held out", "cho-gain-heldout"),
        ("network NLL per pair", "cho-best-dev-nll"),
    ):
        out[f"{name}-spread"] = (table.loc["sd", col], 3)
        out[f"{name}-spread-n"] = n
    return out


def spread_numbers(table: pd.DataFrame, P: Params) -> dict[str, Any]:
    """For the prose: the alignments built by this build and read from the cache, the standard
    deviations over them (NaN with one alignment; the CSLM rows' where every alignment has
    them) and the MERT runs a further alignment costs."""
    n = _alignments(table)
    built = min(P.alignment_replicates, n)
    sd = table.loc["sd"] if n >= 2 else pd.Series(dtype=float)
    col = "+CSLM+RNN − +RNN, test"
    return {
        "cho-replicates-built": built,
        "cho-replicates-read": n - built,
        "cho-replicates-sd-test": (sd.get("+RNN − Baseline, test", np.nan), 2),
        "cho-replicates-sd-heldout": (sd.get("+RNN − Baseline, dev held out", np.nan), 2),
        "cho-replicates-sd-baseline": (sd.get("Baseline test", np.nan), 2),
        "cho-replicates-sd-cslm": (sd.get(col, np.nan), 2),
        "cho-replicates-runs": 2 * P.mert_seeds,
    }


def spread_words(table: pd.DataFrame) -> str:
    """Whether this build measures the rebuild spread, in words for the prose."""
    if _alignments(table) < 2:
        return "not measured here: this build has one alignment"
    return "measured here"


#: the standard deviations the prose shows, by what moves
SPREAD_SHOWN = {
    "+RNN − Baseline, test": "the test gain of the RNN score (+RNN − Baseline)",
    "+RNN − Baseline, dev held out": "its held-out dev gain",
    "Baseline test": "the Baseline's test BLEU",
    "+CSLM+RNN − +RNN, test": "the test gain +CSLM+RNN − +RNN (where every alignment has it)",
}


def spread_table(table: pd.DataFrame) -> str:
    """The standard deviations over the alignments as a Markdown table for the prose, or, with
    one alignment, that there is none to give (at most 80 characters)."""
    n = _alignments(table)
    if n < 2:
        return "No standard deviation: this build has one alignment."
    rows = [
        f"| {what} | {table.loc['sd', col]:.2f} |"
        for col, what in SPREAD_SHOWN.items()
        if col in table.columns
    ]
    return f"| over {n} alignments | sd (BLEU) |\n|---|---|\n" + "\n".join(rows)


def t1_spread_words(table: pd.DataFrame) -> str:
    """What C-A-T1-1's verdict reads of the alignments, in words for the prose."""
    if _alignments(table) < 2:
        return "reads this build's one alignment: its verdict does not see a rebuild"
    return "reads every alignment's runs, so its verdict accounts for a rebuild"


def cslm_spread_words(table: pd.DataFrame) -> str:
    """Whether C-A-T1-2 ... C-A-T1-4 read every alignment too, in words for the prose."""
    if "+CSLM+RNN − +RNN, test" in table.columns:
        return "read every alignment too: the CSLM rows were built on each"
    return "read the first alignment's runs: the CSLM rows were built on it only"
