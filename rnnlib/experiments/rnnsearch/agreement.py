"""B Fig. 3 against an independent aligner: RNNsearch-50's weights (B Eq. 6) teacher-forced on
the *reference* translations of the No UNK test pairs, read as word links (each reference word
linked to the source word of its largest weight) and scored against eflomal's symmetrised links
on the same pairs (``smt/test_links``), beside the position-only aligner
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
from .alignment_controls import (
    ALIGNERS,
    Links,
    LinkCounts,
    aer_gain,
    attention_links,
    diagonal_matrices,
    link_counts,
    shuffled_rows,
)
from .controls import untrained_model
from .figure_3 import attention_matrices
from .setting import RNNsearchExperiment
from .training import Runs
from .translations import Translations


def _pairs(ex: RNNsearchExperiment, tr: Translations) -> np.ndarray:
    """The No UNK test pairs (test positions) whose links are read."""
    return ex.test[tr.known]


def reference_links(ex: RNNsearchExperiment, tr: Translations) -> Artifact:
    """eflomal's links of the No UNK test pairs (source and reference), aligned together with
    the chapter's training pairs (the first ``max_train``), both directions symmetrised by
    grow-diag-final-and with the baseline chapter's eflomal settings (the profile's)
    (``smt/test_links``, ``links.txt``: one line per pair, ``i-j``: source i, target j). Kept
    among the phrase-based system's eflomal alignments (``smt/``), not among the artifacts of
    the chapter's networks: eflomal samples without a seed, so these links stay what they are
    when the networks are trained again."""
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
    return ex.cache.build("smt/test_links", config, make, data=corpus.checksum)


def read_links(art: Artifact) -> list[Links]:
    """The links of :func:`reference_links`, one set per pair."""
    lines = art.file("links.txt").read_text(encoding="utf-8").split("\n")[:-1]
    return [set(parse_links(x)) for x in lines]


@dataclass
class Agreement:
    """The agreement with eflomal: ``table`` (one row per aligner: precision, recall, AER),
    ``numbers`` (glue name -> (value, digits)), ``cited`` (the artifacts read), ``counts`` (the
    link counts of each aligner of :data:`ALIGNERS`, by name) and ``shuffled`` (those of
    RNNsearch-50's rows in a random order: C-B-F3-5's control)."""

    table: pd.DataFrame
    numbers: dict
    cited: list[Artifact]
    counts: dict[str, LinkCounts]
    shuffled: LinkCounts


def aligner_counts(matrices: dict[str, list[np.ndarray]], sure: list[Links]) -> dict:
    """``name -> LinkCounts`` of each aligner's links (``matrices``: name -> its weight
    matrices, one per pair) against eflomal's ``sure`` links."""
    return {
        name: link_counts([attention_links(w) for w in ws], sure) for name, ws in matrices.items()
    }


def agreement_table(counts: dict[str, LinkCounts]) -> pd.DataFrame:
    """Precision, recall and AER (%) of each aligner (``counts``: :func:`aligner_counts`), one
    row per aligner."""
    rows = []
    for name, c in counts.items():
        p, r, aer = c.scores()
        rows.append({"aligner": name, "precision (%)": p, "recall (%)": r, "AER (%)": aer})
    return pd.DataFrame(rows).set_index("aligner").round(1)


def agreement(ex: RNNsearchExperiment, runs: Runs, tr: Translations) -> Agreement:
    """:class:`Agreement` of RNNsearch-50, the position-only aligner (each row as sharp as
    RNNsearch-50's) and the untrained network, all teacher-forced on the references of the No
    UNK test pairs (computed now, seconds), against eflomal's links (:func:`reference_links`)."""
    pairs, p = _pairs(ex, tr), ex.P
    sources = [ex.corpus.test.src[int(i)] for i in pairs]
    refs = [ex.corpus.test.tgt[int(i)] for i in pairs]
    trained = attention_matrices(runs.model(ex, "RNNsearch-50"), sources, refs, p.decode_batch)
    untrained = attention_matrices(untrained_model(ex), sources, refs, p.decode_batch)
    links = reference_links(ex, tr)
    sure = read_links(links)
    ws = dict(zip(ALIGNERS, (trained, diagonal_matrices(trained), untrained)))
    counts = aligner_counts(ws, sure)
    shuffled = aligner_counts({"shuffled": shuffled_rows(trained, p.seed)}, sure)["shuffled"]
    table = agreement_table(counts)
    aer = table["AER (%)"]
    base, seed = counts[ALIGNERS[1]], np.random.default_rng([p.seed, 11])
    gain = aer_gain(counts[ALIGNERS[0]], base, p.n_boot, seed)
    numbers = {
        "rns-agree-pairs": (len(pairs), None),
        "rns-agree-train-pairs": (int(links.config["train_pairs"]), None),
        "rns-agree-aer": (float(aer.iloc[0]), 1),
        "rns-agree-aer-diag": (float(aer.iloc[1]), 1),
        "rns-agree-aer-init": (float(aer.iloc[2]), 1),
        "rns-agree-gain": (gain[0], 1),
        "rns-agree-gain-low": (gain[1], 1),
        "rns-agree-gain-high": (gain[2], 1),
        "rns-agree-shuffled": (float(shuffled.scores()[2]), 1),
    }
    cited = [runs.runs["RNNsearch-50"], links]
    return Agreement(table, numbers, cited, counts, shuffled)
