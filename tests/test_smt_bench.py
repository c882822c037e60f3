"""Decoding-speed benchmark (rnnlib.bench.smt) on a toy table, through `rnnlib smt-bench`."""

import json

from rnnlib.cli import main
from rnnlib.smt.lm import train_arpa
from rnnlib.smt.phrases import build_phrase_table


def test_bench_cli_reports_speed(tmp_path, capsys):
    src = [["the", "house"], ["the", "cat"], ["a", "house"]]
    tgt = [["das", "haus"], ["die", "katze"], ["ein", "haus"]]
    links = [[(0, 0), (1, 1)]] * 3
    build_phrase_table(src, tgt, links).save(tmp_path / "pt.npz")
    train_arpa(tgt, tmp_path / "lm.arpa", 2)
    (tmp_path / "test.txt").write_text("the house\na cat\nthe dog\n")
    weights = {
        "weights": {
            "log p(t|s)": 1.0,
            "log p(s|t)": 0.0,
            "log lex(t|s)": 0.0,
            "log lex(s|t)": 0.0,
            "phrase_penalty": 0.0,
            "word_penalty": 0.0,
            "distortion": 0.1,
            "lm": 0.5,
        }
    }
    (tmp_path / "w.json").write_text(json.dumps(weights))
    assert (
        main(
            [
                "smt-bench",
                "--phrase-table",
                str(tmp_path / "pt.npz"),
                "--lm",
                str(tmp_path / "lm.arpa"),
                "--weights",
                str(tmp_path / "w.json"),
                "--source",
                str(tmp_path / "test.txt"),
                "--workers",
                "1",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["sentences"] == 3 and out["source_words"] == 6
    assert out["sentences_per_s"] > 0 and out["output_words"] == 6
