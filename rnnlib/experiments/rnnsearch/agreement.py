"""B Fig. 3 against an independent aligner: RNNsearch-50's weights (B Eq. 6) teacher-forced on
the *reference* translations of the No UNK test pairs, read as word links (each reference word
linked to the source word of its largest weight) and scored against eflomal's symmetrised links
on the same pairs (``rnnsearch/test_links``), beside the position-only aligner
(:func:`rnnlib.experiments.rnnsearch.alignment_controls.diagonal_aligner`) and the untrained
network on the same pairs.

Tokens: eflomal reads the corpus' tokenized text (``corpus.text``), whose tokens the network's
ids encode one to one; a No UNK pair has no unknown word on either side, so source position i and
reference position j are the same word for both aligners. Scores: eflomal's links are the sure
links (no "possible" links), so the alignment error rate is AER = 1 - 2 |A & S| / (|A| + |S|)
(Och & Ney 2003 with P = S), precision |A & S| / |A| and recall |A & S| / |S|, pooled over the
sentences. The network's end row (the step that ends the translation) and the source's
``<end>`` column are no words: a word whose largest weight is on ``<end>`` gets no link."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...cache import Artifact, config_hash
from ...smt.align import align, format_links, parse_links
from ..baseline import smt_config, typed_params
from .alignment_controls import diagonal_matrices
from .controls import untrained_model
from .figure_3 import attention_matrices
from .setting import RNNsearchExperiment
from .training import Runs
from .translations import Translations

Links = set[tuple[int, int]]


def attention_links(w: np.ndarray) -> Links:
    """The links ``(source position, target position)`` of a weight matrix ``w (words + 1,
    source + 1)``: each word row (the end row left out) linked to the column of its largest
    weight, none when that column is the source's ``<end>``."""
    w = np.asarray(w)
    top = w[:-1].argmax(1)
    return {(int(i), j) for j, i in enumerate(top) if i < w.shape[1] - 1}


@dataclass
class LinkCounts:
    """Per sentence: the links an aligner proposes (``proposed``), eflomal's (``sure``) and the
    links in both (``common``)."""

    proposed: np.ndarray
    sure: np.ndarray
    common: np.ndarray

    def scores(self, i: np.ndarray | None = None) -> tuple[float, float, float]:
        """``(precision, recall, AER)`` in %, pooled over the sentences ``i`` (default: all)."""
        i = np.arange(len(self.sure)) if i is None else i
        a, s, c = self.proposed[i].sum(), self.sure[i].sum(), self.common[i].sum()
        p = 100 * c / a if a else np.nan
        r = 100 * c / s if s else np.nan
        aer = 100 * (1 - 2 * c / (a + s)) if a + s else np.nan
        return float(p), float(r), float(aer)


def link_counts(proposed: list[Links], sure: list[Links]) -> LinkCounts:
    """:class:`LinkCounts` of the proposed links of each sentence against eflomal's."""
    if len(proposed) != len(sure):
        raise ValueError(f"link_counts: {len(proposed)} sentences proposed, {len(sure)} sure")
    return LinkCounts(
        np.array([len(a) for a in proposed], dtype=int),
        np.array([len(s) for s in sure], dtype=int),
        np.array([len(a & s) for a, s in zip(proposed, sure)], dtype=int),
    )


def _pairs(ex: RNNsearchExperiment, tr: Translations) -> np.ndarray:
    """The No UNK test pairs (test positions) whose links are read."""
    return ex.test[tr.known]


def test_links(ex: RNNsearchExperiment, tr: Translations) -> Artifact:
    """eflomal's links of the No UNK test pairs (source and reference), aligned together with
    the chapter's training pairs (the first ``max_train``), both directions symmetrised by
    grow-diag-final-and with the baseline chapter's eflomal settings (the profile's)
    (``rnnsearch/test_links``, ``links.txt``: one line per pair, ``i-j``: source i, target j)."""
    corpus, pairs, p = ex.corpus, _pairs(ex, tr), ex.P
    n_train = len(corpus.train) if p.max_train is None else min(p.max_train, len(corpus.train))
    smt = smt_config(typed_params(ex.root, p.profile, p))
    settings = {
        "model": smt.eflomal_model,
        "rel_iterations": smt.eflomal_rel_iterations,
        "n_samplers": smt.eflomal_samplers,
    }

    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        src = [x.split() for x in corpus.text("train", "src")[:n_train]]
        tgt = [x.split() for x in corpus.text("train", "tgt")[:n_train]]
        test_src, test_tgt = corpus.text("test", "src"), corpus.text("test", "tgt")
        src += [test_src[int(i)].split() for i in pairs]
        tgt += [test_tgt[int(i)].split() for i in pairs]
        links = align(src, tgt, **settings)[n_train:]
        (out / "links.txt").write_text("".join(format_links(x) + "\n" for x in links), "utf-8")
        return {"seconds": time.perf_counter() - t, "aligned_pairs": len(src)}

    config = {
        **settings,
        "symmetrisation": "grow-diag-final-and",
        "train_pairs": n_train,
        "test_pairs": config_hash([int(i) for i in pairs]),
    }
    return ex.cache.build("rnnsearch/test_links", config, make, data=corpus.checksum)


def read_links(art: Artifact) -> list[Links]:
    """The links of :func:`test_links`, one set per pair."""
    lines = art.file("links.txt").read_text(encoding="utf-8").split("\n")[:-1]
    return [set(parse_links(x)) for x in lines]


@dataclass
class Agreement:
    """The agreement with eflomal: ``table`` (one row per aligner: precision, recall, AER),
    ``numbers`` (glue name -> (value, digits)) and ``cited`` (the artifacts read)."""

    table: pd.DataFrame
    numbers: dict
    cited: list[Artifact]


#: the aligners of the agreement table, as printed
ALIGNERS = ("RNNsearch-50", "position-only aligner", "untrained RNNsearch")


def agreement_table(matrices: dict[str, list[np.ndarray]], sure: list[Links]) -> pd.DataFrame:
    """Precision, recall and AER (%) of each aligner's links (``matrices``: name -> its weight
    matrices, one per pair) against eflomal's ``sure`` links, one row per aligner."""
    rows = []
    for name, ws in matrices.items():
        p, r, aer = link_counts([attention_links(w) for w in ws], sure).scores()
        rows.append({"aligner": name, "precision (%)": p, "recall (%)": r, "AER (%)": aer})
    return pd.DataFrame(rows).set_index("aligner").round(1)


def agreement(ex: RNNsearchExperiment, runs: Runs, tr: Translations) -> Agreement:
    """:class:`Agreement` of RNNsearch-50, the position-only aligner (each row as sharp as
    RNNsearch-50's) and the untrained network, all teacher-forced on the references of the No
    UNK test pairs (computed now, seconds), against eflomal's links (:func:`test_links`)."""
    pairs = _pairs(ex, tr)
    sources = [ex.corpus.test.src[int(i)] for i in pairs]
    refs = [ex.corpus.test.tgt[int(i)] for i in pairs]
    batch = ex.P.decode_batch
    trained = attention_matrices(runs.model(ex, "RNNsearch-50"), sources, refs, batch)
    untrained = attention_matrices(untrained_model(ex), sources, refs, batch)
    links = test_links(ex, tr)
    ws = dict(zip(ALIGNERS, (trained, diagonal_matrices(trained), untrained)))
    table = agreement_table(ws, read_links(links))
    aer = table["AER (%)"]
    numbers = {
        "rns-agree-pairs": (len(pairs), None),
        "rns-agree-train-pairs": (int(links.config["train_pairs"]), None),
        "rns-agree-aer": (float(aer.iloc[0]), 1),
        "rns-agree-aer-diag": (float(aer.iloc[1]), 1),
        "rns-agree-aer-init": (float(aer.iloc[2]), 1),
    }
    return Agreement(table, numbers, [runs.runs["RNNsearch-50"], links])
