"""The baseline chapter's search check: what the smaller search costs against Moses' settings."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from rnnlib.experiments import baseline
from rnnlib.smt.decoder import DecoderConfig
from rnnlib.smt.system import MOSES_SEARCH, SMTConfig


def _check(tmp_path, ours, ref, seconds=(1.0, 4.0)):
    words = [s.split() for s in ("la maison est grande", "le chat dort ici", "un chien court vite")]
    words = words[: len(ours)]
    runs = {
        "chapter": {"seconds": seconds[0], "model_score": ours, "words": words},
        "reference": {"seconds": seconds[1], "model_score": ref, "words": words},
    }
    path = tmp_path / "check.json"
    path.write_text(json.dumps(runs))
    return SimpleNamespace(file=lambda name: tmp_path / name)


def test_search_numbers_count_errors_and_gains_against_the_larger_search(tmp_path):
    check = _check(tmp_path, [-10.0, -5.0, -7.0], [-9.0, -5.0, -7.5])
    got = baseline.search_numbers(check)
    assert got["smt-search-sentences"] == (3, None)
    assert got["smt-search-errors"][0] == pytest.approx(100 / 3)  # the first: lower than Moses'
    assert got["smt-search-better"][0] == pytest.approx(100 / 3)  # the third: higher
    assert got["smt-search-time-ratio"][0] == pytest.approx(4.0)
    said = baseline.search_result(got)
    assert said == "33.3% of 3 lower (search errors), 33.3% higher, 4.0x the time"


def test_search_table_rows_name_each_search_and_its_settings(tmp_path):
    check = _check(tmp_path, [-10.0, -5.0], [-9.0, -5.0])
    config = SMTConfig(decoder=DecoderConfig(stack_size=30, ttable_limit=10))
    table = baseline.search_table(
        check, config, [["la maison est grande", "le chat dort ici"]], " ".join
    )
    assert list(table.index) == ["this chapter", "Moses' defaults"]
    assert table.loc["this chapter", "stack"] == 30
    assert table.loc["Moses' defaults", "stack"] == MOSES_SEARCH["stack_size"]
    assert table.loc["Moses' defaults", "mean model score"] == pytest.approx(-7.0)
    assert table.loc["this chapter", "BLEU"] == pytest.approx(100.0)  # the references themselves


def test_search_check_is_skipped_when_off_or_already_moses(tmp_path):
    moses = SMTConfig(decoder=DecoderConfig(**MOSES_SEARCH))
    small = SMTConfig(decoder=DecoderConfig(stack_size=30))
    run = SimpleNamespace(config=moses)
    assert baseline.search_check(run, baseline.Params(search_check=100), cache=None) is None
    off = baseline.Params(search_check=0)
    assert baseline.search_check(SimpleNamespace(config=small), off, None) is None
    assert baseline.search_table(None, small, [[]], " ".join).index.tolist() == ["not computed"]
    not_computed = baseline.search_numbers(None)  # the names the Markdown reads, as NaN
    assert set(not_computed) == set(baseline.search_numbers(_check(tmp_path, [-1.0], [-1.0])))
    assert all(np.isnan(value) for value, _ in not_computed.values())
    assert "`search_check` is 0" in baseline.search_status(None, 0)
    assert "Moses' settings" in baseline.search_status(None, 100)
    assert "nothing to compare" in baseline.search_result(not_computed)  # no nan in the prose


def test_search_status_says_the_check_was_measured(tmp_path):
    check = _check(tmp_path, [-10.0, -5.0, -7.0], [-9.0, -5.0, -7.5])
    assert baseline.search_status(check, 3) == baseline.MEASURED
