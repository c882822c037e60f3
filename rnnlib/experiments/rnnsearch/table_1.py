"""B Table 1: test BLEU of every system on All and No UNK beside the paper's, the paired
bootstrap of every difference the paper's claims rest on, and the claims C-B-T1-1 to
C-B-T1-6, each controlled (two identical systems, where a difference of two systems is read)
and floored at :data:`rnnlib.verdicts.BLEU_FLOOR`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stats, verdicts
from ...bleu import CorpusBleu, corpus_bleu
from ...book import papers
from ...book.claims import ClaimCheck
from ...specials import UNK
from .blocks import chapter_ids, resampled_unit
from .controls import IDENTICAL_WHAT, bleu_floor, dlh
from .figure_2 import cut_translations
from .seeds import SEED_MODELS, SEED_POOLED, SEED_SHORT, SeedRuns, seed_translations
from .setting import NAMES, SHOWN, SUBSETS, RNNsearchExperiment, glue_key, shown
from .training import SELF_COMPARISON
from .translations import Translations


def bleu_scores(tr: Translations) -> dict[tuple[str, str], CorpusBleu]:
    """``(system, subset) -> corpus BLEU`` (sacreBLEU) of every system on All and No UNK."""
    return {(n, s): corpus_bleu(tr.of(n, s), tr.refs[s]) for n in tr.systems for s in SUBSETS}


def _paper_row(name: str) -> dict[str, float]:
    return papers.B_TABLE1["Moses" if name == "phrase-based" else name]


def table_1(tr: Translations, scores: dict) -> pd.DataFrame:
    """B Table 1: test BLEU of every system on All and No UNK, beside the paper's."""
    rows = []
    for name in tr.systems:
        paper = _paper_row(name)
        model = "phrase-based (the paper: Moses)" if name == "phrase-based" else SHOWN[name]
        same = name == "RNNsearch-50*" and tr.star_same
        rows.append(
            {
                "model": model,
                "All": scores[(name, "all")].score,
                "No UNK": scores[(name, "no_unk")].score,
                "paper: All": paper["all"],
                "paper: No UNK": paper["no_unk"],
                "BP (All)": scores[(name, "all")].bp,
                "length ratio (All)": scores[(name, "all")].ratio,
                "BP (No UNK)": scores[(name, "no_unk")].bp,
                "length ratio (No UNK)": scores[(name, "no_unk")].ratio,
                "note": "= RNNsearch-50 (the same parameters)" if same else "",
            }
        )
    table = pd.DataFrame(rows).set_index("model")
    lengths = [c for c in table.columns if c.startswith(("BP", "length ratio"))]
    return table.round({c: 3 if c in lengths else 2 for c in table.columns})


def numbers(ex: RNNsearchExperiment, tr: Translations, scores: dict) -> dict:
    """``glue name -> (value, digits)`` of Table 1's prose: the sentences, the unknown words of
    the No UNK subset and those generated (both must be 0 there), the minutes spent decoding,
    and each system's BLEU."""
    test = ex.corpus.test
    unk_in_subset = sum(
        int((test.src[i] == UNK).sum() + (test.tgt[i] == UNK).sum()) for i in ex.test[tr.known]
    )
    generated = {s: sum(tr.decoded[(n, s)].extra["unk_generated"] for n in NAMES) for s in SUBSETS}
    if unk_in_subset != 0 or generated["no_unk"] != 0:
        raise AssertionError("the No UNK column must hold no unknown word")
    out = {
        "rns-test-sentences": (ex.n_test, None),
        "rns-resampled": resampled_unit(ex),
        "rns-no-unk-sentences": (int(tr.known.sum()), None),
        "rns-no-unk-subset-unk": (unk_in_subset, None),
        "rns-no-unk-generated-unk": (generated["no_unk"], None),
        "rns-all-generated-unk": (generated["all"], None),
        "rns-beam": (ex.P.beam_size, None),
        "rns-decode-minutes": (
            sum(a.extra["seconds"] for a in {x.key: x for x in tr.decoded.values()}.values()) / 60,
            1,
        ),
    }
    for name in tr.systems:
        out[f"rns-bleu-{glue_key(name)}"] = (scores[(name, "all")].score, 2)
        out[f"rns-bleu-nounk-{glue_key(name)}"] = (scores[(name, "no_unk")].score, 2)
    return out


def baseline_note(ex: RNNsearchExperiment, tr: Translations) -> str:
    """Whether the phrase-based row is there, and why not, in words."""
    if tr.base is not None:
        return "there"
    if not ex.P.baseline:
        return "missing: `baseline` is off"
    return "missing: the baseline chapter translates fewer test sentences"


def comparisons(tr: Translations) -> list[tuple[str, str, str]]:
    """``(claim, a, b)``: the differences a - b the paper's Table 1 claims rest on."""
    out = [
        ("C-B-T1-1", "RNNsearch-30", "RNNencdec-30"),
        ("C-B-T1-1", "RNNsearch-50", "RNNencdec-50"),
        ("C-B-T1-2", "RNNsearch-30", "RNNencdec-50"),
        ("C-B-T1-3", "RNNsearch-50", "RNNsearch-30"),
        ("C-B-T1-3", "RNNencdec-50", "RNNencdec-30"),
        ("C-B-T1-5", "RNNsearch-50*", "RNNsearch-50"),
    ]
    return out + ([("C-B-T1-6", "phrase-based", "RNNsearch-50*")] if tr.base is not None else [])


def paired_tests(
    ex: RNNsearchExperiment, tr: Translations, known: dict | None = None
) -> tuple[pd.DataFrame, dict]:
    """The paired bootstrap of every comparison of :func:`comparisons` on All and No UNK
    (:func:`rnnlib.stats.paired_bootstrap`, ``n_boot`` resamples), or, for a comparison in
    ``known``, the result given there: its interval over training seeds and test resampling
    (:func:`seed_tests`), or a bootstrap already made on the same translations.
    Returns the table (index ``(claim, comparison, column)``: difference, 95% interval,
    sacreBLEU's p, the noise the interval covers, the paper's difference) and
    ``(a, b, subset) -> result``."""
    known = known or {}
    tests, rows = {}, []
    for claim, a, b in comparisons(tr):
        for subset, label in SUBSETS.items():
            if tr.star_same and {a, b} == {"RNNsearch-50*", "RNNsearch-50"}:
                rows.append(  # identical outputs: no difference to test, no p-value to show
                    {
                        "claim": claim,
                        "comparison": f"{shown(a)} − {shown(b)}",
                        "column": label,
                        "difference": np.nan,
                        "95% interval": "= RNNsearch-50",
                        "p (sacreBLEU)": np.nan,
                        "noise": "",
                        "paper": _paper_row(a)[subset] - _paper_row(b)[subset],
                    }
                )
                continue
            res = known.get((a, b, subset)) or stats.paired_bootstrap(
                tr.of(a, subset),
                tr.of(b, subset),
                tr.refs[subset],
                n_samples=ex.P.n_boot,
                blocks=chapter_ids(ex, subset),
            )
            tests[(a, b, subset)] = res
            noise = (
                "test sentences"
                if "seeds" not in res
                else (f"{res['seeds']} training seeds and test sentences (mean over the seeds)")
            )
            rows.append(
                {
                    "claim": claim,
                    "comparison": f"{shown(a)} − {shown(b)}",
                    "column": label,
                    "difference": res["diff"],
                    "95% interval": f"[{res['low']:.2f}, {res['high']:.2f}]",
                    "p (sacreBLEU)": res["p_value"],
                    "noise": noise,
                    "paper": _paper_row(a)[subset] - _paper_row(b)[subset],
                }
            )
    table = pd.DataFrame(rows).set_index(["claim", "comparison", "column"])
    return table.round({"difference": 2, "p (sacreBLEU)": 4, "paper": 2}), tests


def _control_test(ex: RNNsearchExperiment, tr: Translations, b: str, subset: str, cache: dict):
    """The paired bootstrap of system ``b`` against itself (memoised): two identical systems,
    the control of a comparison of two systems' BLEU."""
    key = (b, subset)
    if key not in cache:
        cache[key] = stats.paired_bootstrap(
            tr.of(b, subset),
            tr.of(b, subset),
            tr.refs[subset],
            n_samples=ex.P.n_boot,
            blocks=chapter_ids(ex, subset),
        )
    return cache[key]


def _intervals(
    ex: RNNsearchExperiment, tr: Translations, tests: dict, which, memo: dict | None = None
):
    """Every difference a - b of ``which`` above 0 (paired bootstrap intervals), controlled by
    two identical systems (each ``b`` against itself; ``memo``: their bootstraps, shared between
    claims), floored at :data:`rnnlib.verdicts.BLEU_FLOOR` for every system and column read."""
    cache = {} if memo is None else memo
    seeded = sorted(
        {f"{shown(a)} − {shown(b)}" for a, b, s in which if "seeds" in tests[(a, b, s)]}
    )
    n_seeds = max(tests[(a, b, s)].get("seeds", 1) for a, b, s in which)
    runs = (
        f"{', '.join(seeded)}: the mean over {n_seeds} training seeds, its interval over the seeds "
        "and the sentences (Clark et al. 2011); the other models one training run"
        if seeded
        else "one training run per model, so the spread over training seeds is not measured"
    )
    note = (
        f"test BLEU, paired bootstrap ({ex.P.n_boot} resamples, 95%) over the test sentences; "
        + runs
    )
    check = verdicts.intervals_above(
        [(f"{shown(a)} − {shown(b)}, {SUBSETS[s]}", *dlh(tests[(a, b, s)])) for a, b, s in which],
        note=note,
        rebuilds=f"{n_seeds} training seeds of {', '.join(seeded)}, pooled" if seeded else "",
    )
    control = verdicts.intervals_above(
        [
            (f"{shown(b)} − {shown(b)}, {SUBSETS[s]}", *dlh(_control_test(ex, tr, b, s, cache)))
            for _, b, s in which
        ]
    )
    read = sorted({(n, s) for a, b, s in which for n in (a, b)}, key=str)
    values = [
        (f"{shown(n)}, {SUBSETS[s]}", corpus_bleu(tr.of(n, s), tr.refs[s]).score) for n, s in read
    ]
    labels = [label for label, *_ in check.evidence["tests"]]
    reads = [  # a system under the floor leaves the comparisons of the others to be judged
        [label for label, (a, b, s) in zip(labels, which) if n in (a, b) and s == sn]
        for n, sn in read
    ]
    return bleu_floor(
        verdicts.controlled(check, IDENTICAL_WHAT + " in place of the better", control),
        values,
        "every system and column the claim reads",
        reads,
    )


def _both(pairs: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(a, b, subset)`` of every pair, All then No UNK."""
    return [(a, b, s) for a, b in pairs for s in SUBSETS]


def claim_t1_1(
    ex: RNNsearchExperiment, tr: Translations, tests: dict, memo: dict | None = None
) -> ClaimCheck:
    """C-B-T1-1, RNNsearch beats RNNencdec trained on the same sentences, -30 and -50, in both
    columns. B §5.1: "It is clear from the table that in all the cases, the proposed RNNsearch
    outperforms the conventional RNNencdec." ``tests``: :func:`paired_tests` (with several seeds,
    the "-50" comparison's interval over seeds and sentences); ``memo``: the controls'
    bootstraps, shared between claims (:func:`_intervals`)."""
    pairs = [("RNNsearch-30", "RNNencdec-30"), ("RNNsearch-50", "RNNencdec-50")]
    return ClaimCheck("C-B-T1-1", _intervals(ex, tr, tests, _both(pairs), memo), "rns-c1")


def claim_t1_2(
    ex: RNNsearchExperiment, tr: Translations, tests: dict, memo: dict | None = None
) -> ClaimCheck:
    """C-B-T1-2, RNNsearch-30 beats even RNNencdec-50, in both columns. B §5.1: "This
    superiority of the proposed model over the basic encoder–decoder is further confirmed by the
    fact that the RNNsearch-30 even outperforms RNNencdec-50 (see Table 1).\" """
    pairs = [("RNNsearch-30", "RNNencdec-50")]
    return ClaimCheck("C-B-T1-2", _intervals(ex, tr, tests, _both(pairs), memo), "rns-c2")


def claim_t1_3(
    ex: RNNsearchExperiment, tr: Translations, tests: dict, memo: dict | None = None
) -> ClaimCheck:
    """C-B-T1-3, for each architecture the "-50" model beats the "-30" model, in both columns.
    B Table 1 (no sentence states it): RNNencdec-30 13.93 / 24.19, RNNencdec-50 17.82 / 26.71,
    RNNsearch-30 21.50 / 31.44, RNNsearch-50 26.75 / 34.16 (All / No UNK)."""
    pairs = [("RNNsearch-50", "RNNsearch-30"), ("RNNencdec-50", "RNNencdec-30")]
    return ClaimCheck("C-B-T1-3", _intervals(ex, tr, tests, _both(pairs), memo), "rns-c3")


def claim_t1_5(
    ex: RNNsearchExperiment, tr: Translations, tests: dict, memo: dict | None = None
) -> ClaimCheck:
    """C-B-T1-5, training longer helps: RNNsearch-50⋆ beats RNNsearch-50 in both columns. B
    Table 1's caption: "Note that RNNsearch-50⋆ was trained much longer until the performance on
    the development set stopped improving." Not measurable when RNNsearch-50⋆ delivered
    RNNsearch-50's parameters (:data:`SELF_COMPARISON`)."""
    if tr.star_same:
        return ClaimCheck("C-B-T1-5", verdicts.not_measurable(SELF_COMPARISON), "rns-c5")
    pairs = [("RNNsearch-50*", "RNNsearch-50")]
    return ClaimCheck("C-B-T1-5", _intervals(ex, tr, tests, _both(pairs), memo), "rns-c5")


def claim_t1_4(ex: RNNsearchExperiment, tr: Translations) -> ClaimCheck:
    """C-B-T1-4, every system scores higher on No UNK than on All. B Table 1's caption: "The
    second and third columns show respectively the scores on all the sentences and, on the
    sentences without any unknown word in themselves and in the reference translations."
    BLEU(No UNK) − BLEU(All) per system with :func:`rnnlib.stats.subset_difference` (the No UNK
    sentences lie inside All: both are scored on the same resamples of All), each column with
    its own translations (No UNK's searched with [UNK] forbidden, as Table 1's column). Control:
    a subset of All of No UNK's size drawn at random (``seed``), scored with the All column's
    translations. Floor: every system's BLEU on both."""
    n_boot, known = ex.P.n_boot, np.asarray(tr.known, dtype=bool)
    if not known.any():
        why = verdicts.not_measurable("no test sentence is free of unknown words")
        return ClaimCheck("C-B-T1-4", why, "rns-c4")
    known, random = _known_and_random(ex, tr)
    blocks = chapter_ids(ex)
    tests, control, values, reads = [], [], [], []
    for n in tr.systems:
        res = stats.subset_difference(
            tr.of(n),
            tr.refs["all"],
            known,
            n_samples=n_boot,
            subset_hyps=tr.of(n, "no_unk"),
            blocks=blocks,
        )
        tests.append((f"{shown(n)}: No UNK − All", *dlh(res)))
        reads += [[tests[-1][0]]] * 2
        values += [
            (f"{shown(n)}, All", res["bleu_all"]),
            (f"{shown(n)}, No UNK", res["bleu_subset"]),
        ]
        ctrl = stats.subset_difference(
            tr.of(n), tr.refs["all"], random, n_samples=n_boot, blocks=blocks
        )
        control.append((f"{shown(n)}: random subset − All", *dlh(ctrl)))
    note = NO_UNK_NOTE.format(n_boot=n_boot, unit=resampled_unit(ex))
    check = verdicts.intervals_above(tests, note=note)
    random_what = f"a random subset of All of the same size ({int(known.sum())} sentences)"
    check = verdicts.controlled(check, random_what, verdicts.intervals_above(control))
    # a claim about every system: one above the floor that fails refutes it
    check = bleu_floor(check, values, "every system, All and No UNK", reads)
    return ClaimCheck("C-B-T1-4", check, "rns-c4")


#: C-B-T1-4's note on how its intervals were made
NO_UNK_NOTE = (
    "Table 1's two columns, No UNK's sentences paired with All's ({n_boot} resamples of All's "
    "{unit}, each scoring its No UNK sentences with the No UNK column's translations, 95%); one "
    "training run per model"
)


#: C-B-T1-6's "comes close" on No UNK, a null claim: the phrase-based system ahead of
#: RNNsearch-50⋆ there by at most this share of its own No UNK BLEU. Stated before the build: on
#: the paper's numbers it separates the two columns (Moses − RNNsearch-50⋆: +4.85 on All, beyond
#: 5% of 33.30; −0.52 on No UNK, inside 5% of 35.63).
CLOSE_MARGIN = 0.05


def _known_and_random(ex: RNNsearchExperiment, tr: Translations) -> tuple[np.ndarray, np.ndarray]:
    """The No UNK sentences of All (``(n,) bool``) and a random subset of All of the same size
    (seeded: C-B-T1-4's control draw)."""
    known = np.asarray(tr.known, dtype=bool)
    rng = np.random.default_rng([ex.P.seed, 4])
    random = np.zeros(len(known), dtype=bool)
    random[rng.choice(len(known), int(known.sum()), replace=False)] = True
    return known, random


def gap_change(ex: RNNsearchExperiment, tr: Translations, random: bool = False) -> dict:
    """(phrase-based − RNNsearch-50⋆ on All) − (the same on No UNK), by one joint paired
    bootstrap of the four scores (:func:`rnnlib.stats.gap_change`), each column with its own
    translations. ``random``: a random subset of All of No UNK's size in place of No UNK, scored
    with All's translations (the control: a lead that shrinks on any part is no finding)."""
    known, drawn = _known_and_random(ex, tr)
    a, b, blocks = "phrase-based", "RNNsearch-50*", chapter_ids(ex)
    if random:
        return stats.gap_change(
            tr.of(a), tr.of(b), tr.refs["all"], drawn, n_samples=ex.P.n_boot, blocks=blocks
        )
    return stats.gap_change(
        tr.of(a),
        tr.of(b),
        tr.refs["all"],
        known,
        tr.of(a, "no_unk"),
        tr.of(b, "no_unk"),
        n_samples=ex.P.n_boot,
        blocks=blocks,
    )


def _lead_part(ex, tr, tests: dict, memo: dict) -> verdicts.Check:
    """C-B-T1-6's first part: the phrase-based system − RNNsearch-50⋆ on All above 0; control:
    RNNsearch-50⋆ against itself; floor: both on All."""
    label = "phrase-based − RNNsearch-50⋆, All"
    ctrl = _control_test(ex, tr, "RNNsearch-50*", "all", memo)
    check = verdicts.controlled(
        verdicts.intervals_above([(label, *dlh(tests[("phrase-based", "RNNsearch-50*", "all")]))]),
        IDENTICAL_WHAT + " RNNsearch-50⋆ in place of the phrase-based system",
        verdicts.intervals_above([(label, *dlh(ctrl))]),
    )
    values = [(f"{shown(n)}, All", corpus_bleu(tr.of(n), tr.refs["all"]).score) for n in _PAIR]
    return bleu_floor(check, values, "both systems on All")


def _shrink_part(ex, tr, change: dict) -> verdicts.Check:
    """C-B-T1-6's second part: the lead shrinks from All to No UNK (``change``,
    :func:`gap_change`) above 0; control: the same with a random subset of All of No UNK's size
    in place of No UNK; floor: both systems on No UNK."""
    label = "(phrase-based − RNNsearch-50⋆) on All − on No UNK"
    check = verdicts.controlled(
        verdicts.intervals_above([(label, *dlh(change))]),
        "a random subset of All of No UNK's size in place of No UNK, All's translations",
        verdicts.intervals_above([(label, *dlh(gap_change(ex, tr, random=True)))]),
    )
    values = [
        (f"{shown(n)}, No UNK", corpus_bleu(tr.of(n, "no_unk"), tr.refs["no_unk"]).score)
        for n in _PAIR
    ]
    return bleu_floor(check, values, "both systems on No UNK")


def _close_part(ex, tr, tests: dict) -> verdicts.Check:
    """C-B-T1-6's third part, a null claim: the phrase-based system − RNNsearch-50⋆ on No UNK at
    most :data:`CLOSE_MARGIN` of the phrase-based system's No UNK BLEU; control: RNNsearch-50⋆'s
    No UNK translations cut after half their words (a system that does not come close)."""
    a, b = "phrase-based", "RNNsearch-50*"
    refs, base = tr.refs["no_unk"], corpus_bleu(tr.of(a, "no_unk"), tr.refs["no_unk"]).score
    margin, label = CLOSE_MARGIN * base, "phrase-based − RNNsearch-50⋆, No UNK"
    cut = cut_translations(tr.of(b, "no_unk"), np.arange(len(refs)))
    ctrl = stats.paired_bootstrap(
        tr.of(a, "no_unk"), cut, refs, n_samples=ex.P.n_boot, blocks=chapter_ids(ex, "no_unk")
    )
    note = f"margin: {CLOSE_MARGIN:.0%} of the phrase-based system's No UNK BLEU, stated before"
    check = verdicts.controlled(
        verdicts.within_margin([(label, *dlh(tests[(a, b, "no_unk")]))], margin, "above", note),
        "RNNsearch-50⋆'s No UNK translations cut after half their words",
        verdicts.within_margin([(label, *dlh(ctrl))], margin, "above"),
    )
    values = [(f"{shown(n)}, No UNK", corpus_bleu(tr.of(n, "no_unk"), refs).score) for n in _PAIR]
    return bleu_floor(check, values, "both systems on No UNK")


#: C-B-T1-6's two systems
_PAIR = ("phrase-based", "RNNsearch-50*")


def claim_t1_6(
    ex: RNNsearchExperiment, tr: Translations, tests: dict, memo: dict | None = None
) -> ClaimCheck:
    """C-B-T1-6, the phrase-based system ahead of RNNsearch-50⋆ on All, by less on No UNK, where
    RNNsearch-50⋆ comes close. B §5.1: "More importantly, the performance of the RNNsearch is as
    high as that of the conventional phrase-based translation system (Moses), when only the
    sentences consisting of known words are considered." Three parts (:func:`rnnlib.verdicts.
    all_parts`), each with its control and floor: the lead on All (:func:`_lead_part`), its
    shrinking on No UNK by a joint paired bootstrap (:func:`_shrink_part`), and the closeness on
    No UNK within :data:`CLOSE_MARGIN` (:func:`_close_part`)."""
    if tr.base is None:
        why = "no phrase-based row: `baseline` is off or translates fewer test sentences"
        return ClaimCheck("C-B-T1-6", verdicts.not_measurable(why), "rns-c6")
    memo = {} if memo is None else memo
    if "t1_6_change" not in memo:
        memo["t1_6_change"] = gap_change(ex, tr)
    parts = [
        ("ahead on All", _lead_part(ex, tr, tests, memo)),
        ("by less on No UNK", _shrink_part(ex, tr, memo["t1_6_change"])),
        ("close on No UNK", _close_part(ex, tr, tests)),
    ]
    note = "one training run per model; each part's interval from the paired bootstrap"
    return ClaimCheck("C-B-T1-6", verdicts.all_parts(parts, note=note), "rns-c6")


def claims(ex: RNNsearchExperiment, tr: Translations, tests: dict) -> list[ClaimCheck]:
    """The claims of B Table 1 in the order the chapter records them, the controls' bootstraps
    made once for all (each comparison is controlled by two identical systems, the worse system
    in place of the better, and floored at :data:`rnnlib.verdicts.BLEU_FLOOR`)."""
    memo: dict = {}
    return [
        claim_t1_1(ex, tr, tests, memo),
        claim_t1_2(ex, tr, tests, memo),
        claim_t1_3(ex, tr, tests, memo),
        claim_t1_5(ex, tr, tests, memo),
        claim_t1_4(ex, tr),
        claim_t1_6(ex, tr, tests, memo),
    ]


def lead_numbers(ex: RNNsearchExperiment, tr: Translations, tests: dict) -> dict:
    """``glue name -> (value, digits)``: the phrase-based system − RNNsearch-50⋆ on All and on No
    UNK, the change between them with its joint interval (:func:`gap_change`), the margin of
    "comes close" in BLEU and in % (NaN without a phrase-based row) and the paper's
    (Moses − RNNsearch-50⋆), C-B-T1-6's."""
    moses, star = papers.B_TABLE1["Moses"], papers.B_TABLE1["RNNsearch-50*"]
    ours = {s: tests.get(("phrase-based", "RNNsearch-50*", s), {"diff": np.nan}) for s in SUBSETS}
    change, margin = {"diff": np.nan, "low": np.nan, "high": np.nan}, np.nan
    if tr.base is not None:
        change = gap_change(ex, tr)
        base = corpus_bleu(tr.of("phrase-based", "no_unk"), tr.refs["no_unk"]).score
        margin = CLOSE_MARGIN * base
    return {
        "rns-c6-all": (ours["all"]["diff"], 2),
        "rns-c6-nounk": (ours["no_unk"]["diff"], 2),
        "rns-c6-change": (change["diff"], 2),
        "rns-c6-change-low": (change["low"], 2),
        "rns-c6-change-high": (change["high"], 2),
        "rns-c6-margin": (margin, 2),
        "rns-c6-margin-pct": (100 * CLOSE_MARGIN, 0),
        "rns-paper-c6-all": (moses["all"] - star["all"], 2),
        "rns-paper-c6-nounk": (moses["no_unk"] - star["no_unk"], 2),
    }


def gap_numbers(tests: dict) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 2)``: RNNsearch-50 − RNNencdec-50 on All with its interval, and
    the paper's difference."""
    d = tests[("RNNsearch-50", "RNNencdec-50", "all")]
    paper = papers.B_TABLE1["RNNsearch-50"]["all"] - papers.B_TABLE1["RNNencdec-50"]["all"]
    return {
        "rns-gap50": (d["diff"], 2),
        "rns-gap50-low": (d["low"], 2),
        "rns-gap50-high": (d["high"], 2),
        "rns-paper-gap50": (paper, 2),
    }


def by_seed(
    ex: RNNsearchExperiment, tr: Translations, sr: SeedRuns, tests: dict | None = None
) -> list[tuple[int, list[ClaimCheck]]]:
    """``(seed, checks)``: the claims of B Table 1 (:func:`claims`, but
    :data:`SEED_POOLED`, whose interval already spans the seeds) measured with each further
    seed's "-50" pair and RNNsearch-50⋆ in place of the chapter's, and its "-30" pair where it
    has its own (else the chapter's), beside the phrase-based system; each comparison a paired
    bootstrap of that seed's translations. ``tests``: the chapter's (:func:`paired_tests`),
    reused for the comparisons whose two systems' translations the seed leaves as they are."""
    out = []
    for k, seed in enumerate(sr.seeds[1:], start=1):
        t = seed_translations(tr, sr, k)
        changed = set(SEED_MODELS) | (set(SEED_SHORT) if sr.short_own[k] else set())
        same = {key: res for key, res in (tests or {}).items() if not changed & set(key[:2])}
        _, seed_tests_ = paired_tests(ex, t, same)
        checks = claims(ex, t, seed_tests_)
        out.append((seed, [c for c in checks if c.claim != SEED_POOLED]))
    return out
