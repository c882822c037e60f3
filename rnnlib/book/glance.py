"""Results at a glance: one row per numbered table and figure of both papers, read from a build's records.

Each :class:`Item` names the chapter and the glued figure or table that regenerates it, the
paper's headline value (from :mod:`rnnlib.book.papers`, where the paper prints one) and how to
state ours from the numbers the chapter recorded (:mod:`rnnlib.book.results`). Nothing here is a
result: every value of the table is read from the build's records when the results chapter runs,
so a chapter rerun with other parameters changes the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import papers

A1, B1, B2 = papers.A_TABLE1, papers.B_TABLE1, papers.B_TABLE2


@dataclass(frozen=True)
class Item:
    id: str  # inventory ID, e.g. "B-T1"
    title: str
    chapter: str  # file stem of the chapter that regenerates it
    name: str  # glue name of the figure or table there
    figure: bool  # a figure (linked by its label) or a table (linked to its chapter)
    paper: str  # the paper's headline value, or what the paper shows
    ours: Callable  # (value: name -> glued value) -> str


def _f(x, digits=2, sign=False):
    if x is None or x != x:  # not measured (NaN)
        return "—"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


ITEMS: list[Item] = [
    Item(
        "A-T1",
        "BLEU of the phrase-based system with the RNN score",
        "cho2014",
        "cho-table1",
        False,
        f"+RNN − Baseline: {_f(A1['RNN']['dev'] - A1['Baseline']['dev'], sign=True)} dev, "
        f"{_f(A1['RNN']['test'] - A1['Baseline']['test'], sign=True)} test",
        lambda v: f"+RNN − Baseline: {_f(v('cho-gain-dev'), sign=True)} dev, {_f(v('cho-gain-test'), sign=True)} test "
        f"(MERT runs' sd up to {_f(v('cho-mert-sd'))})",
    ),
    Item(
        "A-T2",
        "Top target phrases, translation model against RNN",
        "cho2014",
        "cho-table2",
        False,
        "examples: the RNN's targets shorter and more literal",
        lambda v: f"mean length of the top targets: RNN {_f(v('cho-len-rnn'))}, TM {_f(v('cho-len-tm'))} words; "
        f"TM–RNN top-3 overlap {_f(v('cho-overlap-frequent'))} (frequent) and "
        f"{_f(v('cho-overlap-rare'))} (rare sources)",
    ),
    Item(
        "A-T3",
        "Samples from the RNN Encoder–Decoder",
        "cho2014",
        "cho-table3",
        False,
        "examples: well-formed, not all in the phrase table",
        lambda v: f"{_f(v('cho-in-table'), 1)}% of the shown samples are in the phrase table",
    ),
    Item(
        "A-F1",
        "The RNN Encoder–Decoder",
        "cho2014",
        "cho-fig1",
        True,
        "diagram",
        lambda v: "drawn by code",
    ),
    Item(
        "A-F2",
        "The gated recurrent unit",
        "cho2014",
        "cho-fig2",
        True,
        "diagram",
        lambda v: "drawn by code",
    ),
    Item(
        "A-F3",
        "RNN score against translation-model score",
        "cho2014",
        "cho-fig3",
        True,
        "a broad cloud (no coefficient printed)",
        lambda v: f"Pearson {_f(v('cho-pearson'))}, Spearman {_f(v('cho-spearman'))} "
        f"({v('cho-scatter-n')} pairs)",
    ),
    Item(
        "A-F4",
        "Word embeddings, 2-D",
        "representations",
        "rep-fig4",
        True,
        "similar words cluster (by eye)",
        lambda v: f"{_f(v('rep-neighbours'), 0)}-NN category purity {_f(v('rep-word-trained'), 3)} against chance {_f(v('rep-word-chance'), 3)}",
    ),
    Item(
        "A-F5",
        "Phrase representations c, 2-D",
        "representations",
        "rep-fig5",
        True,
        "phrases of the same meaning cluster (by eye)",
        lambda v: f"semantic-class purity {_f(v('rep-sem-trained'), 3)} against chance {_f(v('rep-sem-chance'), 3)}",
    ),
    Item(
        "A-F6",
        "Word embeddings, enlarged regions",
        "representations",
        "rep-fig6",
        True,
        "enlarged regions",
        lambda v: "regions chosen by code (see the chapter)",
    ),
    Item(
        "A-F7",
        "Phrase representations, enlarged regions",
        "representations",
        "rep-fig7",
        True,
        "phrases of the same pattern cluster (by eye)",
        lambda v: f"pattern purity {_f(v('rep-pat-trained'), 3)} against chance {_f(v('rep-pat-chance'), 3)}",
    ),
    Item(
        "B-T1",
        "BLEU, All and No UNK",
        "rnnsearch",
        "rns-table1",
        False,
        f"RNNsearch-50 {B1['RNNsearch-50']['all']:.2f}, RNNencdec-50 {B1['RNNencdec-50']['all']:.2f} (All)",
        lambda v: f"RNNsearch-50 {_f(v('rns-bleu-rnnsearch-50'))}, RNNencdec-50 {_f(v('rns-bleu-rnnencdec-50'))} "
        f"(All); difference {_f(v('rns-gap50'), sign=True)} [{_f(v('rns-gap50-low'))}, "
        f"{_f(v('rns-gap50-high'))}]",
    ),
    Item(
        "B-T2",
        "Learning statistics",
        "rnnsearch",
        "rns-table2",
        False,
        f"dev NLL RNNsearch-50 {B2['RNNsearch-50']['dev_nll']}, RNNenc-50 {B2['RNNenc-50']['dev_nll']}",
        lambda v: f"dev NLL RNNsearch-50 {_f(v('rns-devnll-rnnsearch-50'), 1)}, RNNencdec-50 "
        f"{_f(v('rns-devnll-rnnencdec-50'), 1)}",
    ),
    Item(
        "B-T3",
        "Translations of long sentences",
        "rnnsearch",
        "rns-table3",
        False,
        "examples: RNNencdec-50 drifts, RNNsearch-50 keeps the meaning",
        lambda v: f"RNNsearch-50 − RNNencdec-50 on sentences of 30+ tokens: {v('rns-t3-gap')}",
    ),
    Item(
        "B-F1",
        "The RNNsearch model",
        "rnnsearch",
        "rns-model",
        True,
        "diagram",
        lambda v: "drawn by code",
    ),
    Item(
        "B-F2",
        "BLEU against sentence length",
        "rnnsearch",
        "rns-length",
        True,
        "RNNencdec drops with length, RNNsearch-50 does not",
        lambda v: f"RNNsearch-50 − RNNencdec-50: {v('rns-gap-short')}; {v('rns-gap-long')}",
    ),
    Item(
        "B-F3",
        "Alignments of RNNsearch-50",
        "rnnsearch",
        "rns-alignments",
        True,
        "largely monotonic",
        lambda v: f"{_f(v('rns-align-monotone'), 1)}% of rows monotone over {v('rns-align-panels')} panels",
    ),
]

__all__ = ["ITEMS", "Item"]


def rebuild_cost(build_log, cache_root) -> "pandas.DataFrame":
    """Minutes each chapter's artifacts took to compute, from an empty cache: for every distinct
    artifact a chapter looked up in this build (``build-log.jsonl``), the wall time recorded in its
    sidecar when it was computed (hit or not now), summed per chapter; with the artifacts' count and
    how many were computed in this build. An artifact two chapters share counts for the first.
    A run resumed after an interruption records the time of its last stretch only.
    """
    import json
    from pathlib import Path

    import pandas as pd

    from ..cache import SIDECAR

    seen, rows = set(), {}
    for line in Path(build_log).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        row = rows.setdefault(
            event["chapter"], {"artifacts": 0, "computed now": 0, "minutes from empty": 0.0}
        )
        if not event["hit"]:
            row["computed now"] += 1
        ident = (event["kind"], event["key"])
        if ident in seen:
            continue
        seen.add(ident)
        row["artifacts"] += 1
        meta = Path(cache_root) / event["kind"] / event["key"] / SIDECAR
        if meta.is_file():
            row["minutes from empty"] += (
                json.loads(meta.read_text(encoding="utf-8")).get("wall_time_s", 0.0) / 60
            )
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "chapter"
    return frame.round({"minutes from empty": 1})


__all__ = ["ITEMS", "Item", "rebuild_cost"]
