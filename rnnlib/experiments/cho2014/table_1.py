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
from ...book.chapter import Number
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
    BaselineRow,
    Replicate,
    RNNRow,
    bleu_of,
    pooled_rows,
    row_outputs,
)
from .setting import N_BOOT

# -- Table 1 ------------------------------------------------------------------------------------
#: our rows of A Table 1 -> the paper's row (None: the paper has no such row)
PAPER_ROWS = {
    "Baseline": "Baseline",
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
    """The rows of A Table 1 in the chapter's order, name -> MERT seed -> run: Baseline, +RNN,
    the rows no claim reads where they were built (+RNN per word, :data:`DEFAULTS_ROW`), then
    the CSLM rows ``cslm`` (:func:`.cslm.cslm_rows`' runs)."""
    rows = {"Baseline": base.runs, "+RNN": rnn.runs}
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


def table_1_numbers(table1: pd.DataFrame, rows: dict[str, dict[int, SMTResult]]) -> list[Number]:
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
    out = []
    for name, suffix in (
        ("+RNN", ""),
        ("+CSLM", "-cslm"),
        ("+CSLM+RNN", "-cslm-rnn"),
        ("+CSLM+RNN+WP", "-cslm-rnn-wp"),
    ):
        for col, key in dev_gains:
            out.append(Number(f"cho-gain-{key}{suffix}", table1.loc[name, col], 2))
        test = f"cho-gain{suffix}-test" if suffix else "cho-gain-test"  # the names cited so far
        out.append(Number(test, table1.loc[name, "test − Baseline"], 2))
    out += [
        Number("cho-mert-sd", noise, 2),
        Number("cho-seeds", len(rows["Baseline"])),
        Number("cho-wp-margin", WP_MARGIN),
        Number("cho-bleu-floor", BLEU_FLOOR),
    ]
    paper = papers.A_TABLE1
    for row, key in (
        ("RNN", "rnn"),
        ("CSLM + RNN", "cslm-rnn"),
        ("CSLM + RNN + WP", "cslm-rnn-wp"),
    ):
        for split in ("dev", "test"):
            gain = paper[row][split] - paper["Baseline"][split]
            out.append(Number(f"cho-paper-gain-{key}-{split}", gain, 2))
    return out


#: the margin of C-A-T1-3's null claim ("the word penalty does not improve test BLEU"), in
#: BLEU: just under the smallest gain paper A's Table 1 counts as an improvement (the RNN
#: score's +0.57 on test), so a word penalty that gains less than this has not improved BLEU
#: in the paper's own terms
WP_MARGIN = 0.5


def nbest_oracle(runs: dict[int, SMTResult], refs: Sequence[str], detokenize) -> list[list[str]]:
    """Each MERT seed's test n-best lists (``test.nbest.json.gz`` of its evaluation) reranked by
    the reference: for each sentence the candidate with the highest smoothed sentence BLEU
    (add-one n-gram precisions and the brevity penalty, from sacreBLEU's statistics). A system
    that BLEU must prefer: the control of the null claim C-A-T1-3."""
    from ...bleu import sufficient_stats
    from ...smt.rescore import load_nbest

    out = []
    for r in runs.values():
        lists = load_nbest(r.evaluation.path / "test.nbest.json.gz")
        cands = [[detokenize(t.words) for t in lst] for lst in lists]
        flat = [c for cs in cands for c in cs]
        _, st = sufficient_stats(flat, [ref for ref, cs in zip(refs, cands) for _ in cs])
        prec = np.log((st[:, 2:6] + 1) / (st[:, 6:10] + 1)).mean(1)
        score = prec + np.minimum(0, 1 - st[:, 1] / np.maximum(st[:, 0], 1))
        best, k = [], 0
        for cs in cands:
            best.append(cs[int(np.argmax(score[k : k + len(cs)]))] if cs else "")
            k += len(cs)
        out.append(best)
    return out


def clark(label: str, a: list[list[str]], b: list[list[str]], refs: Sequence[str]) -> tuple:
    """``(label, difference, low, high)`` of two MERT-tuned rows' mean BLEU (``a``, ``b``: each
    seed's output) with the 95% interval of :func:`rnnlib.stats.seeds_and_sentences` (Clark et
    al. 2011: the seeds' spread and :data:`N_BOOT` paired resamples of the sentences, t
    quantile), for :func:`rnnlib.verdicts.intervals_above`."""
    r = seeds_and_sentences(a, b, refs, N_BOOT)
    return (label, r["diff"], r["low"], r["high"])


def table_1_claims(
    outputs: dict[str, dict[str, list[list[str]]]],
    refs: dict[str, Sequence[str]],
    oracle: list[list[str]] | None = None,
    pooled: dict[str, dict[str, list[list[list[str]]]]] | None = None,
) -> dict[str, verdicts.Check]:
    """The checks of C-A-T1-1 ... C-A-T1-4 on the rows of Table 1 (``outputs``: name -> split
    -> each MERT seed's output, :func:`row_outputs`; ``refs``: split -> the references): each
    difference of two rows with the interval of :func:`clark`; every check's control is the
    same rule on a row against itself (two identical systems), C-A-T1-3's (a null claim, a
    margin of :data:`WP_MARGIN`) on the n-best oracle ``oracle`` against +CSLM+RNN; floor:
    :data:`BLEU_FLOOR` on every row read. Not measurable with one MERT run per row.

    ``pooled`` (the rebuild spread): the rows' outputs over independent word alignments, name
    -> split -> alignment -> MERT seed -> output (each alignment with its phrase table, network
    and MERT seeds; :func:`pooled_rows`): the Baseline and +RNN rows, and the CSLM rows where every
    alignment has them. A claim whose rows are all there reads them with
    :func:`rnnlib.stats.rebuilds_and_sentences` (C-A-T1-1 always; C-A-T1-2 ... C-A-T1-4 with the
    CSLM rows): the alignment is the independent unit, so its interval covers a rebuild's new
    alignment. The others read the chapter's alignment alone, all of their differences."""
    seeds = len(outputs["Baseline"]["test"])
    one_run = verdicts.not_measurable(
        "one MERT run per row: the optimiser's noise, the larger part of a row's "
        "difference (Clark et al. 2011), has no estimate"
    )
    alignments = len(pooled["Baseline"]["test"]) if pooled is not None else 1
    use_pooled = alignments > 1
    if seeds < 2 and not use_pooled:
        return {f"C-A-T1-{k}": one_run for k in (1, 2, 3, 4)}
    note = (
        f"means over {seeds} MERT runs per row; 95% interval of Clark et al. (2011): the seeds' "
        f"spread (t quantile) and {N_BOOT} paired resamples of the {len(refs['test'])} test "
        f"sentences; not covered: one word alignment, phrase table, network and CSLM"
    )
    if use_pooled:
        per = len(pooled["Baseline"]["test"][0])
        note_r = (
            f"means over {alignments} independent word alignments (each with its phrase table "
            f"and network), each the mean of {per} MERT runs per row; 95% interval: the spread "
            f"of the {alignments} alignments' gains (t quantile, {alignments - 1} degrees of "
            f"freedom: the alignment, not the MERT run, is the independent unit) and {N_BOOT} "
            f"paired resamples of the {len(refs['test'])} test sentences, so a rebuild's new "
            "alignment is inside the noise"
        )
    same = "each compared row against itself (two identical systems)"
    done: dict[tuple, tuple] = {}

    def rebuilt_for(*names) -> bool:  # every row named was built on every alignment
        return use_pooled and all(n in pooled for n in names)

    # a claim reads every alignment when each row it reads was built on every alignment, else
    # the chapter's alignment alone (``over``: which, for all of its differences)
    def diff(a, b, s, over: bool):  # each difference once (b − a's: a − b's, negated)
        if (b, a, s, over) in done:
            _, d, lo, hi = done[(b, a, s, over)]
            return (f"{a} − {b}, {s}", -d, -hi, -lo)
        if (a, b, s, over) not in done:
            label = f"{a} − {b}, {s}"
            if over:
                r = rebuilds_and_sentences(pooled[a][s], pooled[b][s], refs[s], N_BOOT)
                done[(a, b, s, over)] = (label, r["diff"], r["low"], r["high"])
            else:
                done[(a, b, s, over)] = clark(label, outputs[a][s], outputs[b][s], refs[s])
        return done[(a, b, s, over)]

    def mean_test(name, over: bool) -> float:
        runs_ = (
            [o for group in pooled[name]["test"] for o in group] if over else outputs[name]["test"]
        )
        return mean_bleu(runs_, refs["test"])

    def finish(c, names, over: bool):  # the floor on every row read, and the rebuilds covered
        values = [(f"{n}, test", mean_test(n, over)) for n in names]
        c = verdicts.floored(c, values, BLEU_FLOOR, "BLEU", "the mean test BLEU of each row read")
        if over:
            c = dataclasses.replace(c, rebuilds=f"pooled over {alignments} word alignments")
        return c

    def compared(triples, extra=()):
        """``extra``: ``over -> [(test, its control)]`` beside the differences."""
        names = sorted({n for a, b, _ in triples for n in (a, b)})
        over = rebuilt_for(*names)
        more = extra(over) if extra else []
        tests = [diff(a, b, s, over) for a, b, s in triples] + [t for t, _ in more]
        control = [diff(b, b, s, over) for _, b, s in triples] + [c for _, c in more]
        c = verdicts.controlled(
            verdicts.intervals_above(tests, note_r if over else note),
            same,
            verdicts.intervals_above(control),
        )
        return finish(c, names, over)

    c1 = compared([("+RNN", "Baseline", s) for s in ("dev", "test")])
    if seeds < 2:  # C-A-T1-1 read the alignments' runs; the other rows have one run each
        return {"C-A-T1-1": c1, **{f"C-A-T1-{k}": one_run for k in (2, 3, 4)}}
    others = [n for n in outputs if n not in ("+CSLM+RNN", "+RNN")]
    c2 = compared(
        [("+CSLM+RNN", "+RNN", s) for s in ("dev", "test")]
        + [("+CSLM+RNN", n, "test") for n in others]
    )
    wp_rows = ["+CSLM+RNN", "+CSLM+RNN+WP"]
    wp_over = rebuilt_for(*wp_rows)
    wp = verdicts.within_margin(
        [diff("+CSLM+RNN+WP", "+CSLM+RNN", "test", wp_over)],
        WP_MARGIN,
        side="above",
        note=(note_r if wp_over else note)
        + f"; holds when the gain's interval stays under +{WP_MARGIN:g} BLEU",
    )
    if oracle is None:
        c3 = verdicts.not_measurable("no n-best lists, so no control for the null claim")
    else:
        ctrl = verdicts.within_margin(
            [
                clark(
                    "n-best oracle − +CSLM+RNN, test",
                    oracle,
                    outputs["+CSLM+RNN"]["test"],
                    refs["test"],
                )
            ],
            WP_MARGIN,
            side="above",
        )
        c3 = finish(
            verdicts.controlled(
                wp, "the +RNN row's test n-best lists reranked by the reference (an oracle)", ctrl
            ),
            wp_rows,
            wp_over,
        )

    def under_2(a, over):
        _, g, lo, hi = diff(a, "Baseline", "test", over)
        return (
            f"2 − ({a} − Baseline), test (the largest gain under 2 BLEU)",
            2 - g,
            2 - hi,
            2 - lo,
        )

    def largest_under_2(over):  # the best row's gain, and the Baseline's against itself
        rows_ = [n for n in outputs if n != "Baseline" and (not over or rebuilt_for(n))]
        top = max(rows_, key=lambda n: mean_test(n, over))
        return [(under_2(top, over), under_2("Baseline", over))]

    c4 = compared(
        [("+RNN", "Baseline", "test"), ("+CSLM+RNN", "+RNN", "test")], extra=largest_under_2
    )
    return {"C-A-T1-1": c1, "C-A-T1-2": c2, "C-A-T1-3": c3, "C-A-T1-4": c4}


def dev_claim_start(n_tune: int | None, n_dev: int) -> int:
    """The first dev sentence the claims' dev halves read: the first one MERT did not tune on
    (``n_tune``), so that a row's dev gain is not its own tuning objective; 0 (every dev
    sentence) when MERT tuned on all of them or ``n_tune`` is ``None``."""
    return n_tune if n_tune is not None and n_tune < n_dev else 0


def dev_claim_text(n_tune: int | None, n_dev: int) -> str:
    """Which dev sentences the claims' dev halves read (Markdown, for the prose)."""
    first = dev_claim_start(n_tune, n_dev)
    if first:
        return (
            f"the {n_dev - first:,} held-out dev sentences (MERT tuned on the other {first:,}, "
            "where a row that starts from the Baseline's weights can hardly end below it)"
        )
    return f"all {n_dev:,} dev sentences, MERT's tuning set (no dev sentence was held out)"


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
    ``replicates`` (:func:`alignment_replicates`; more than one): C-A-T1-1 reads the Baseline
    and +RNN rows of every alignment (:func:`pooled_rows`)."""
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
        "rules": 3,  # raise when table_1_claims changes what it computes
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
