"""``rnnlib bench``: a tiny smoke run that prints every figure (not a timed
test)."""

from __future__ import annotations

import json
import re

import pytest
import torch

from rnnlib.bench.nmt import Dims, forward_flops, model_shapes
from rnnlib.cli import main as cli_main


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.slow  # trains and times both models: about 8 s
def test_bench_quick_prints_speed_memory_and_mfu_for_both_models(tmp_path, capsys, restore_threads):
    out_json = tmp_path / "bench.json"
    assert cli_main(["bench", "--quick", "--bf16", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"measured fp32 torch.mm rate: [\d.]+ GFLOP/s", out)
    for preset in ("smoke-rnnsearch", "smoke-rnnencdec"):
        block = out.split(preset, 1)[1].split("\n\n", 1)[0]
        for row in (
            "train target tokens/s",
            "beam search sentences/s",
            "train MFU vs fp32 mm",
            "train peak RSS growth",
            "beam peak RSS growth",
            "bf16 autocast",
        ):
            assert row in block, f"{preset}: no {row!r} in\n{block}"
        assert re.search(r"train target tokens/s\s+[\d,.]+\s+[\d,.]+\s+[\d.]+x", block)
        assert re.search(r"torch.mm at the decoder step \(8x16 by 16x\d+\): [\d.]+ GFLOP/s", block)
        assert re.search(r"torch.mm at the output layer \(\d+x8 by 8x40\): [\d.]+ GFLOP/s", block)
    assert "getrusage" in out
    assert re.search(r"allocator: (glibc malloc, freed memory kept|the C library's default)", out)
    assert re.search(
        r"CPU bf16 matrix instructions: (avx512_bf16|amx_bf16|none \(no avx512_bf16)", out
    )
    figures = json.loads(out_json.read_text())
    assert figures["matmul_flop_s"] > 1e8 and figures["matmul_bf16_flop_s"] > 0
    assert set(figures["cpu_bf16_instructions"]) <= {"avx512_bf16", "amx_bf16"}
    for m in figures["models"]:
        for side in ("rnnlib", "reference"):
            assert m[side]["train_tok_s"] > 0 and m[side]["beam_sent_s"] > 0
        assert m["flops_per_token"] > 0 and m["bf16_nll"]["bf16_last"] > 0
        assert len(m["shape_flop_s"]) == 2 and all(r > 0 for r in m["shape_flop_s"].values())
        check_figures_agree(m, out)


def check_figures_agree(m: dict, out: str) -> None:
    """What the figures of one model must be whatever the machine's speed: the preset's sizes,
    FLOPs per target token between those of the shortest and the longest pair of the run
    (lengths 3-8, ``forward_flops`` times 3 for the backward pass; checked by hand above), the
    same FLOPs per token in the FLOP rate of each side, and the printed table's figures."""
    from rnnlib.presets import preset

    cfg = preset(m["preset"])
    want = dict(m=cfg.emb, n=cfg.hidden, l=cfg.maxout, V=cfg.tgt_vocab, Vs=cfg.src_vocab)
    want["a"] = cfg.align if m["kind"] == "rnnsearch" else 0
    assert {k: m["dims"][k] for k in want} == want
    d = Dims(**m["dims"])
    per_token = [
        3 * forward_flops(d, s + 1, t + 1) / (t + 1) for s in range(3, 9) for t in range(3, 9)
    ]
    low, high = min(per_token), max(per_token)
    assert low <= m["flops_per_token"] <= high, (low, m["flops_per_token"], high)
    for side in ("rnnlib", "reference"):
        ratio = m[side]["train_flop_s"] / m[side]["train_tok_s"]
        assert low <= ratio <= high, (side, low, ratio, high)
    block = out.split(m["preset"], 1)[1].split("\n\n", 1)[0]
    row = re.search(r"train target tokens/s\s+([\d,]+)\s+([\d,]+)\s+([\d.]+)x", block)
    ours, ref, shown = (float(g.replace(",", "")) for g in row.groups())
    assert ours == round(m["rnnlib"]["train_tok_s"]) and ref == round(m["reference"]["train_tok_s"])
    assert shown == pytest.approx(
        m["rnnlib"]["train_tok_s"] / m["reference"]["train_tok_s"], abs=0.006
    )
    mfu = re.search(r"train MFU vs fp32 mm\s+([\d.]+)%", block)
    assert float(mfu.group(1)) == pytest.approx(
        100 * m["rnnlib"]["train_flop_s"] / m["mm_flop_s"], abs=0.051
    )


def test_model_shapes_are_the_decoder_step_and_output_products():
    # RNNsearch: s_{i-1} (B x n) by [W_a; U_r; U_z] (n x (n' + 2n)); output: tokens x l by l x V
    assert model_shapes(Dims("rnnsearch", 4, 8, 3, 6, 10, 11), 5, 17) == {
        "decoder step": (5, 8, 6 + 16),
        "output layer": (17, 3, 10),
    }
    assert model_shapes(Dims("rnnencdec", 4, 8, 3, 0, 10, 11), 5, 17)["decoder step"] == (5, 8, 24)


def test_flop_count_matches_a_hand_count():
    # RNNencdec, m=1, n=1, l=1, V=1, S=1, T=1: encoder GRU 2*1*3 + 2*1*3 = 12, c and s_0 2 + 2,
    # C c 6; one step: GRU input and recurrent 12, deep output 2*3*2 = 12, W_o 2 -> 48
    assert forward_flops(Dims("rnnencdec", 1, 1, 1, 0, 1, 1), 1, 1) == 48
    # RNNsearch per decoder step grows with the source length by 2*S*n' + 2*S*2n (energies, context)
    d = Dims("rnnsearch", 4, 8, 4, 6, 10, 10)
    step = lambda S: forward_flops(d, S, 2) - forward_flops(d, S, 1)  # noqa: E731
    assert step(5) - step(4) == 2 * 6 + 2 * 2 * 8


@pytest.fixture
def forget_against():
    import sys

    yield
    for name in [
        m for m in sys.modules if m == "rnnlib_against" or m.startswith("rnnlib_against.")
    ]:
        del sys.modules[name]


def test_bench_against_another_checkout_interleaves_both_in_one_process(
    tmp_path, capsys, restore_threads, forget_against
):
    """``--against DIR`` loads DIR's rnnlib under another name and times both versions' whole
    updates and searches alternately; against this very checkout, there is no EOS arm."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out_json = tmp_path / "against.json"
    assert cli_main(["bench", "--quick", "--against", str(root), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert Path(sys.modules["rnnlib_against"].__file__).resolve() == root / "rnnlib" / "__init__.py"
    assert (
        sys.modules["rnnlib_against.search"] is not sys.modules["rnnlib.search"]
    )  # a second copy of the code
    assert "sources end in EOS on both" in out
    rows = json.loads(out_json.read_text())["rows"]
    assert {(r["model"], r["measure"], r["arm"]) for r in rows} == {
        (k, w, a)
        for k in ("rnnsearch", "rnnencdec")
        for w in ("train", "beam")
        for a in ("this", "against")
    }
    by = {(r["model"], r["measure"], r["arm"]): r for r in rows}
    for r in rows:
        assert r["rate"] > 0 and r["calls"] >= 4
        assert r["calls"] % 2 == 0  # ABBA rounds: each arm runs twice per round
        if r["arm"] == "against":
            this = by[(r["model"], r["measure"], "this")]
            assert r["calls"] == this["calls"]  # alternated call by call
            # the same work per call on both arms (the same checkout): the ratio of the whole
            # run's times is the ratio of the rates
            assert r["this_over_arm"] == pytest.approx(this["rate"] / r["rate"], rel=1e-9)
            assert r["this_over_arm"] > 0 and r["this_over_arm_median_pair"] > 0
            assert re.search(
                rf"{r['measure']}\s+against\s+[\d.]+ \S+\s+\(\d+ calls\)\s+"
                r"this / against: [\d.]+ whole run",
                out,
            )


def test_bench_against_a_folder_without_rnnlib_names_it(tmp_path, forget_against):
    with pytest.raises(
        SystemExit, match=r"--against .*: no rnnlib package there \(expected .*rnnlib/__init__.py\)"
    ):
        cli_main(["bench", "--quick", "--against", str(tmp_path)])


def test_bench_against_refuses_a_version_that_imports_this_checkout(tmp_path, forget_against):
    """A module of the other version that refers to this checkout's rnnlib (an absolute import)
    would make its arm time this checkout: the comparison stops and names it."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(
        root / "rnnlib", tmp_path / "rnnlib", ignore=shutil.ignore_patterns("__pycache__")
    )
    search = tmp_path / "rnnlib" / "search.py"
    search.write_text(
        search.read_text() + "\nfrom rnnlib.batch import pad as absolute_pad  # noqa\n"
    )
    with pytest.raises(
        SystemExit, match=r"rnnlib_against\.search\.absolute_pad is this checkout's rnnlib\.batch"
    ):
        cli_main(["bench", "--quick", "--against", str(tmp_path)])
