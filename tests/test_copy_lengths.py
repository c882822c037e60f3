"""The copy task across lengths: scores, the drop difference and its claim on synthetic outputs."""

import numpy as np
import pandas as pd
import pytest

from rnnlib import verdicts
from rnnlib.experiments import copy_lengths as cl
from rnnlib.experiments.copy_task import Params


def test_a_sequence_scores_its_exact_match_and_the_share_of_positions_right():
    assert cl.sequence_scores([5, 6, 7], np.array([5, 6, 7])) == (True, 100.0)
    assert cl.sequence_scores([5, 6], np.array([5, 6, 7, 8])) == (False, 50.0)  # short output
    assert cl.sequence_scores([5, 6, 7, 8, 9], np.array([5, 6, 7, 8])) == (False, 100.0)
    assert cl.sequence_scores([6, 5], np.array([5, 6])) == (False, 0.0)


def _results(encdec_long: float, search_long: float = 95.0, n: int = 120, seed: int = 0):
    """Test sequences of 5-50 symbols: both models near-perfect on short ones; on long ones
    RNNsearch at ``search_long`` % and RNNencdec at ``encdec_long`` % of the symbols right."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, 51, size=n)
    rows = []
    for arch, long_acc in (("RNNsearch", search_long), ("RNNencdec", encdec_long)):
        for length in lengths:
            share = 98.0 - (98.0 - long_acc) * (length - 5) / 45
            acc = float(np.clip(share + rng.normal(0, 3), 0, 100))
            rows.append({"model": arch, "length": int(length), "exact": acc > 99, "accuracy": acc})
    return pd.DataFrame(rows)


def test_the_claim_holds_when_rnnencdec_falls_more_and_its_control_does_not():
    check = cl.claim_copy_1(_results(encdec_long=30.0), n_boot=300, seed=1)
    v = verdicts.evaluate(check)
    assert v.verdict == verdicts.HOLDS and v.control != verdicts.HOLDS, v.reason
    res = cl.drop_difference(_results(encdec_long=30.0), n_boot=300, seed=1)
    assert res["diff"] > 40 and res["low"] > 0 and res["short"]["RNNencdec"] > 90


def test_the_claim_fails_when_rnnsearch_falls_more():
    check = cl.claim_copy_1(_results(encdec_long=95.0, search_long=30.0), n_boot=300, seed=1)
    assert verdicts.evaluate(check).verdict == verdicts.FAILS


def test_two_models_that_fall_alike_are_inside_the_noise():
    v = verdicts.evaluate(cl.claim_copy_1(_results(60.0, 60.0), n_boot=300, seed=1))
    assert v.verdict == verdicts.NOISE, v.reason


def test_models_that_cannot_copy_short_sequences_are_below_the_floor():
    weak = _results(encdec_long=5.0).assign(accuracy=lambda t: t["accuracy"] * 0.2)
    v = verdicts.evaluate(cl.claim_copy_1(weak, n_boot=100, seed=1))
    assert v.verdict == verdicts.UNMEASURABLE and "below the floor of 50" in v.reason


def test_the_length_table_and_the_sequences_drawn_apart_from_the_first_part():
    table = cl.accuracy_table(_results(30.0).assign(bucket=lambda t: (t["length"] // 5) * 5))
    assert table.index[0] == "5-9" and table["sequences"].sum() == 120
    P = Params(length_train=50, length_test=20)
    train, test = cl.length_pairs(P)
    assert len(train) == 50 and len(test) == 20
    assert all(5 <= len(s) <= 50 and list(s) == list(t) for s, t in zip(test.src, test.tgt))
    with pytest.raises(ValueError, match="'length_min' = 9 is larger than 'length_max' = 8"):
        cl.length_pairs(Params(length_min=9, length_max=8))


def test_the_cooldown_ends_with_the_studys_updates_and_is_said_in_the_prose():
    from types import SimpleNamespace

    from rnnlib.train import cooldown_factor

    ex = SimpleNamespace(params=Params(length_updates=400, length_cooldown=300))
    ex.device = SimpleNamespace(type="cpu")
    tc = cl.length_train_config(ex)
    assert (tc.max_updates, tc.lr_cooldown, tc.lr_cooldown_end) == (400, 300, 400)
    assert cooldown_factor(tc, 100) == 1.0 and cooldown_factor(tc, 250) < 1.0
    assert cl.schedule_text(ex.params) == "the rate falling linearly over the last 300 of them"
    constant = cl.length_train_config(SimpleNamespace(params=Params(), device=ex.device))
    assert constant.lr_cooldown is None and constant.lr_cooldown_end is None
    assert cl.schedule_text(Params()) == "at a constant rate"
