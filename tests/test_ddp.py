"""Several processes: torchrun with 2 CPU processes (gloo) reproduces one
process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from rnnlib.train import main as train_main
from test_train import reverse_pairs

HERE = Path(__file__).resolve().parent


def write_run(folder: Path, work_dir: str) -> Path:
    data = folder / "data"
    data.mkdir(exist_ok=True)
    for split, n, seed in (("train", 100, 1), ("dev", 30, 2)):
        pairs = reverse_pairs(n, seed=seed, lo=2, hi=12)
        pairs.src.save(data, f"{split}.src")
        pairs.tgt.save(data, f"{split}.tgt")
    run = {
        "data": "data",
        "work_dir": work_dir,
        "threads": 1,
        "src_vocab": 16,
        "tgt_vocab": 16,
        "model": {"preset": "smoke-rnnsearch", "hidden": 24},
        "train": {
            "optimizer": "adam",
            "lr": 0.01,
            "batch_size": 16,
            "pool": 4,
            "max_updates": 10,
            "eval_every": 5,
            "checkpoint_every": 5,
            "seed": 3,
            "device": "cpu",
        },
    }
    path = folder / f"{work_dir}.yml"
    path.write_text(yaml.safe_dump(run))
    return path


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.slow  # trains in two processes: about 10 s
def test_two_processes_reproduce_the_single_process_loss_curve(tmp_path, restore_threads):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "OMP_NUM_THREADS": "1",
    }
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    ddp_run = write_run(tmp_path, "ddp")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "rnnlib.train",
            "--config",
            str(ddp_run),
            "--no-progress",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ddp = json.loads((tmp_path / "ddp" / "train_log.json").read_text())
    assert ddp["world_size"] == 2

    assert train_main(["--config", str(write_run(tmp_path, "single")), "--no-progress"]) == 0
    single = json.loads((tmp_path / "single" / "train_log.json").read_text())
    assert single["world_size"] == 1

    assert len(ddp["log"]) == len(single["log"]) == 10
    for a, b in zip(ddp["log"], single["log"]):
        assert (a["sentences"], a["tokens"]) == (
            b["sentences"],
            b["tokens"],
        )  # the same global batches
        assert a["train_nll_token"] == pytest.approx(b["train_nll_token"], abs=1e-4)
        assert a["train_nll_sentence"] == pytest.approx(b["train_nll_sentence"], abs=1e-4)
    assert [e["dev_nll_token"] for e in ddp["evals"]] == pytest.approx(
        [e["dev_nll_token"] for e in single["evals"]], abs=1e-4
    )
    # the loss really moved, so agreeing is not trivial
    assert (
        single["log"][-1]["train_nll_token"] < single["log"][0]["train_nll_token"] - 0.01
    )  # 100x the tolerance
    # both wrote one checkpoint holding the same parameters
    from rnnlib.checkpoint import load_checkpoint

    pa = load_checkpoint(tmp_path / "ddp" / "checkpoint.pt")["model"]
    pb = load_checkpoint(tmp_path / "single" / "checkpoint.pt")["model"]
    assert max(float((pa[k] - pb[k]).abs().max()) for k in pa) < 1e-4


def test_bad_run_files_are_one_line_on_stderr_naming_the_file(tmp_path, restore_threads, capsys):
    run = write_run(tmp_path, "bad")
    spec = yaml.safe_load(run.read_text())

    def fails(changed: dict, *sets: str, drop: str | None = None) -> str:
        path = tmp_path / "changed.yml"
        written = {k: v for k, v in {**spec, **changed}.items() if k != drop}
        path.write_text(yaml.safe_dump(written))
        argv = ["--config", str(path), "--no-progress"] + [a for s in sets for a in ("--set", s)]
        assert train_main(argv) == 2
        out, err = capsys.readouterr()
        assert err.startswith("rnnlib train: error: ") and err.count("\n") == 1, err
        assert str(path) in err or "checkpoint" in err, err
        return err

    assert "unknown key 'modle'" in fails({"modle": {}})
    assert "no train.src.ids.npy" in fails({"data": "nowhere"})
    assert "the run file has no 'work_dir'" in fails({}, drop="work_dir")
    # a checkpoint written by a model of another size does not resume silently
    assert train_main(["--config", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    err = fails({}, "model.hidden=32")
    assert "the checkpoint's model is not this run's model" in err
