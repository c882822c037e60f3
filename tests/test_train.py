"""Training (issue 4, items 7 and 8): config, pools, logs, early stopping, determinism, kill/resume."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from rnnlib.batching import PoolBatcher, Position
from rnnlib.checkpoint import load_checkpoint
from rnnlib.ragged import ParallelArrays, Ragged
from rnnlib.train import TrainConfig, evaluate_nll, train

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


# -- tiny real models --------------------------------------------------------------------------

def smoke_model(arch: str = "rnnsearch", vocab: int = 16, **overrides) -> nn.Module:
    """The ``smoke-<arch>`` preset (``rnnlib.presets``) with a ``vocab``-word vocabulary on both sides."""
    from rnnlib.presets import build_model, preset
    return build_model(preset(f"smoke-{arch}", src_vocab=vocab, tgt_vocab=vocab, **overrides))


def reverse_pairs(n: int, vocab: int = 16, seed: int = 0, lo: int = 2, hi: int = 9) -> ParallelArrays:
    """A reversal task: target = source reversed; ids from 4 (after the specials) to ``vocab - 1``."""
    rng = np.random.default_rng(seed)
    srcs = [rng.integers(4, vocab, size=rng.integers(lo, hi + 1)) for _ in range(n)]
    return ParallelArrays(Ragged.from_lists(srcs), Ragged.from_lists([s[::-1] for s in srcs]))


def tiny_setup(**overrides):
    """``(model, train, dev, cfg)`` for the resume test (also run in a child process)."""
    torch.manual_seed(0)
    model = smoke_model()
    cfg = TrainConfig(batch_size=8, pool=3, max_updates=24, checkpoint_every=8, eval_every=8, seed=5)
    return model, reverse_pairs(100, seed=1), reverse_pairs(20, seed=2), cfg.override(**overrides)


def params_of(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.fixture(autouse=True)
def one_thread():
    """One thread: bitwise comparisons need a fixed thread count, and tiny models run faster so."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# -- config --------------------------------------------------------------------------------------

def test_config_defaults_are_paper_b_and_unknown_fields_are_named():
    cfg = TrainConfig(max_updates=10)
    assert (cfg.optimizer, cfg.rho, cfg.eps, cfg.lr, cfg.clip_norm, cfg.batch_size, cfg.pool) == \
        ("adadelta", 0.95, 1e-6, 1.0, 1.0, 80, 20)
    with pytest.raises(ValueError, match="'batchsize'"):
        TrainConfig.from_dict({"max_updates": 5, "batchsize": 10})
    with pytest.raises(ValueError, match="never stops"):
        TrainConfig()
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(max_updates=1, batch_size=0)


# -- pools ---------------------------------------------------------------------------------------

def test_pools_are_length_sorted_and_one_epoch_visits_every_pair_once():
    data = reverse_pairs(1000, seed=3, lo=1, hi=40)
    b = PoolBatcher(data.src.lengths, data.tgt.lengths, batch_size=80, pool=20, seed=1)
    stream = b.stream()
    seen, pool_lengths = [], []
    for k in range(13):  # 1000 pairs = 12 full minibatches of 80 + one of 40
        idx, nxt, epochs = next(stream)
        seen.append(idx)
        pool_lengths.extend(data.tgt.lengths[idx])
    assert [len(i) for i in seen] == [80] * 12 + [40]
    assert sorted(np.concatenate(seen).tolist()) == list(range(1000))
    assert epochs == pytest.approx(1.0) and nxt == Position(1, 0, 0)
    assert pool_lengths == sorted(pool_lengths)  # 1000 < 1600: one pool, sorted throughout
    # the second epoch reuses the one shuffle
    assert np.array_equal(next(stream)[0], seen[0])
    # a stream restarted from a position continues identically
    s1 = b.stream(Position(0, 0, 5))
    assert np.array_equal(next(s1)[0], seen[5])


def test_pools_of_1600_become_20_sorted_minibatches():
    data = reverse_pairs(4000, seed=4, lo=1, hi=50)
    b = PoolBatcher(data.src.lengths, data.tgt.lengths, batch_size=80, pool=20, seed=2)
    stream = b.stream()
    first_pool = [next(stream)[0] for _ in range(20)]
    members = np.concatenate(first_pool)
    assert set(members.tolist()) == set(b.order[:1600].tolist())
    lengths = data.tgt.lengths[members]
    assert np.all(np.diff(lengths) >= 0)
    nxt_idx, nxt_pos, _ = next(stream)
    assert nxt_pos == Position(0, 1600, 1) and set(nxt_idx.tolist()) <= set(b.order[1600:3200].tolist())


# -- the loop ------------------------------------------------------------------------------------

def test_training_learns_logs_and_returns_the_best_on_dev(tmp_path, one_thread):
    torch.manual_seed(0)
    model = smoke_model(emb=16, hidden=32)
    tr, dev = reverse_pairs(400, seed=1), reverse_pairs(40, seed=2)
    before = evaluate_nll(model, dev)["nll_sentence"]
    # Adam so that 60 updates move the loss a lot (Adadelta from the papers' tiny initial weights is slow)
    cfg = TrainConfig(batch_size=20, pool=5, max_updates=60, eval_every=20, checkpoint_every=30,
                      optimizer="adam", lr=0.01)
    result = train(model, tr, dev, cfg, tmp_path, progress=False)
    assert result.updates == 60 and result.stopped == "max_updates"
    assert len(result.log) == 60 and [e["update"] for e in result.evals] == [20, 40, 60]
    assert result.best["dev_nll_sentence"] < 0.9 * before
    # the model holds the best-on-dev parameters
    best = min(result.evals, key=lambda e: e["dev_nll_sentence"])
    assert evaluate_nll(model, dev)["nll_sentence"] == pytest.approx(best["dev_nll_sentence"], rel=1e-6)
    # paper B Table 2 columns and per-update fields
    row = result.log[-1]
    assert set(row) >= {"update", "epoch", "train_nll_sentence", "train_nll_token", "seconds"}
    assert row["epoch"] == pytest.approx(60 * 20 / 400)
    assert row["train_nll_sentence"] > row["train_nll_token"] > 0
    assert result.log[-1]["train_nll_token"] < result.log[0]["train_nll_token"]
    # the logs on disk
    assert (tmp_path / "train_log.csv").read_text().count("\n") == 61
    assert (tmp_path / "eval_log.csv").read_text().count("\n") == 4
    saved = json.loads((tmp_path / "train_log.json").read_text())
    assert saved["config"]["batch_size"] == 20 and len(saved["log"]) == 60
    ckpt = load_checkpoint(tmp_path / "checkpoint.pt")  # weights_only=True
    assert ckpt["update"] == 60 and ckpt["stopped"] == "max_updates"
    # rerunning a finished run trains no further and gives the same answer
    again = train(smoke_model(emb=16, hidden=32), tr, dev, cfg, tmp_path, progress=False)
    assert again.updates == 60 and again.resumed_from == 60 and again.best == result.best


def test_gradient_norm_is_clipped_to_one(tmp_path):
    model, tr, dev, cfg = tiny_setup(max_updates=3, checkpoint_every=None, eval_every=None, lr=1.0,
                                     optimizer="sgd", clip_norm=1.0)
    before = params_of(model)
    res = train(model, tr, None, cfg, tmp_path, progress=False)
    assert res.log[0]["grad_norm"] > 1.0  # so the clip acted...
    # ...and one SGD step with lr 1 moved the parameters by exactly the clipped gradient (norm 1)
    torch.manual_seed(0)
    m2 = smoke_model()
    train(m2, tr, None, cfg.override(max_updates=1), tmp_path / "one", progress=False)
    step = torch.sqrt(sum(((params_of(m2)[k] - before[k]) ** 2).sum() for k in before))
    assert float(step) == pytest.approx(1.0, rel=1e-4)


def test_early_stopping_after_patience_evaluations_without_improvement(tmp_path):
    # lr 0: the dev NLL never improves after the first evaluation
    model, tr, dev, cfg = tiny_setup(optimizer="sgd", lr=0.0, max_updates=100, eval_every=1, patience=2)
    res = train(model, tr, dev, cfg, tmp_path, progress=False)
    assert res.stopped == "early_stopping" and res.updates == 3
    assert res.best["update"] == 1


def test_same_seed_same_parameters_and_changed_config_refuses_to_resume(tmp_path, one_thread):
    runs = []
    for name in ("a", "b"):
        model, tr, dev, cfg = tiny_setup(max_updates=6, checkpoint_every=3)
        train(model, tr, dev, cfg, tmp_path / name, progress=False)
        runs.append(params_of(model))
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
    model, tr, dev, cfg = tiny_setup(max_updates=6, batch_size=4)
    with pytest.raises(ValueError, match="batch_size=8"):
        train(model, tr, dev, cfg, tmp_path / "a", progress=False)


CHILD = """
import sys, time, torch
torch.set_num_threads(1)
from test_train import tiny_setup
from rnnlib.train import train
model, tr, dev, cfg = tiny_setup()
forward = model.forward
def slow(*args):
    time.sleep(0.04)
    return forward(*args)
model.forward = slow
train(model, tr, dev, cfg, sys.argv[1], progress=False)
"""


def test_killed_run_resumes_bitwise_equal_to_an_uninterrupted_run(tmp_path, one_thread):
    work = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(work)], env=env, cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (work / "checkpoint.pt").exists():
            assert child.poll() is None, child.stderr.read().decode()
            assert time.monotonic() < deadline, "no checkpoint within 60 s"
            time.sleep(0.005)
        time.sleep(0.05)  # an update or two past the checkpoint; the next one is >= 0.32 s away
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert load_checkpoint(work / "checkpoint.pt")["update"] == 8  # killed between checkpoints

    model, tr, dev, cfg = tiny_setup()
    resumed = train(model, tr, dev, cfg, work, progress=False)
    assert resumed.resumed_from == 8 and resumed.updates == 24
    resumed_params = params_of(model)

    model, tr, dev, cfg = tiny_setup()
    straight = train(model, tr, dev, cfg, tmp_path / "straight", progress=False)
    assert all(torch.equal(resumed_params[k], v) for k, v in params_of(model).items())
    assert [r["train_nll_sentence"] for r in resumed.log] == [r["train_nll_sentence"] for r in straight.log]
    assert resumed.evals[-1]["dev_nll_sentence"] == straight.evals[-1]["dev_nll_sentence"]


def test_run_file_with_an_unknown_key_is_refused_naming_it(tmp_path):
    from rnnlib.train import main as train_main
    run = tmp_path / "run.yml"
    run.write_text("data: .\nwork_dir: w\nmodel: {preset: smoke-rnnsearch}\ntrian: {max_updates: 1}\n")
    with pytest.raises(ValueError, match="'trian'"):
        train_main(["--config", str(run)])
    run.write_text("data: .\nwork_dir: w\nmodel: {preset: smoke-rnnsearch}\ntrain: {max_update: 1}\n")
    reverse_pairs(10).src.save(tmp_path, "train.src")
    reverse_pairs(10).tgt.save(tmp_path, "train.tgt")
    with pytest.raises(ValueError, match="'max_update'"):
        train_main(["--config", str(run)])
