"""A Table 1: BLEU of the phrase-based system with the RNN score and the CSLM, its intervals
(the MERT seeds' spread and the sentences resampled, Clark et al. 2011), its numbers and the
claims C-A-T1-1 ... C-A-T1-4."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import verdicts
from ...book import papers
from ...book.claims import ClaimCheck
from ...cache import Artifact, ArtifactCache
from ...smt.system import (
    SMTResult,
    checksum,
)
from ...stats import (
    rebuilds_and_sentences,
    seeds_and_sentences,
)
from ...verdicts import BLEU_FLOOR
from .rows import (
    DEFAULTS_ROW,
    EXTENSION_ROWS,
    TUNED_ON_ROW,
    BaselineRow,
    Replicate,
    RNNRow,
    bleu_of,
    pooled_rows,
    row_outputs,
)
from . import equal_effort
from .setting import N_BOOT

# -- Table 1 ------------------------------------------------------------------------------------
#: our rows of A Table 1 -> the paper's row (None: the paper has no such row)
PAPER_ROWS = {
    "Baseline": "Baseline",
    TUNED_ON_ROW: None,
    "+RNN": "RNN",
    "+RNN per word": None,
    "+CSLM": None,
    "+CSLM+RNN": "CSLM + RNN",
    "+CSLM+RNN+WP": "CSLM + RNN + WP",
}


def _sd(x: np.ndarray) -> float:
    return x.std(ddof=1) if len(x) > 1 else np.nan


def dev_parts(
    rows: dict[str, dict[int, SMTResult]], refs: Sequence[str], n_tune: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> ``(tuning (seeds,), held out (seeds,))``: each MERT run's BLEU on the dev
    sentences MERT tuned on (the first ``n_tune``) and on the other dev sentences it decoded
    (``nan`` when there are none), from the outputs its evaluation kept."""
    from ...bleu import corpus_bleu

    out = {}
    for name, outputs in row_outputs(rows).items():
        tune, held = [], []
        for lines in outputs["dev"]:
            tune.append(corpus_bleu(lines[:n_tune], refs[:n_tune]).score)
            rest = lines[n_tune:]
            held.append(corpus_bleu(rest, refs[n_tune : len(lines)]).score if rest else np.nan)
        out[name] = (np.array(tune), np.array(held))
    return out


def table_1_rows(
    base: BaselineRow, rnn: RNNRow, cslm: dict[str, dict[int, SMTResult]]
) -> dict[str, dict[int, SMTResult]]:
    """The rows of A Table 1 in the chapter's order, name -> MERT seed -> run: Baseline, the
    Baseline tuned on (:data:`TUNED_ON_ROW`, where it was built), +RNN, the rows no claim reads
    where they were built (+RNN per word, :data:`DEFAULTS_ROW`), then the CSLM rows ``cslm``
    (:func:`.cslm.cslm_rows`' runs)."""
    rows = {"Baseline": base.runs}
    if getattr(rnn, "runs_tuned_on", None):
        rows[TUNED_ON_ROW] = rnn.runs_tuned_on
    rows["+RNN"] = rnn.runs
    for name, runs in (("+RNN per word", rnn.runs_per_word), (DEFAULTS_ROW, rnn.runs_defaults)):
        if runs:
            rows[name] = runs
    return {**rows, **cslm}


def table_1(
    rows: dict[str, dict[int, SMTResult]],
    parts: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    intervals: dict[str, dict[str, tuple[float, float]]] | None = None,
    cslm_label: str | None = None,
) -> pd.DataFrame:
    """A Table 1: for each row of ``rows`` (name -> seed -> run; the names of
    :data:`PAPER_ROWS`), the mean and standard deviation over the MERT runs of dev and test
    BLEU, the dev and test gains over the Baseline, and the paper's numbers; rounded to 2 digits.

    With ``parts`` (:func:`dev_parts`) the dev BLEU is given as two parts that are never mixed:
    the tuning set's ("tuning", the paper's dev: it tuned on newstest2012+2013 and reported
    them) and the held-out dev sentences' ("dev held out"), each with its gain over the
    Baseline; without it, one "dev" column (every dev sentence). With ``intervals``
    (:func:`gain_intervals`: name -> ``"dev held out"``/``"test"`` -> ``(low, high)``) each gain
    over the Baseline gets its 95% interval (MERT seeds and sentence resampling together, Clark
    et al. 2011) as a column of text ``[low, high]``. With ``cslm_label``
    (:func:`.cslm.cslm_row_label`) a "language model" column says
    which rows add the CSLM and how it compares with the n-gram model."""
    base_test = bleu_of(rows["Baseline"], "test").mean()
    base_dev = bleu_of(rows["Baseline"], "dev").mean()
    paper_base = papers.A_TABLE1["Baseline"]

    def interval(name: str, split: str) -> str:
        low, high = (intervals or {}).get(name, {}).get(split, (np.nan, np.nan))
        return "" if np.isnan(low) else f"[{low:.2f}, {high:.2f}]"

    out = []
    for name, runs in rows.items():
        dev, test = bleu_of(runs, "dev"), bleu_of(runs, "test")
        paper = papers.A_TABLE1[PAPER_ROWS.get(name)] if PAPER_ROWS.get(name) else None
        p_dev, p_test = (paper["dev"], paper["test"]) if paper else (np.nan, np.nan)
        row: dict[str, Any] = {"system": name}
        if cslm_label is not None:
            row["language model"] = cslm_label if "CSLM" in name else "n-gram"
        if parts is None:
            row.update(
                {"dev": dev.mean(), "dev sd": _sd(dev), "dev − Baseline": dev.mean() - base_dev}
            )
        else:
            tune, held = parts[name]
            base_tune, base_held = parts["Baseline"]
            row.update(
                {
                    "tuning": tune.mean(),
                    "tuning sd": _sd(tune),
                    "tuning − Baseline": tune.mean() - base_tune.mean(),
                    "dev held out": held.mean(),
                    "dev held out sd": _sd(held),
                    "dev held out − Baseline": held.mean() - base_held.mean(),
                }
            )
            if intervals is not None:
                row["dev held out − Baseline, 95%"] = interval(name, "dev held out")
        row.update(
            {
                "test": test.mean(),
                "test sd": _sd(test),
                "test − Baseline": test.mean() - base_test,
            }
        )
        if intervals is not None:
            row["test − Baseline, 95%"] = interval(name, "test")
        row.update(
            {
                "MERT runs": len(runs),
                "paper dev": p_dev,
                "paper test": p_test,
                "paper dev − Baseline": p_dev - paper_base["dev"],
                "paper test − Baseline": p_test - paper_base["test"],
            }
        )
        out.append(row)
    return pd.DataFrame(out).set_index("system").round(2)


def gain_intervals(
    cache: ArtifactCache,
    rows: dict[str, dict[int, SMTResult]],
    base: BaselineRow,
    n_tune: int | None,
) -> tuple[dict[str, dict[str, tuple[float, float]]], Artifact]:
    """``(intervals, artifact)``: ``intervals`` is name -> ``"dev held out"``/``"test"`` ->
    ``(low, high)``, the 95% interval of each row's
    gain over the Baseline (:func:`clark`: the MERT seeds' spread and :data:`N_BOOT` paired
    resamples of the sentences) on test and on the held-out dev sentences (from
    :func:`dev_claim_start` on; absent when MERT tuned on every dev sentence). The Baseline
    has none. They are an artifact (``cho2014/table1_intervals``, keyed by every row's
    evaluation; about 1.5 s a difference), returned beside them for the table's provenance.
    They read this build's word alignment only, where C-A-T1-1's check pools several when
    there are (:func:`table_1_checks`)."""
    refs = {"dev": list(base.data.dev_refs[0]), "test": list(base.data.test_refs[0])}
    n_dev = len(row_outputs({"Baseline": rows["Baseline"]})["Baseline"]["dev"][0])
    first = dev_claim_start(n_tune, n_dev)
    config = {
        "rows": {name: [r.evaluation.key for r in runs.values()] for name, runs in rows.items()},
        "n_samples": N_BOOT,
        "dev_from": first,
        "rules": 1,  # raise when what make computes changes
    }

    def make(out: Path, work: Path) -> dict:
        outputs = row_outputs(rows)
        splits = {"test": ("test", 0, len(refs["test"]))}
        if first:
            splits["dev held out"] = ("dev", first, n_dev)
        found: dict[str, dict[str, list[float]]] = {}
        for name in rows:
            if name == "Baseline":
                continue
            found[name] = {}
            for label, (split, lo, hi) in splits.items():
                a = [lines[lo:hi] for lines in outputs[name][split]]
                b = [lines[lo:hi] for lines in outputs["Baseline"][split]]
                _, _, low, high = clark(label, a, b, refs[split][lo:hi])
                found[name][label] = [low, high]
        (out / "intervals.json").write_text(json.dumps(found), encoding="utf-8")
        return {"rows": len(found)}

    art = cache.build(
        "cho2014/table1_intervals", config, make, data=checksum(refs["dev"], refs["test"])
    )
    saved = json.loads(art.file("intervals.json").read_text(encoding="utf-8"))
    return {name: {k: tuple(v) for k, v in d.items()} for name, d in saved.items()}, art


def numbers(table1: pd.DataFrame, rows: dict[str, dict[int, SMTResult]]) -> dict[str, Any]:
    """The gains of Table 1 over the Baseline (ours and the paper's), the largest MERT standard
    deviation of the Baseline and +RNN rows, and the number of MERT runs. Our dev gains are the
    table's: on the tuning set and the held-out dev sentences (``cho-gain-tuning…``,
    ``cho-gain-heldout…``) when it has them, else on every dev sentence (``cho-gain-dev…``);
    the test gains are ``cho-gain-test`` (+RNN) and ``cho-gain-<row>-test``."""
    with warnings.catch_warnings():  # one MERT run: no standard deviation, NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        noise = np.nanmax([table1.loc["Baseline", "test sd"], table1.loc["+RNN", "test sd"]])
    dev_gains = (
        [("tuning − Baseline", "tuning"), ("dev held out − Baseline", "heldout")]
        if "tuning" in table1
        else [("dev − Baseline", "dev")]
    )
    out: dict[str, Any] = {}
    for name, suffix in (
        ("+RNN", ""),
        ("+CSLM", "-cslm"),
        ("+CSLM+RNN", "-cslm-rnn"),
        ("+CSLM+RNN+WP", "-cslm-rnn-wp"),
    ):
        for col, key in dev_gains:
            out[f"cho-gain-{key}{suffix}"] = (table1.loc[name, col], 2)
        test = f"cho-gain{suffix}-test" if suffix else "cho-gain-test"  # the names cited so far
        out[test] = (table1.loc[name, "test − Baseline"], 2)
    out["cho-mert-sd"] = (noise, 2)
    out["cho-seeds"] = len(rows["Baseline"])
    out["cho-wp-margin"] = WP_MARGIN
    out["cho-bleu-floor"] = BLEU_FLOOR
    paper = papers.A_TABLE1
    for row, key in (
        ("RNN", "rnn"),
        ("CSLM + RNN", "cslm-rnn"),
        ("CSLM + RNN + WP", "cslm-rnn-wp"),
    ):
        for split in ("dev", "test"):
            gain = paper[row][split] - paper["Baseline"][split]
            out[f"cho-paper-gain-{key}-{split}"] = (gain, 2)
    return out


#: the margin of C-A-T1-3's null claim ("the word penalty does not improve test BLEU"), in
#: BLEU: just under the smallest gain paper A's Table 1 counts as an improvement (the RNN
#: score's +0.57 on test), so a word penalty that gains less than this has not improved BLEU
#: in the paper's own terms
WP_MARGIN = 0.5


def nbest_oracle(runs: dict[int, SMTResult], refs: Sequence[str], detokenize) -> list[list[str]]:
    """Each MERT seed's test n-best lists (``test.nbest.json.gz`` of its evaluation) reranked by
    the reference (:func:`oracle_choice`). A system that BLEU must prefer: the control of the
    null claim C-A-T1-3."""
    from ...smt.rescore import load_nbest

    out = []
    for r in runs.values():
        lists = load_nbest(r.evaluation.path / "test.nbest.json.gz")
        out.append(oracle_choice([[detokenize(t.words) for t in lst] for lst in lists], refs))
    return out


def oracle_choice(cands: Sequence[Sequence[str]], refs: Sequence[str]) -> list[str]:
    """For each sentence, the candidate of ``cands`` (its n-best list, detokenized) with the
    highest smoothed sentence BLEU against its reference (add-one n-gram precisions and the
    brevity penalty, from sacreBLEU's statistics); ``""`` for an empty list."""
    from ...bleu import sufficient_stats

    flat = [c for cs in cands for c in cs]
    if not flat:
        return ["" for _ in cands]
    _, st = sufficient_stats(flat, [ref for ref, cs in zip(refs, cands) for _ in cs])
    prec = np.log((st[:, 2:6] + 1) / (st[:, 6:10] + 1)).mean(1)
    score = prec + np.minimum(0, 1 - st[:, 1] / np.maximum(st[:, 0], 1))
    best, k = [], 0
    for cs in cands:
        best.append(cs[int(np.argmax(score[k : k + len(cs)]))] if cs else "")
        k += len(cs)
    return best


def clark(label: str, a: list[list[str]], b: list[list[str]], refs: Sequence[str]) -> tuple:
    """``(label, difference, low, high)`` of two MERT-tuned rows' mean BLEU (``a``, ``b``: each
    seed's output) with the 95% interval of :func:`rnnlib.stats.seeds_and_sentences` (Clark et
    al. 2011: the seeds' spread and :data:`N_BOOT` paired resamples of the sentences, t
    quantile), for :func:`rnnlib.verdicts.intervals_above`."""
    r = seeds_and_sentences(a, b, refs, N_BOOT)
    return (label, r["diff"], r["low"], r["high"])


#: the glue name of each Table 1 claim's verdict in the chapter's prose
GLUES = {
    "C-A-T1-1": "cho-t1-verdict",
    "C-A-T1-2": "cho-c2",
    "C-A-T1-3": "cho-c3",
    "C-A-T1-4": "cho-c4",
}

ONE_RUN = (
    "one MERT run per row: the optimiser's noise, the larger part of a row's "
    "difference (Clark et al. 2011), has no estimate"
)
SAME = "each compared row against itself (two identical systems)"


class Gains:
    """The differences of Table 1's rows the claims read, each computed once.

    ``outputs``: name -> split -> each MERT seed's output (:func:`row_outputs`); ``refs``:
    split -> the references; ``pooled``: the rows over independent word alignments, name ->
    split -> alignment -> MERT seed -> output (:func:`pooled_rows`), or ``None``. A claim reads
    every alignment when each row it reads was built on every alignment (``over``), else the
    chapter's alignment alone, for all of its differences."""

    def __init__(self, outputs, refs, pooled=None):
        self.outputs, self.refs, self.pooled = outputs, refs, pooled
        self.seeds = len(outputs["Baseline"]["test"])
        self.alignments = len(pooled["Baseline"]["test"]) if pooled is not None else 1
        self.use_pooled = self.alignments > 1
        self.done: dict[tuple, tuple] = {}

    def note(self, over: bool) -> str:
        """What an interval covers: the chapter's alignment's seeds, or every alignment."""
        n_test = len(self.refs["test"])
        if not over:
            return (
                f"means over {self.seeds} MERT runs per row; 95% interval of Clark et al. "
                f"(2011): the seeds' spread (t quantile) and {N_BOOT} paired resamples of the "
                f"{n_test} test sentences; not covered: one word alignment, phrase table, "
                "network and CSLM"
            )
        n, per = self.alignments, len(self.pooled["Baseline"]["test"][0])
        return (
            f"means over {n} independent word alignments (each with its phrase table "
            f"and network), each the mean of {per} MERT runs per row; 95% interval: the spread "
            f"of the {n} alignments' gains (t quantile, {n - 1} degrees of "
            f"freedom: the alignment, not the MERT run, is the independent unit) and {N_BOOT} "
            f"paired resamples of the {n_test} test sentences, so a rebuild's new "
            "alignment is inside the noise"
        )

    def where(self, split: str) -> str:
        """The sentences a difference on ``split`` reads, in words for its label."""
        return split

    def rebuilt_for(self, *names) -> bool:
        """Whether every row named was built on every alignment."""
        return self.use_pooled and all(n in self.pooled for n in names)

    def diff(self, a, b, s, over: bool) -> tuple:
        """``(label, a − b, low, high)`` on split ``s``, each difference once (b − a's negated)."""
        if (b, a, s, over) in self.done:
            _, d, lo, hi = self.done[(b, a, s, over)]
            return (f"{a} − {b}, {self.where(s)}", -d, -hi, -lo)
        if (a, b, s, over) not in self.done:
            label = f"{a} − {b}, {self.where(s)}"
            if over:
                pooled, refs = self.pooled, self.refs[s]
                r = rebuilds_and_sentences(pooled[a][s], pooled[b][s], refs, N_BOOT)
                self.done[(a, b, s, over)] = (label, r["diff"], r["low"], r["high"])
            else:
                o = self.outputs
                self.done[(a, b, s, over)] = clark(label, o[a][s], o[b][s], self.refs[s])
        return self.done[(a, b, s, over)]

    def mean_test(self, name, over: bool) -> float:
        """A row's mean test BLEU over its seeds (and alignments, ``over``)."""
        if over:
            runs_ = [o for group in self.pooled[name]["test"] for o in group]
        else:
            runs_ = self.outputs[name]["test"]
        return mean_bleu(runs_, self.refs["test"])

    def finish(self, c, names, over: bool) -> verdicts.Check:
        """``c`` with the floor on every row read, and the rebuilds it covers."""
        values = [(f"{n}, test", self.mean_test(n, over)) for n in names]
        c = verdicts.floored(c, values, BLEU_FLOOR, "BLEU", "the mean test BLEU of each row read")
        if over:
            c = dataclasses.replace(c, rebuilds=f"pooled over {self.alignments} word alignments")
        return c

    def compared(self, triples) -> verdicts.Check:
        """Every ``(a, b, split)`` difference above 0, against each ``b`` against itself (C-A-T1-1
        without the Baseline tuned on: :func:`claim_t1_1`)."""
        names = sorted({n for a, b, _ in triples for n in (a, b)})
        over = self.rebuilt_for(*names)
        tests = [self.diff(a, b, s, over) for a, b, s in triples]
        control = [self.diff(b, b, s, over) for _, b, s in triples]
        c = verdicts.controlled(
            verdicts.intervals_above(tests, self.note(over)),
            SAME,
            verdicts.intervals_above(control),
        )
        return self.finish(c, names, over)


#: the control of C-A-T1-1 at equal tuning effort
EXTRA_TUNING = (
    "the Baseline tuned on as long as +RNN, without the RNN score, against the Baseline "
    "(the extra tuning alone)"
)


def claim_t1_1(gains: Gains) -> ClaimCheck:
    """C-A-T1-1, the RNN score's gain on dev and test at equal tuning effort: +RNN, whose MERT
    starts from the Baseline's tuned weights, against :data:`TUNED_ON_ROW`, the Baseline tuned
    on from the same weights for as many decodings without the score. Its control is that extra
    tuning alone (the Baseline tuned on against the Baseline), which holds where the Baseline's
    MERT left BLEU to find: the rule then cannot credit the feature. Without that row (MERT
    started +RNN from the defaults, as the Baseline) +RNN is read against the Baseline, each
    against itself as the control. Paper A (§4.2): "As expected, adding features computed by
    neural networks consistently improves the performance over the baseline performance." """
    if TUNED_ON_ROW not in gains.outputs:
        check = gains.compared([("+RNN", "Baseline", s) for s in ("dev", "test")])
        return ClaimCheck("C-A-T1-1", check, GLUES["C-A-T1-1"])
    names = ["+RNN", TUNED_ON_ROW, "Baseline"]
    over = gains.rebuilt_for(*names)
    tests = [gains.diff("+RNN", TUNED_ON_ROW, s, over) for s in ("dev", "test")]
    extra = [gains.diff(TUNED_ON_ROW, "Baseline", s, over) for s in ("dev", "test")]
    check = verdicts.controlled(
        verdicts.intervals_above(tests, gains.note(over)),
        EXTRA_TUNING,
        verdicts.intervals_above(extra),
    )
    return ClaimCheck("C-A-T1-1", gains.finish(check, names, over), GLUES["C-A-T1-1"])


def claim_t1_2(gains: Gains) -> ClaimCheck:
    """C-A-T1-2 at equal tuning effort (:func:`.equal_effort.t1_2`): +CSLM+RNN above +RNN's
    n-best lists re-tuned without the CSLM (:data:`.equal_effort.LISTS_ROW`, which stands for
    +RNN) on dev and test, and above every other row on test; its control the extra MERT round
    alone; not measurable without that row. Paper A (§4.2): "The best performance was achieved
    when we used both CSLM and the phrase scores from the RNN Encoder–Decoder." """
    return ClaimCheck("C-A-T1-2", equal_effort.t1_2(gains, ("dev", "test")), GLUES["C-A-T1-2"])


def claim_t1_3(gains: Gains, oracle: list[list[str]] | None) -> ClaimCheck:
    """C-A-T1-3, a null claim: the word penalty's test gain stays under :data:`WP_MARGIN`; its
    control, which must not hold, is the n-best oracle ``oracle`` against +CSLM+RNN. Paper A
    (§4.2, on the word penalty): "However, in this case we were not able to achieve better
    performance on the test set, but only on the development set." """
    wp_rows = ["+CSLM+RNN", "+CSLM+RNN+WP"]
    over = gains.rebuilt_for(*wp_rows)
    wp = verdicts.within_margin(
        [gains.diff("+CSLM+RNN+WP", "+CSLM+RNN", "test", over)],
        WP_MARGIN,
        side="above",
        note=gains.note(over) + f"; holds when the gain's interval stays under +{WP_MARGIN:g} BLEU",
    )
    if oracle is None:
        check = verdicts.not_measurable("no n-best lists, so no control for the null claim")
        return ClaimCheck("C-A-T1-3", check, GLUES["C-A-T1-3"])
    test = gains.outputs["+CSLM+RNN"]["test"]
    label = "n-best oracle − +CSLM+RNN, test"
    ctrl = verdicts.within_margin(
        [clark(label, oracle, test, gains.refs["test"])], WP_MARGIN, side="above"
    )
    what = "the +RNN row's test n-best lists reranked by the reference (an oracle)"
    check = gains.finish(verdicts.controlled(wp, what, ctrl), wp_rows, over)
    return ClaimCheck("C-A-T1-3", check, GLUES["C-A-T1-3"])


def claim_t1_4(gains: Gains) -> ClaimCheck:
    """C-A-T1-4 at equal tuning effort (:func:`.equal_effort.t1_4`), on test: Baseline < +RNN <
    +CSLM+RNN and the largest gain under 2 BLEU (the book's reading of "modest"); its control
    each step's extra tuning alone; not measurable without :data:`.equal_effort.LISTS_ROW`.
    Paper A (§4.2): "As expected, adding features computed by neural networks consistently
    improves the performance over the baseline performance. The best performance was achieved
    when we used both CSLM and the phrase scores from the RNN Encoder–Decoder." """
    return ClaimCheck("C-A-T1-4", equal_effort.t1_4(gains), GLUES["C-A-T1-4"])


def table_1_claims(
    outputs: dict[str, dict[str, list[list[str]]]],
    refs: dict[str, Sequence[str]],
    oracle: list[list[str]] | None = None,
    pooled: dict[str, dict[str, list[list[list[str]]]]] | None = None,
) -> dict[str, verdicts.Check]:
    """The checks of C-A-T1-1 ... C-A-T1-4 on the rows of Table 1 (:class:`Gains`: ``outputs``,
    ``refs``, ``pooled``), in this order, each difference with the interval of :func:`clark`
    (or :func:`rnnlib.stats.rebuilds_and_sentences` over the alignments of ``pooled``, where
    every row a claim reads was built on each: the alignment is then the independent unit, so
    its interval covers a rebuild's new alignment); each check's control is the extra tuning
    alone (C-A-T1-1: :func:`claim_t1_1`; C-A-T1-2 and C-A-T1-4: the extra MERT round of
    :mod:`.equal_effort`, not measurable without its row :data:`.equal_effort.LISTS_ROW`),
    C-A-T1-3's the n-best ``oracle``; floor: :data:`BLEU_FLOOR` on every row read. Not
    measurable with one MERT run per row."""
    gains = Gains(outputs, refs, pooled)
    one_run = verdicts.not_measurable(ONE_RUN)
    if gains.seeds < 2 and not gains.use_pooled:
        return {f"C-A-T1-{k}": one_run for k in (1, 2, 3, 4)}
    c1 = claim_t1_1(gains)
    if gains.seeds < 2:  # C-A-T1-1 read the alignments' runs; the other rows have one run each
        return {"C-A-T1-1": c1.check, **{f"C-A-T1-{k}": one_run for k in (2, 3, 4)}}
    found = [c1, claim_t1_2(gains), claim_t1_3(gains, oracle), claim_t1_4(gains)]
    return {c.claim: c.check for c in found}


def effort_words(checks: dict[str, verdicts.Check]) -> str:
    """What C-A-T1-1's control (the extra tuning alone: :func:`claim_t1_1`) found, in words
    for the prose (:func:`.equal_effort.control_words`): whether the Baseline tuned on gains over
    the Baseline beyond the noise, and so explains +RNN's gain over the Baseline as well as the
    feature could."""
    check = checks["C-A-T1-1"]
    if check.control is None or check.control.what != EXTRA_TUNING:
        return "was not measured (no Baseline tuned on, or one MERT run a row)"
    return equal_effort.control_words(check, "+RNN", "the Baseline")


def claims_to_record(checks: dict[str, verdicts.Check]) -> list[ClaimCheck]:
    """The checks of :func:`table_1_checks` as the chapter records them, each verdict also glued
    under its name in :data:`GLUES`."""
    return [ClaimCheck(claim, check, GLUES[claim]) for claim, check in checks.items()]


def dev_claim_start(n_tune: int | None, n_dev: int) -> int:
    """The first dev sentence the claims' dev halves read: the first one MERT did not tune on
    (``n_tune``), so that a row's dev gain is not its own tuning objective; 0 (every dev
    sentence) when MERT tuned on all of them or ``n_tune`` is ``None``."""
    return n_tune if n_tune is not None and n_tune < n_dev else 0


def dev_claim_numbers(n_tune: int | None, n_dev: int) -> dict[str, Any]:
    """How many dev sentences the claims' dev halves read (:func:`dev_claim_start` on)."""
    return {"cho-dev-claim-n": n_dev - dev_claim_start(n_tune, n_dev)}


def dev_claim_words(n_tune: int | None, n_dev: int) -> str:
    """Which dev sentences the claims' dev halves read, in words for the prose."""
    if dev_claim_start(n_tune, n_dev):
        return "the held-out dev sentences"
    return "every dev sentence, MERT's tuning set (none was held out)"


def table_1_checks(
    cache: ArtifactCache,
    rows: dict[str, dict[int, SMTResult]],
    base: BaselineRow,
    n_tune: int | None = None,
    replicates: Sequence["Replicate"] = (),
) -> dict[str, verdicts.Check]:
    """:func:`table_1_claims` on the rows' outputs (:func:`row_outputs`), the first reference
    stream of dev and test, and the n-best oracle of the +RNN row's seeds (:func:`nbest_oracle`;
    ``None`` when its evaluation kept no n-best lists); the dev halves read the dev sentences
    from :func:`dev_claim_start` on (those MERT did not tune on). The checks are an artifact
    (``cho2014/table1_checks``: ``checks.json``, keyed by every row's evaluation): their
    intervals resample the sentences of every seed of every row, about a minute at ``cpu``.
    ``replicates`` (:func:`alignment_replicates`; more than one): C-A-T1-1 reads the Baseline,
    Baseline tuned on and +RNN rows of every alignment (:func:`pooled_rows`)."""
    import json

    refs = {"dev": list(base.data.dev_refs[0]), "test": list(base.data.test_refs[0])}
    rows = {k: v for k, v in rows.items() if k not in EXTENSION_ROWS}  # the paper's rows only
    runs = rows["+RNN"]
    n_dev = len(row_outputs({"Baseline": rows["Baseline"]})["Baseline"]["dev"][0])
    first = dev_claim_start(n_tune, n_dev)
    pooled = pooled_rows(replicates) if len(replicates) > 1 else None
    config = {
        "rows": {name: [r.evaluation.key for r in runs_.values()] for name, runs_ in rows.items()},
        "n_samples": N_BOOT,
        "dev_from": first,
        "rules": 5,  # raise when table_1_claims changes what it computes
    }
    if pooled is not None:  # absent otherwise: the keys of one-alignment builds stay
        config["pooled"] = {
            name: [[r.evaluation.key for r in runs_.values()] for runs_ in groups]
            for name, groups in pooled.items()
        }

    def make(out: Path, work: Path) -> dict:
        has_lists = all((r.evaluation.path / "test.nbest.json.gz").exists() for r in runs.values())
        oracle = nbest_oracle(runs, refs["test"], base.detokenize) if has_lists else None
        outputs = row_outputs(rows)
        for parts in outputs.values():
            parts["dev"] = [lines[first:] for lines in parts["dev"]]
        grouped = None
        if pooled is not None:  # name -> split -> alignment -> seed -> output
            grouped = {name: {"dev": [], "test": []} for name in pooled}
            for name, groups in pooled.items():
                for runs_ in groups:
                    outs = row_outputs({name: runs_})[name]
                    grouped[name]["dev"].append([lines[first:] for lines in outs["dev"]])
                    grouped[name]["test"].append(outs["test"])
        checks = table_1_claims(
            outputs,
            {**refs, "dev": refs["dev"][first:n_dev]},
            oracle,
            pooled=grouped,
        )
        text = json.dumps({c: dataclasses.asdict(k) for c, k in checks.items()}, ensure_ascii=False)
        (out / "checks.json").write_text(text, encoding="utf-8")
        return {"claims": len(checks)}

    art = cache.build(
        "cho2014/table1_checks", config, make, data=checksum(refs["dev"], refs["test"])
    )
    saved = json.loads(art.file("checks.json").read_text(encoding="utf-8"))
    checks = {c: verdicts.Check.from_dict(d) for c, d in saved.items()}
    if pooled is not None:  # said here too: an artifact stored before checks said it lacks it
        pooled_over = f"pooled over {len(replicates)} word alignments"
        checks["C-A-T1-1"] = dataclasses.replace(checks["C-A-T1-1"], rebuilds=pooled_over)
    return checks


def mean_bleu(outputs: list[list[str]], refs: Sequence[str]) -> float:
    """The mean corpus BLEU of a row's seeds."""
    from ...bleu import corpus_bleu

    return float(np.mean([corpus_bleu(o, refs).score for o in outputs]))
