"""Independent MERT seeds (rnnlib.smt.seeds): two seeds start from different points and draw
from different streams, the same seed reproduces both, and only such a seed's system changes
its cache key."""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

import numpy as np
import pytest

from rnnlib.cache import canonical_json
from rnnlib.smt import tune as tune_mod
from rnnlib.smt.decoder import Translation, default_weights
from rnnlib.smt.features import BASE_FEATURES
from rnnlib.smt.seeds import OwnStreams, drawn_start, drawn_weights, mert_stream
from rnnlib.smt.system import SMTConfig, build_tuned


def _streams_of(monkeypatch, seed) -> list:
    """The ``seed`` of each optimisation :func:`mert_loop` runs for MERT seed ``seed`` (four
    decodings, each adding a new candidate, so the loop never converges)."""
    seen = []

    def fake_mert(pool, w, *, seed, **kw):
        seen.append(seed)
        return w + 0.01, 0.0

    monkeypatch.setattr(tune_mod, "mert", fake_mert)
    k = [0]

    def decode(w):
        k[0] += 1
        return [[Translation((f"w{k[0]}",), np.array([1.0, -1.0]), 0.0)]]

    tune_mod.mert_loop(
        decode, [0.5, 0.5], [[["w1"]]], feature_names=["a", "b"], max_iterations=4, seed=seed
    )
    return seen


def test_each_seed_and_optimisation_draws_from_its_own_stream(monkeypatch):
    own = {s: _streams_of(monkeypatch, OwnStreams(s)) for s in (1, 2)}
    assert own[1] == [[1, 1], [1, 2], [1, 3]] and own[2] == [[2, 1], [2, 2], [2, 3]]
    flat = [tuple(x) for v in own.values() for x in v]
    assert len(set(flat)) == len(flat) and (1, 0) not in flat  # [s, 0] draws the start
    assert _streams_of(monkeypatch, OwnStreams(1)) == own[1]  # the same seed reproduces
    # integer seeds draw from seed + k: seed 1's second optimisation replays seed 2's first
    shifted = {s: _streams_of(monkeypatch, s) for s in (1, 2)}
    assert shifted[1][1] == shifted[2][0] == 2
    pairs = [(s, k) for s in (1, 2) for k in (0, 1)]
    draws = {p: np.random.default_rng(mert_stream(*p)).uniform() for p in pairs}
    assert len(set(draws.values())) == 4
    with pytest.raises(ValueError, match="seed and k"):
        mert_stream(-1, 0)


def test_each_seed_starts_from_its_own_draw_around_the_defaults_and_keeps_the_fixed_weight():
    w0 = np.array([0.2, 0.2, -1.0, 0.5, 1.0])
    fixed = np.array([False, False, False, False, True])
    one, two = (drawn_start(w0, s, 0.5, fixed) for s in (1, 2))
    assert not np.allclose(one, two) and not np.allclose(one, w0)
    assert np.array_equal(one, drawn_start(w0, 1, 0.5, fixed))  # the same seed, the same start
    assert one[4] == two[4] == 1.0  # the unknown-word penalty stays fixed
    assert (np.sign(one) == np.sign(w0)).all()  # a log-normal factor keeps every sign
    z = np.random.default_rng([1, 0]).standard_normal(5)
    assert np.allclose(one[:4], w0[:4] * np.exp(0.5 * z[:4]))
    assert np.array_equal(drawn_start(w0, 3, 0.0, fixed), w0)
    with pytest.raises(ValueError, match="spread"):
        drawn_start(w0, 1, -0.1)
    named = drawn_weights(["rnn"], 2, 0.5)
    assert list(named) == [*BASE_FEATURES, "rnn"]
    assert named["unknown_word"] == default_weights(1)[list(named).index("unknown_word")]
    assert named != drawn_weights(["rnn"], 1, 0.5)


def test_only_a_system_with_its_own_streams_and_start_changes_its_tuned_key():
    keys = []
    cache = NS(build=lambda kind, cfg, make, data: keys.append(json.loads(canonical_json(cfg))))
    data, art = NS(dev_src=[["a"]], dev_tgt=[["b"]]), NS(key="k")
    own = SMTConfig(seed=OwnStreams(1), start_weights=drawn_weights([], 1, 0.5))
    for config in (SMTConfig(seed=1), own):
        build_tuned(data, config, cache, art, art, (), decoder=lambda: None)
    before, after = keys
    assert before["seed"] == 1 and "start" not in before  # as every earlier system's
    assert after["seed"] == {"seed": 1, "streams": "own: optimisation k draws from [seed, k + 1]"}
    assert after["start"] == {k: pytest.approx(v) for k, v in sorted(own.start_weights.items())}
    assert {k: v for k, v in after.items() if k not in ("seed", "start")} == {
        k: v for k, v in before.items() if k not in ("seed", "start")
    }
