"""Decoding-speed benchmark (rnnlib.bench.smt) on a toy table, through `rnnlib smt-bench`."""

import json

import pytest

from rnnlib.cli import main
from rnnlib.smt.lm import train_arpa
from rnnlib.smt.phrases import build_phrase_table


def toy_system(folder) -> None:
    """A toy phrase table ``pt.npz`` and bigram LM ``lm.arpa`` in ``folder`` (German targets),
    and ``test.txt``: four source lines, one with an unknown word, one longer."""
    src = [["the", "house"], ["the", "cat"], ["a", "house"]]
    tgt = [["das", "haus"], ["die", "kleine", "katze"], ["ein", "haus"]]
    links = [[(0, 0), (1, 1)], [(0, 0), (1, 1), (1, 2)], [(0, 0), (1, 1)]]
    build_phrase_table(src, tgt, links).save(folder / "pt.npz")
    train_arpa(tgt, folder / "lm.arpa", 2)
    (folder / "test.txt").write_text("the house\na cat\nthe dog\nthe house is old\n")


def test_bench_cli_reports_speed(tmp_path, capsys):
    """The figures are those of the decoding run: sentences and source words of the file (with
    ``--limit``), the translations' words (here more than the source's: "cat" -> "kleine
    katze"), rates that are the counts over the run's seconds, and the settings given."""
    toy_system(tmp_path)
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


class _Pruned:
    """A stand-in decoder whose search misses the best candidate when its weights are large (as
    a fixed beam threshold does): 1-best ``[1, 0]`` at unit scale, ``[0, 1]`` above scale 10."""

    fixed = [False, False, True]

    def __init__(self):
        from rnnlib.smt.decoder import DecoderConfig

        self.weights = [3.0, 1.0, 0.5]
        self.config = DecoderConfig(stack_size=5, workers=2)
        self.seen = []

    def set_weights(self, w):
        self.weights = list(w)

    def translate_corpus(self, sentences, nbest):
        import numpy as np

        from rnnlib.smt.decoder import Translation

        scale = abs(self.weights[0]) + abs(self.weights[1])
        self.seen.append((scale, self.config.workers))
        feats = np.array([1.0, 0.0, 0.0]) if scale < 10 else np.array([0.0, 1.0, 0.0])
        return [[Translation(["w"], feats, 0.0)] for _ in sentences]


def test_scales_counts_the_search_errors_of_larger_weights_and_restores_unit_ones():
    from rnnlib.bench.smt import scales

    dec = _Pruned()
    out = scales(dec, [["a"], ["b"], ["c"]], [100, 1, 5], rounds=2)
    rows = {r["factor"]: r for r in out["scales"]}
    assert list(rows) == [1.0, 5.0, 100.0]
    assert rows[1.0]["lower_model_score"] == rows[5.0]["lower_model_score"] == 0
    # unit weights [0.75, 0.25]: the missed candidate scores 0.25 against 0.75, on all 3
    assert rows[100.0]["lower_model_score"] == 3 and rows[100.0]["higher_model_score"] == 0
    assert rows[100.0]["mean_difference"] == pytest.approx(-0.5)
    assert dec.weights == pytest.approx([0.75, 0.25, 0.5])  # unit-scaled, the fixed one kept
    assert dec.config.workers == 2 and all(w == 1 for _, w in dec.seen)  # one worker meanwhile
    # the first call fills the caches at the given weights (scale 4), then 2 rounds of 3 scales
    assert [round(s, 6) for s, _ in dec.seen[1:]] == [1.0, 5.0, 100.0, 100.0, 5.0, 1.0]


def test_scales_on_the_command_line(tmp_path, capsys):
    toy_system(tmp_path)
    args = ["smt-bench", "--phrase-table", str(tmp_path / "pt.npz"), "--lm"]
    args += [str(tmp_path / "lm.arpa"), "--source", str(tmp_path / "test.txt")]
    assert main([*args, "--scales", "1,1e6", "--rounds", "1", "--limit", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["factor"] for r in out["scales"]] == [1.0, 1e6] and out["sentences"] == 3
    assert out["scales"][0]["lower_model_score"] == 0
    with pytest.raises(SystemExit):
        main([*args, "--scales", "1,-2"])
    assert "--scales: factors must be > 0" in capsys.readouterr().err
