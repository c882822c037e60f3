"""The paired BLEU bootstrap of the user's own files (rnnlib.calibration.lines), a rule of the
ledger's table (rnnlib.calibration.run.RULES): blocks of consecutive lines cut from the simulated
test set read as a file, the systems it shares with the sentence bootstrap, its row and glue on
the ledger page, and its false-hold rate where two systems differ document by document, against
the sentence bootstrap's."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rnnlib import bleu, bleu_t, stats
from rnnlib.calibration import lines, rules, run, systems
from rnnlib.calibration.fast_bleu import ORDER
from rnnlib.calibration.pool import Pool, draw_test, synthetic_pool
from rnnlib.calibration.run import LINE_RULE, RULES, SAME_SYSTEMS, calibrate, plan_of, table
from rnnlib.experiments import ledger
from rnnlib.experiments.ledger import Calibration
from rnnlib.line_blocks import LINES_PER_BLOCK, line_blocks
from rnnlib.resampling import BlockResampler
from rnnlib.verdicts import HOLDS

TRIALS = 200
N_BOOT = 250


def document_pool(n_docs: int = 50, mean_size: int = 27, gap: float = 0.4, seed: int = 0) -> Pool:
    """A pool of ``n_docs`` documents (about ``mean_size`` sentences each, the Bible's median
    chapter) where the two systems differ document by document: each document draws a quality
    shared by both and a lead ``d ~ N(0, gap)`` (logit scale) of ``x`` over ``y``, so a system's
    advantage runs through whole documents, as a domain a system knows well does in a file."""
    rng = np.random.default_rng(seed)
    sizes = np.maximum(3, rng.poisson(mean_size, n_docs))
    blocks = np.repeat(np.arange(n_docs), sizes)
    n = len(blocks)
    lengths = np.maximum(2, rng.poisson(rng.uniform(15, 40, n_docs)[blocks]))
    ref_len = np.maximum(2, rng.poisson(1.1 * lengths))
    quality, lead = rng.normal(0.3, 0.35, n_docs), rng.normal(0, gap, n_docs)

    def system(sign: int) -> np.ndarray:
        sys_len = np.maximum(1, np.round(ref_len * rng.normal(0.97, 0.12, n))).astype(int)
        q = quality[blocks] + sign * lead[blocks] / 2 + rng.normal(0, 0.5, n)
        out = np.zeros((n, 2 + 2 * ORDER))
        out[:, 0], out[:, 1] = sys_len, ref_len
        for k in range(ORDER):
            total = np.maximum(sys_len - k, 0)
            out[:, 2 + k] = rng.binomial(total, 1 / (1 + np.exp(-(q - 1.1 * k))))
            out[:, 2 + ORDER + k] = total
        return out

    return Pool(system(1), system(-1), blocks, lengths.astype(float), "documents")


def test_the_line_blocks_of_a_test_set_cut_across_its_drawn_chapters():
    pool = synthetic_pool()
    draw = draw_test(pool, 500, 60, [3])
    counts = lines.line_counts(draw, 25)
    ids = line_blocks(np.arange(len(draw.idx)), 25)
    assert counts.shape == (60, len(draw.idx))
    for b in np.unique(ids):  # the lines of a block are drawn as often as each other
        assert (counts[:, ids == b] == counts[:, ids == b][:, :1]).all()
    straddle = [b for b in np.unique(ids) if len(np.unique(draw.chapter[ids == b])) > 1]
    assert straddle  # blocks know nothing of the chapters: some hold the end of one, start of next
    assert counts.sum(1).mean() == pytest.approx(len(draw.idx), rel=0.1)
    assert lines.line_picks(draw, 25) is lines.line_picks(draw, 25)  # drawn once per set, size
    assert not np.array_equal(lines.line_counts(draw, 10), counts)


def test_the_line_rule_is_paired_bootstrap_with_line_blocks():
    """The rule's interval is rnnlib.stats.paired_bootstrap's with ``blocks=line_blocks`` (the
    studentized interval) on the same resamples of blocks of consecutive lines."""
    rng = np.random.default_rng(0)
    words = [f"w{k}" for k in range(30)]
    refs = [" ".join(rng.choice(words, rng.integers(4, 12))) for _ in range(47)]
    hyps = [
        [" ".join(w if rng.random() < keep else "x" for w in r.split()) for r in refs]
        for keep in (0.8, 0.6)
    ]
    blocks = line_blocks(np.arange(47), 10)
    draws = BlockResampler(blocks).draws(200, bleu.SACREBLEU_SEED)
    ids, g = bleu_t.block_ids(blocks)
    picks = bleu_t.picks_of(draws, ids, g)
    sa, sb = (bleu.sufficient_stats(h, refs)[1] for h in hyps)
    want = stats.paired_bootstrap(hyps[0], hyps[1], refs, n_samples=200, blocks=blocks)
    _, d, lo, hi = lines._paired_t_check(sa, sb, picks, ids).evidence["tests"][0]
    assert np.allclose([d, lo, hi], [want["diff"], want["low"], want["high"]])
    assert want["blocks"] == 5 and want["studentized"] and want["widening"] is None
    widened = rules._paired_check(sa, sb, picks[:, ids].astype(np.float32), 5)
    assert not np.allclose(widened.evidence["tests"][0][2:], [lo, hi])
    draw = draw_test(synthetic_pool(), 500, 20, [3])
    ids = line_blocks(np.arange(len(draw.idx)), LINES_PER_BLOCK)
    assert lines.n_line_blocks(draw, LINES_PER_BLOCK) == len(np.unique(ids))
    picks, line_ids = lines.line_picks(draw, LINES_PER_BLOCK)
    assert picks.shape == (20, len(np.unique(ids))) and (picks.sum(1) == picks.shape[1]).all()
    assert np.array_equal(line_ids, ids)


def test_the_line_rule_draws_the_systems_of_the_sentence_bootstrap_in_every_trial(monkeypatch):
    """Stand-in rules record the two systems they draw from their trial's generator: the line
    rule's are the sentence bootstrap's in every trial and claim; a rule drawing its own (the
    block bootstrap's row) gets others."""
    assert SAME_SYSTEMS == {LINE_RULE: "paired BLEU"}
    seen: dict = {}

    def recorder(name):
        def rule(pool, draw, rng, true):
            seen.setdefault(name, []).append(systems.pair(pool, draw, rng))
            return rules.Outcome(HOLDS)

        return rule

    names = ["paired BLEU", "paired BLEU, block bootstrap", LINE_RULE]
    for name in names:
        monkeypatch.setitem(RULES, name, (recorder(name), *RULES[name][1:]))
    calibrate(synthetic_pool(), plan_of(3, 2), n_boot=10, seed=4, names=names)
    assert len(seen[LINE_RULE]) == len(seen["paired BLEU"]) == 3 * 2 + 2
    for (a, b), (a2, b2) in zip(seen["paired BLEU"], seen[LINE_RULE]):
        assert np.array_equal(a, a2) and np.array_equal(b, b2)
    own = zip(seen["paired BLEU"], seen["paired BLEU, block bootstrap"])
    assert not all(np.array_equal(a, a2) for (a, _), (a2, _) in own)
    # sharing moves no other rule's generator: the others keep their places in order
    others = [n for n in RULES if n not in SAME_SYSTEMS]
    assert [run.stream(n) for n in others] == list(range(len(others)))
    assert run.stream(LINE_RULE) == run.stream("paired BLEU") != run.stream(names[1])


def test_the_line_rule_is_the_ledgers_row_after_the_block_bootstrap_and_its_numbers_are_glued():
    assert LINE_RULE == lines.rule_name(LINES_PER_BLOCK)
    order = list(RULES)
    assert order.index(LINE_RULE) == order.index("paired BLEU, block bootstrap") + 1
    assert RULES[LINE_RULE][2] == RULES["paired BLEU"][2]  # the same effect
    assert "your own files" in RULES[LINE_RULE][1] and str(LINES_PER_BLOCK) in RULES[LINE_RULE][1]
    assert "contrast" in RULES["paired BLEU"][1]  # no chapter applies it any more
    pool = synthetic_pool()
    names = [n for n in order if n in ("paired BLEU", ledger.CHAPTERS, LINE_RULE)]
    names.append("seeds and sentences")
    rates = calibrate(pool, plan_of(4), n_boot=40, seed=2, names=names)
    t = table(rates)
    assert list(t.index) == names
    assert t.loc[LINE_RULE, "false holds, by sentence (%)"] != "—"  # run under both designs
    assert t.loc[LINE_RULE, "applied to"] == RULES[LINE_RULE][1]
    glued = ledger.numbers(Calibration(rates, t, "pool", 1.5, None), ledger.Params())
    r = rates.set_index(["rule", "design", "claim"])["holds"]
    assert glued["cal-lines-size"] == (LINES_PER_BLOCK, None)
    assert glued["cal-lines-false"] == (100 * r[(LINE_RULE, "chapter", "false")], 1)
    assert glued["cal-lines-power"] == (100 * r[(LINE_RULE, "chapter", "true")], 1)
    assert glued["cal-sentences-false"] == (100 * r[("paired BLEU", "chapter", "false")], 1)
    assert glued["cal-chapters-false"] == (100 * r[(ledger.CHAPTERS, "chapter", "false")], 1)
    assert glued["cal-minutes"] == (1.5, 1)


@pytest.mark.slow  # 200 trials of two rules, about 6 s of CPU
def test_where_systems_differ_by_document_line_blocks_hold_falsely_far_less_than_sentences():
    """Two systems of equal quality whose lead changes document by document: the sentence
    bootstrap says "holds" far more often than 5%; blocks of consecutive lines, cut without
    knowing where a document begins, stay near 5% (within 3 Monte Carlo standard errors)."""
    pool = document_pool()
    plan = {"chapter": (TRIALS, (False,))}
    r = calibrate(pool, plan, n_boot=N_BOOT, seed=7, names=["paired BLEU", LINE_RULE])
    sent, line = (r.set_index("rule").loc[n] for n in ("paired BLEU", LINE_RULE))
    assert sent["holds"] > 0.10, sent["holds"]
    assert line["holds"] < sent["holds"] - 3 * math.hypot(sent["holds_se"], line["holds_se"])
    assert line["holds"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / TRIALS), line["holds"]
    assert pd.notna(line["covered"]) and line["covered"] > sent["covered"]
