"""The floors of A Table 1's claims about the neural language model and the word penalty: what
the rows that add them must be able to do before their BLEU says anything about the claims.

* C-A-T1-2 and C-A-T1-4 need +CSLM+RNN above +RNN: a CSLM weaker than the n-gram model it is
  added to cannot be expected to raise BLEU, so the claims are measurable only where the CSLM is
  at least as good as the Kneser-Ney model of the same order on the same shortlist
  (:func:`rnnlib.experiments.cho2014.cslm.shortlist_kn`: the same sentences, every word outside
  the shortlist one ``[UNK]`` class, every word and one end of sentence counted), by perplexity
  on the dev references (:func:`cslm_lead`, :data:`CSLM_FLOOR`).
* C-A-T1-3 (paper A §4.2: "we were not able to achieve better performance on the test set") is
  a null claim: it holds trivially where the word penalty cannot move the output. The penalty
  counts a candidate's words outside the networks' shortlist (footnote 3); it can change the
  choice only in an n-best list where it takes more than one value. Its *reach*
  (:func:`wp_reach`) is what an oracle gains in test BLEU by reranking only those lists (every
  other sentence keeps +CSLM+RNN's choice): below the claim's own margin
  (:data:`~.table_1.WP_MARGIN`) no reranking with the penalty could have improved test BLEU by
  as much, so the claim is not measurable (paper A's shortlist covered about 93% of the words,
  so its penalty was active in most sentences; a shortlist that covers nearly every word leaves
  it idle)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ... import verdicts
from ...cache import Artifact, ArtifactCache
from ...smt.system import SMTResult, checksum
from .rows import BaselineRow, row_outputs
from .table_1 import WP_MARGIN, oracle_choice

#: C-A-T1-2 and C-A-T1-4: the CSLM's lead over the same-shortlist Kneser-Ney model (log
#: perplexity on the dev references, nats per word) must be at least 0: at least as good
CSLM_FLOOR = 0.0


def cslm_lead(cslm_ppl: float, kn_ppl: float) -> float:
    """Nats per word by which the CSLM (dev perplexity ``cslm_ppl``) beats the Kneser-Ney model on
    the same shortlist (``kn_ppl``): ``log kn_ppl - log cslm_ppl`` (negative: the CSLM is worse);
    NaN when either is missing."""
    if not (cslm_ppl and kn_ppl) or not (math.isfinite(cslm_ppl) and math.isfinite(kn_ppl)):
        return float("nan")
    return math.log(kn_ppl) - math.log(cslm_ppl)


def cslm_floored(check: verdicts.Check, cslm_ppl: float, kn_ppl: float) -> verdicts.Check:
    """``check`` (C-A-T1-2 or C-A-T1-4, as :func:`.table_1.table_1_checks` made it) also floored
    on :func:`cslm_lead` (:data:`CSLM_FLOOR`), beside its BLEU floor; the floor guards the tests
    that read a row with the CSLM, so a test without it (+RNN − Baseline) above the BLEU floor
    can still refute the claim. A check that judges nothing is returned as it is."""
    if check.rule in verdicts.NO_CONTROL_RULES:
        return check
    tests = [t[0] for t in check.evidence.get("tests", [])]
    return verdicts.floored(
        check,
        [("CSLM − same-shortlist Kneser–Ney, dev references", cslm_lead(cslm_ppl, kn_ppl))],
        CSLM_FLOOR,
        "nats per word",
        "the CSLM's lead in log perplexity over the Kneser–Ney model on its shortlist",
        reads=[[t for t in tests if "CSLM" in t]] if check.rule == "intervals_above" else None,
        add=True,
    )


def reach(
    lists: Sequence[Sequence[str]],
    lists_wp: Sequence[Sequence[float]],
    chosen: Sequence[str],
    refs: Sequence[str],
) -> tuple[float, float]:
    """``(reach, share)`` for one MERT seed: ``lists`` holds each test sentence's n-best list
    (detokenized candidates; only those where the penalty varies are read), ``lists_wp`` the
    word penalty of each candidate, ``chosen`` the row's output (+CSLM+RNN). ``reach``: corpus
    BLEU of ``chosen`` with the list's best candidate by the reference
    (:func:`.table_1.oracle_choice`) in the lists where the penalty varies, minus that of
    ``chosen``; ``share``: the share of lists where it varies. Only those lists are scored
    against the reference."""
    from ...bleu import corpus_bleu

    varies = [len(set(wp)) > 1 for wp in lists_wp]
    where = [i for i, v in enumerate(varies) if v]
    mixed = list(chosen)
    for i, best in zip(where, oracle_choice([lists[i] for i in where], [refs[i] for i in where])):
        mixed[i] = best
    gain = corpus_bleu(mixed, refs).score - corpus_bleu(list(chosen), refs).score
    return float(gain), float(np.mean(varies)) if varies else float("nan")


def wp_reach(
    cache: ArtifactCache,
    base: BaselineRow,
    rnn_runs: dict[int, SMTResult],
    cslm_rnn_runs: dict[int, SMTResult],
) -> Artifact | None:
    """The word penalty's reach (:func:`reach`) on test, per MERT seed, as an artifact
    (``cho2014/wp_reach``: ``reach.json``, keyed by both rows' evaluations and the shortlist):
    the +RNN row's test n-best lists (the lists +CSLM+RNN+WP reranks in mode ``lists``), the
    penalty of each candidate (its words outside the target shortlist, as
    :class:`rnnlib.smt.rescore.ShortlistWords` counts them), +CSLM+RNN's output of the same
    seed. Seconds at ``cpu`` (the sentence statistics of the candidates of the lists where the
    penalty varies). ``None`` when an evaluation kept no n-best lists."""
    from ...smt.rescore import ShortlistWords, load_nbest

    if not all((r.evaluation.path / "test.nbest.json.gz").exists() for r in rnn_runs.values()):
        return None
    vocab, refs = base.corpus.tgt_vocab, list(base.data.test_refs[0])
    config = {
        "rnn": [r.evaluation.key for r in rnn_runs.values()],
        "cslm_rnn": [r.evaluation.key for r in cslm_rnn_runs.values()],
        "shortlist": base.corpus.checksum,
        "words": len(vocab),
    }

    def make(out: Path, work: Path) -> dict:
        wp = ShortlistWords(vocab)
        chosen = row_outputs({"r": cslm_rnn_runs})["r"]["test"]
        found = []
        for r, ch in zip(rnn_runs.values(), chosen):
            lists = load_nbest(r.evaluation.path / "test.nbest.json.gz")
            lists_wp = [wp.values([t.words for t in lst])[:, 0].tolist() for lst in lists]
            text = [  # only the lists where the penalty varies are read
                [base.detokenize(t.words) for t in lst] if len(set(w)) > 1 else []
                for lst, w in zip(lists, lists_wp)
            ]
            found.append(reach(text, lists_wp, ch, refs))
        text = json.dumps({"reach": [g for g, _ in found], "share": [s for _, s in found]})
        (out / "reach.json").write_text(text, encoding="utf-8")
        return {"seeds": len(found)}

    return cache.build("cho2014/wp_reach", config, make, data=checksum(refs))


def numbers(cslm_ppl: float, kn_ppl: float, art: Artifact | None) -> dict[str, Any]:
    """The floors' quantities for the prose: the CSLM's lead over the same-shortlist Kneser-Ney
    model (:func:`cslm_lead`, nats per word) and its floor; the word penalty's reach
    (:func:`wp_reach`, BLEU) and the share (%) of test n-best lists where the penalty varies,
    means over the MERT seeds (NaN without n-best lists)."""
    out: dict[str, Any] = {
        "cho-cslm-lead": (cslm_lead(cslm_ppl, kn_ppl), 2),
        "cho-cslm-floor": CSLM_FLOOR,
        "cho-wp-reach": (float("nan"), 2),
        "cho-wp-varies": (float("nan"), 1),
    }
    if art is not None:
        saved = json.loads(art.file("reach.json").read_text(encoding="utf-8"))
        out["cho-wp-reach"] = (float(np.mean(saved["reach"])), 2)
        out["cho-wp-varies"] = (100 * float(np.mean(saved["share"])), 1)
    return out


def reach_of(art: Artifact | None) -> float | None:
    """The word penalty's reach of :func:`wp_reach`'s artifact, the mean over the MERT seeds
    (``None`` without one)."""
    if art is None:
        return None
    return float(np.mean(json.loads(art.file("reach.json").read_text())["reach"]))


def wp_floored(check: verdicts.Check, reach_bleu: float | None) -> verdicts.Check:
    """C-A-T1-3's ``check`` also floored on the word penalty's reach (``reach_bleu``,
    :func:`reach_of`) at the claim's margin :data:`~.table_1.WP_MARGIN`; unchanged when it
    judges nothing or the reach was not measured (``None``)."""
    if check.rule in verdicts.NO_CONTROL_RULES or reach_bleu is None:
        return check
    return verdicts.floored(
        check,
        [("word penalty's reach, test", reach_bleu)],
        WP_MARGIN,
        "BLEU",
        "the test BLEU an oracle gains by reranking only the n-best lists where the word "
        "penalty varies (below the margin the penalty could not improve BLEU by as much)",
        add=True,
    )


def floored_checks(
    checks: dict[str, verdicts.Check],
    cslm_ppl: float,
    kn_ppl: float,
    reach_bleu: float | None,
) -> dict[str, verdicts.Check]:
    """Table 1's checks (:func:`.table_1.table_1_checks`) with C-A-T1-2 and C-A-T1-4 floored on
    the CSLM (:func:`cslm_floored`: dev perplexities ``cslm_ppl`` and ``kn_ppl``) and C-A-T1-3 on
    the word penalty's reach (:func:`wp_floored`: ``reach_bleu``)."""
    out = dict(checks)
    for claim in ("C-A-T1-2", "C-A-T1-4"):
        if claim in out:
            out[claim] = cslm_floored(out[claim], cslm_ppl, kn_ppl)
    if "C-A-T1-3" in out:
        out["C-A-T1-3"] = wp_floored(out["C-A-T1-3"], reach_bleu)
    return out
