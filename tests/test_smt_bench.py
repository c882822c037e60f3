"""Decoding-speed benchmark (rnnlib.bench.smt) on a toy table, through `rnnlib smt-bench`."""

import json

import pytest

from rnnlib.cli import main
from rnnlib.smt.lm import train_arpa
from rnnlib.smt.phrases import build_phrase_table


def test_bench_cli_reports_speed(tmp_path, capsys):
    """The figures are those of the decoding run: sentences and source words of the file (with
    ``--limit``), the translations' words (here more than the source's: "cat" -> "kleine
    katze"), rates that are the counts over the run's seconds, and the settings given."""
    src = [["the", "house"], ["the", "cat"], ["a", "house"]]
    tgt = [["das", "haus"], ["die", "kleine", "katze"], ["ein", "haus"]]
    links = [[(0, 0), (1, 1)], [(0, 0), (1, 1), (1, 2)], [(0, 0), (1, 1)]]
    build_phrase_table(src, tgt, links).save(tmp_path / "pt.npz")
    train_arpa(tgt, tmp_path / "lm.arpa", 2)
    (tmp_path / "test.txt").write_text("the house\na cat\nthe dog\nthe house is old\n")
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
                "--stack-size",
                "7",
                "--ttable-limit",
                "4",
                "--distortion-limit",
                "3",
                "--limit",
                "3",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["sentences"] == 3 and out["source_words"] == 6  # the first 3 lines (--limit)
    # "das haus", "ein kleine katze", "das dog" (the unknown word passed through)
    assert out["output_words"] == 7
    assert out["sentences_per_s"] == pytest.approx(3 / out["seconds"], rel=1e-9)
    assert out["words_per_s"] == pytest.approx(6 / out["seconds"], rel=1e-9)
    assert (out["workers"], out["stack_size"], out["ttable_limit"], out["distortion_limit"]) == (
        1,
        7,
        4,
        3,
    )


def test_a_missing_file_is_named_in_one_line(tmp_path, capsys):
    from rnnlib.bench.smt import main

    source = tmp_path / "source.txt"
    source.write_text("a b\n")
    argv = ["--phrase-table", str(tmp_path / "pt"), "--lm", str(tmp_path / "lm.arpa")]
    with pytest.raises(SystemExit) as e:
        main([*argv, "--source", str(source)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"no such file: --phrase-table {tmp_path / 'pt'}; --lm {tmp_path / 'lm.arpa'}" in err
    assert "Traceback" not in err
