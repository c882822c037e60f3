"""A Table 1 on its primary held-out set (rnnlib.experiments.cho2014.primary): BLEU against every
reference, the held-out dev part joined to test with its references and verse keys in step,
intervals that resample whole Bible chapters, and C-A-T1-1 judged on them, both ways."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest

from rnnlib import multi_reference, stats, verdicts
from rnnlib.cache import ArtifactCache
from rnnlib.experiments.cho2014 import equal_effort, intervals, primary, primary_claims, table_1
from rnnlib.experiments.cho2014.rows import TUNED_ON_ROW
from rnnlib.resampling import BlockResampler, chapter_blocks
from rnnlib.verdicts import BLEU_FLOOR

_rng = np.random.default_rng(3)


def _sentence(k: int = 9) -> str:
    return " ".join(f"w{x}" for x in _rng.integers(0, 50, k))


def _worse(ref: str, wrong: int = 2) -> str:
    words = ref.split()
    return " ".join(words[:-wrong] + ["zz"] * wrong)


# -- BLEU against several references ---------------------------------------------------------
def test_multi_reference_bleu_is_sacrebleus_own_with_every_stream():
    import sacrebleu

    refs = [[_sentence() for _ in range(12)] for _ in range(3)]
    hyps = [r if i % 3 else _worse(r) for i, r in enumerate(refs[i % 3][i] for i in range(12))]
    want = sacrebleu.corpus_bleu(hyps, refs).score
    assert multi_reference.corpus_bleu(hyps, refs) == pytest.approx(want, abs=1e-9)
    bleu, st = multi_reference.sufficient_stats(hyps, refs)
    assert st.shape[0] == 12
    assert multi_reference.score_of(bleu, st.sum(0)[None])[0] == pytest.approx(want, abs=1e-9)
    read_once = multi_reference.scorer_for(refs)  # the references' n-grams read once: the same
    assert (multi_reference.sufficient_stats(hyps, refs, read_once)[1] == st).all()
    # each hypothesis copies one of the three streams: one stream alone scores far less
    assert multi_reference.corpus_bleu(hyps, refs[:1]) < want - 10
    assert "nrefs:3" in multi_reference.signature(3)
    with pytest.raises(ValueError, match="stream 1"):
        multi_reference.corpus_bleu(hyps, [refs[0], refs[1][:5]])


def test_one_stream_and_sentence_resamples_give_clarks_interval_number_for_number():
    refs = [_sentence() for _ in range(40)]

    def out(k):
        return [r if i < k else _worse(r) for i, r in enumerate(refs)]

    a, b = [out(25), out(28), out(30)], [out(15), out(18), out(19)]
    want = stats.seeds_and_sentences(a, b, refs, 150)
    got = intervals.groups_and_resamples([a], [b], [refs], intervals.sentence_resamples(40, 150))
    for k, k2 in (("diff", "diff"), ("low", "low"), ("high", "high"), ("se_test", "se_sentences")):
        assert got[k2] == pytest.approx(want[k], rel=1e-9)
    pooled = stats.rebuilds_and_sentences([a, b], [b, b], refs, 150)
    got = intervals.groups_and_resamples(
        [a, b], [b, b], [refs], intervals.sentence_resamples(40, 150)
    )
    assert (got["low"], got["high"]) == pytest.approx((pooled["low"], pooled["high"]), rel=1e-9)


# -- the held-out dev part and test, in step -------------------------------------------------
def _keys(book: int, n: int, per_chapter: int = 5) -> np.ndarray:
    return np.array([[book, i // per_chapter + 1, i + 1] for i in range(n)])


def _held(first: int = 6, n_dev: int = 10, n_test: int = 7) -> primary.HeldOut:
    dev = [[f"r{s} dev {i}" for i in range(n_dev)] for s in range(3)]
    test = [[f"r{s} test {i}" for i in range(n_test)] for s in range(3)]
    return primary.HeldOut(first, dev, test, _keys(7, n_dev), _keys(8, n_test))


def test_the_held_out_set_keeps_hypotheses_references_and_verse_keys_in_step():
    held = _held()
    hyps = held.join([f"dev {i}" for i in range(10)], [f"test {i}" for i in range(7)])
    streams, keys = held.streams(), held.keys()
    assert held.n == len(hyps) == len(keys) == 4 + 7
    for k, h in enumerate(hyps):
        split, i = h.split()
        assert all(s[k] == f"r{r} {h}" for r, s in enumerate(streams))
        book = 7 if split == "dev" else 8
        assert keys[k].tolist() == [book, int(i) // 5 + 1, int(i) + 1]  # its own verse
    assert hyps[0] == "dev 6" and hyps[held.test_part][0] == "test 0"
    blocks = chapter_blocks(keys)
    assert blocks.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2]  # Judg 2, Ruth 1, Ruth 2
    with pytest.raises(ValueError, match="expected 10 and 7"):
        held.join([f"dev {i}" for i in range(9)], [f"test {i}" for i in range(7)])
    with pytest.raises(ValueError, match="keys but streams"):
        primary.HeldOut(6, held.dev_streams, held.test_streams, _keys(7, 9), held.test_keys)


def test_primary_set_reads_the_corpus_keys_and_starts_after_the_tuning_sentences(tmp_path):
    dev_keys, test_keys = _keys(7, 12), _keys(8, 9)
    np.save(tmp_path / "dev.keys.npy", dev_keys)
    np.save(tmp_path / "test.keys.npy", test_keys)
    refs = {
        s: [[f"r{k} {s} {i}" for i in range(n)] for k in range(3)]
        for s, n in (("dev", 10), ("test", 7))
    }
    base = NS(data=NS(dev_refs=refs["dev"], test_refs=refs["test"]), corpus=NS(path=tmp_path))
    held = primary.primary_set(base, 6)  # max_eval 10 of 12 dev verses, 7 of 9 test verses
    assert (held.first, held.n_dev, held.n_test, held.n) == (6, 10, 7, 11)
    assert held.keys()[0].tolist() == dev_keys[6].tolist()
    assert held.keys()[-1].tolist() == test_keys[6].tolist()
    assert held.streams()[2][0] == "r2 dev 6" and held.streams()[0][4] == "r0 test 0"
    assert primary.primary_set(base, None).n == 7  # MERT tuned on every dev sentence: test only
    assert primary.primary_set(base, 10).n == 7


def test_on_the_users_files_the_primary_set_resamples_blocks_of_consecutive_lines(tmp_path):
    """The user's files mark no documents (no ``<split>.keys.npy``): the keys are stand-ins that
    put each pair's file line in its block of ``LINES_PER_BLOCK`` lines, dev and test apart."""
    from rnnlib.line_blocks import LINES_PER_BLOCK as L

    rows = {"dev": np.arange(1, 2 * L + 6), "test": np.array([1, 2, L, L + 1, 3 * L + 2])}
    corpus = NS(path=tmp_path, rows=lambda split: rows[split])
    dev, test = primary.split_keys(corpus, "dev"), primary.split_keys(corpus, "test")
    assert test[:, 1].tolist() == [0, 0, 0, 1, 3] and test[:, 2].tolist() == rows["test"].tolist()
    assert np.unique(dev[:, 1]).tolist() == [0, 1, 2]
    blocks = chapter_blocks(np.concatenate([dev, test]))
    assert len(np.unique(blocks)) == 3 + 3  # dev's 3 blocks and test's 3, never merged
    assert primary.blocks_unit(corpus) == f"blocks of {L} lines"
    refs = {s: [[f"r {s} {i}" for i in range(len(rows[s]))]] for s in rows}
    base = NS(data=NS(dev_refs=refs["dev"], test_refs=refs["test"]), corpus=corpus)
    held = primary.primary_set(base, L)
    assert held.n == len(rows["dev"]) - L + len(rows["test"])
    np.save(tmp_path / "test.keys.npy", _keys(8, 9))  # a Bible corpus keeps its verse keys
    assert primary.blocks_unit(corpus) == "whole chapters"
    assert primary.split_keys(corpus, "test").tolist() == _keys(8, 9).tolist()


def test_each_step_reads_its_own_sentences_and_references():
    """The test-only steps read test alone: a system exact on test and wrong on the dev part
    gains there only."""
    n_dev, n_test = 10, 20
    dev = [[_sentence() for _ in range(n_dev)] for _ in range(3)]
    test = [[_sentence() for _ in range(n_test)] for _ in range(3)]
    held = primary.HeldOut(4, dev, test, _keys(7, n_dev), _keys(8, n_test))
    good = [held.join([_worse(r, 5) for r in dev[0]], list(test[0]))] * 2
    bad = [held.join([_worse(r, 5) for r in dev[0]], [_worse(r, 5) for r in test[0]])] * 2
    got = [primary.step_interval(held, [good], [bad], s, 50) for s in primary.STEPS]
    assert [g["sentences"] for g in got] == [20, 20, 26, 26]
    assert [g["references"] for g in got] == [1, 3, 3, 3]
    assert got[0]["diff"] > got[2]["diff"] > 0  # the dev part, where both are alike, dilutes it


# -- chapters resampled ----------------------------------------------------------------------
def test_the_chapter_interval_is_wider_where_chapters_differ():
    """Verses whose gain comes by whole chapters: resampling verses alone understates it."""
    n_ch, per = 12, 10
    refs = [_sentence() for _ in range(n_ch * per)]
    keys = np.array([[1, i // per + 1, i % per + 1] for i in range(n_ch * per)])
    good_chapter = _rng.random(n_ch) < 0.5

    def out(s, better):
        return [
            r if better and good_chapter[i // per] and (i + s) % 7 else _worse(r)
            for i, r in enumerate(refs)
        ]

    a, b = [out(s, True) for s in range(3)], [out(s, False) for s in range(3)]
    n_boot = 300
    verses = intervals.groups_and_resamples(
        [a], [b], [refs], intervals.sentence_resamples(len(refs), n_boot)
    )
    blocks = BlockResampler(chapter_blocks(keys)).draws(n_boot, 1)
    chapters = intervals.groups_and_resamples([a], [b], [refs], blocks)
    assert chapters["diff"] == verses["diff"]
    assert chapters["se_sentences"] > 1.5 * verses["se_sentences"]
    assert chapters["high"] - chapters["low"] > verses["high"] - verses["low"]


# -- C-A-T1-1 on the held-out set ------------------------------------------------------------
def _found(test=(1.0, 0.4, 1.6), control=(0.1, -0.5, 0.7), runs=3, bleu=20.0, alignments=1):
    def steps(d, lo, hi):
        return [
            {
                "diff": d,
                "low": lo,
                "high": hi,
                "sentences": 700,
                "references": 3,
                "chapters": 30,
                "se_runs": 0.1,
                "se_sentences": 0.2,
            }
        ] * len(primary.STEPS)

    return primary.Found(
        {"test": steps(*test), "control": steps(*control)},
        {"+RNN": bleu, TUNED_ON_ROW: bleu, "Baseline": bleu},
        {"test": ["+RNN", TUNED_ON_ROW], "control": [TUNED_ON_ROW, "Baseline"]},
        table_1.EXTRA_TUNING,
        runs,
        alignments,
        700,
        200,
        30,
        3,
    )


def _verdict(check):
    return verdicts.evaluate(check)


def test_t1_1_on_the_held_out_set_holds_fails_and_yields_to_its_control():
    holds = _verdict(primary.claim_t1_1(_found()))
    assert (holds.verdict, holds.control) == (verdicts.HOLDS, verdicts.NOISE)
    assert _verdict(primary.claim_t1_1(_found(test=(-1.0, -1.6, -0.4)))).verdict == verdicts.FAILS
    assert _verdict(primary.claim_t1_1(_found(test=(0.5, -0.1, 1.1)))).verdict == verdicts.NOISE
    extra = _verdict(primary.claim_t1_1(_found(control=(1.0, 0.3, 1.7))))  # tuning alone gains
    assert extra.verdict == verdicts.UNMEASURABLE and "extra tuning alone" in extra.reason
    assert _verdict(primary.claim_t1_1(_found(bleu=BLEU_FLOOR - 1))).verdict == (
        verdicts.UNMEASURABLE
    )
    one = primary.claim_t1_1(_found(runs=1))
    assert one.rule == "not_measurable"
    assert primary.claim_t1_1(_found(runs=1, alignments=2)).rebuilds.startswith("pooled over 2")
    check = primary.claim_t1_1(_found())
    assert "held-out dev + test" in check.evidence["tests"][0][0]
    assert "30 whole Bible chapters" in check.note and "3 references" in check.note
    others = {"C-A-T1-1": one, "C-A-T1-2": one}
    got = primary.judged(others, _found())
    assert got["C-A-T1-2"] is one and got["C-A-T1-1"].rule == "intervals_above"
    assert "does not explain" in table_1.effort_words(got)


class _Eval:
    def __init__(self, path: Path):
        self.path, self.key = path, path.name

    def file(self, name: str) -> Path:
        return self.path / name


def _system(root: Path, name: str, dev: list[str], test: list[str]):
    path = root / name
    path.mkdir(parents=True)
    for split, lines in (("dev", dev), ("test", test)):
        (path / f"{split}.txt").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return NS(evaluation=_Eval(path))


def test_the_artifact_judges_rnn_against_equal_tuning_on_the_whole_held_out_set(
    tmp_path, monkeypatch
):
    """From each MERT run's decoded dev and test (as their evaluations keep them) to the
    verdict: +RNN exact on most verses, the Baseline and the Baseline tuned on alike."""
    monkeypatch.setattr(primary, "N_BOOT", 100)
    n_dev, n_test, n_tune = 30, 40, 10
    refs = {
        s: [[_sentence() for _ in range(n)] for _ in range(3)]
        for s, n in (("dev", n_dev), ("test", n_test))
    }
    np.save(tmp_path / "dev.keys.npy", _keys(7, n_dev, 6))
    np.save(tmp_path / "test.keys.npy", _keys(8, n_test, 6))
    base = NS(data=NS(dev_refs=refs["dev"], test_refs=refs["test"]), corpus=NS(path=tmp_path))

    def row(name, exact_every):
        out = {}
        for s in (1, 2, 3):
            dev, test = (
                [r if (i + s) % exact_every == 0 else _worse(r) for i, r in enumerate(refs[k][0])]
                for k in ("dev", "test")
            )
            out[s] = _system(tmp_path / "runs", f"{name}-{s}", dev, test)
        return out

    rows = {"Baseline": row("b", 5), TUNED_ON_ROW: row("t", 5), "+RNN": row("r", 2)}
    rows.update({"+CSLM": row("c", 3), "+CSLM+RNN": row("cr", 1), "+CSLM+RNN+WP": row("w", 2)})
    rows[equal_effort.LISTS_ROW] = row("l", 2)  # +RNN's lists re-tuned: as good as +RNN
    rows["+RNN per word"] = row("pw", 1)  # read by no claim
    cache = ArtifactCache(tmp_path / "cache")
    found = primary.table1_heldout(cache, rows, base, n_tune)
    assert (found.n, found.n_dev, found.references, found.runs) == (60, 20, 3, 3)
    assert [s["sentences"] for s in found.steps["test"]] == [40, 40, 60, 60]
    got = _verdict(primary.claim_t1_1(found))
    assert (got.verdict, got.control) == (verdicts.HOLDS, verdicts.NOISE)
    assert set(found.checks) == {"C-A-T1-2", "C-A-T1-4"}
    assert _verdict(found.checks["C-A-T1-2"]).verdict == verdicts.HOLDS
    assert "+RNN per word" not in str(found.checks["C-A-T1-2"].evidence)
    old = {k: verdicts.not_measurable("old") for k in ("C-A-T1-1", "C-A-T1-2", "C-A-T1-3")}
    now = primary.judged(old, found)
    assert now["C-A-T1-3"] is old["C-A-T1-3"] and now["C-A-T1-2"] == found.checks["C-A-T1-2"]
    table = primary.widths(found)
    assert list(table["sentences"]) == [40, 40, 60, 60] and (table["width"] > 0).all()
    numbers = primary.numbers(found)
    assert numbers["cho-primary-n"] == 60 and numbers["cho-width-last"][0] > 0
    assert all(len(v) <= 80 for v in numbers.values() if isinstance(v, str))
    again = primary.table1_heldout(cache, rows, base, n_tune)  # read back from the cache
    assert again.steps == found.steps and again.artifact.key == found.artifact.key
    # two word alignments, each with every row read: the alignment is the independent unit
    again = {
        k: row(p, e)
        for k, p, e in (("Baseline", "b2", 5), (TUNED_ON_ROW, "t2", 5), ("+RNN", "r2", 2))
    }
    reps = [
        NS(base=NS(runs=r["Baseline"]), rnn=NS(runs=r["+RNN"], runs_tuned_on=r[TUNED_ON_ROW]))
        for r in (rows, again)
    ]
    for rep in reps:
        rep.cslm = None
    pooled = primary.table1_heldout(cache, rows, base, n_tune, reps)
    assert pooled.alignments == 2 and pooled.artifact.key != found.artifact.key
    assert primary.claim_t1_1(pooled).rebuilds == "pooled over 2 word alignments"
    # no Baseline tuned on: +RNN against the Baseline, each against itself as the control
    plain = primary.table1_heldout(cache, {k: rows[k] for k in ("Baseline", "+RNN")}, base, n_tune)
    assert plain.pairs["control"] == ["Baseline", "Baseline"]
    assert dataclasses.asdict(primary.claim_t1_1(plain))["control"]["what"] == primary.SAME


# -- C-A-T1-2 and C-A-T1-4 on the held-out set ------------------------------------------------
def _gains(seeds=3, drop=(), **ks):
    """Table 1's rows on 80 verses in 16 chapters: row ``x`` exact on ``k + s`` verses (seed
    ``s``) spread over the chapters, one wrong word elsewhere; the CSLM rows with +RNN's lists
    re-tuned without the CSLM, as the chapter builds them."""
    n = 80
    refs = [[_sentence() for _ in range(n)] for _ in range(3)]
    keys = np.array([[1, i // 5 + 1, i % 5 + 1] for i in range(n)])
    ks = {"Baseline": 20, "+RNN": 40, "+CSLM": 40, "+CSLM+RNN": 60, "+CSLM+RNN+WP": 50, **ks}
    ks.setdefault(equal_effort.LISTS_ROW, ks["+RNN"])  # as good as +RNN unless given

    rank = np.random.default_rng(0).permutation(n)

    def out(k, s):
        return [r if rank[i] < k + s else _worse(r, 1) for i, r in enumerate(refs[0])]

    outputs = {
        n: {"test": [out(k, s) for s in range(seeds)]} for n, k in ks.items() if n not in drop
    }
    resamples = BlockResampler(chapter_blocks(keys)).draws(100, 1)
    return primary_claims.HeldOutGains(outputs, refs, resamples, "held-out dev + test")


def test_t1_2_and_t1_4_on_the_held_out_set_both_ways():
    got = primary_claims.heldout_claims(_gains())
    c2 = _verdict(got["C-A-T1-2"])
    assert (c2.verdict, c2.control) == (verdicts.HOLDS, verdicts.NOISE)
    labels = [t[0] for t in got["C-A-T1-2"].evidence["tests"]]
    lists = equal_effort.LISTS_ROW
    assert labels[0] == f"+CSLM+RNN − {lists}, held-out dev + test" and len(labels) == 4
    assert "against 3 references" in got["C-A-T1-2"].note
    assert _verdict(got["C-A-T1-4"]).verdict == verdicts.FAILS  # gains far over 2 BLEU
    largest = "2 − (+CSLM+RNN − Baseline), held-out dev + test (the largest gain under 2 BLEU)"
    assert largest in [t[0] for t in got["C-A-T1-4"].evidence["tests"]]
    not_best = primary_claims.heldout_claims(_gains(**{"+CSLM": 70}))
    assert _verdict(not_best["C-A-T1-2"]).verdict == verdicts.FAILS
    one = primary_claims.heldout_claims(_gains(seeds=1))
    assert {c.rule for c in one.values()} == {"not_measurable"}
    assert primary_claims.heldout_claims(_gains(drop=("+CSLM", "+CSLM+RNN", "+CSLM+RNN+WP"))) == {}
    # the CSLM rows without the lists row: no row at equal tuning effort, no control
    no_lists = primary_claims.heldout_claims(_gains(drop=(lists,)))
    assert set(no_lists) == {"C-A-T1-2", "C-A-T1-4"}
    for claim, check in no_lists.items():
        assert check.rule == "not_measurable", claim
        assert lists in verdicts.evaluate(check).reason, claim


def test_t1_2_and_t1_4_on_the_held_out_set_read_the_lists_row_when_it_was_built():
    lists = equal_effort.LISTS_ROW
    got = primary_claims.heldout_claims(_gains(**{lists: 40}))
    c2 = got["C-A-T1-2"]
    assert _verdict(c2).verdict == verdicts.HOLDS and _verdict(c2).control == verdicts.NOISE
    labels = [t[0] for t in c2.evidence["tests"]]
    assert labels[0] == f"+CSLM+RNN − {lists}, held-out dev + test"
    assert [t[0] for t in c2.control.check.evidence["tests"]] == [
        f"{lists} − +RNN, held-out dev + test"
    ]
    assert "against 3 references" in c2.note
    same = primary_claims.heldout_claims(_gains(**{lists: 60}))  # the round alone does it
    assert _verdict(same["C-A-T1-2"]).verdict == verdicts.UNMEASURABLE
    assert _verdict(same["C-A-T1-4"]).control == verdicts.HOLDS
