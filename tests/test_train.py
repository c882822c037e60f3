"""Training: config, presets, pools, random minibatches, logs, early
stopping, determinism, kill/resume, resume with changed limits."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from rnnlib.minibatch_order import PoolBatcher, Position, RandomBatcher
from rnnlib.checkpoint import load_checkpoint
from rnnlib.ragged import ParallelArrays, Ragged
from rnnlib.train import (
    LATER_FIELDS,
    TRAIN_PRESETS,
    TrainConfig,
    evaluate_nll,
    train,
    train_preset,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


# -- tiny real models --------------------------------------------------------------------------


def smoke_model(arch: str = "rnnsearch", vocab: int = 16, **overrides) -> nn.Module:
    """The ``smoke-<arch>`` preset (``rnnlib.presets``) with a ``vocab``-word vocabulary on both
    sides."""
    from rnnlib.presets import build_model, preset

    return build_model(preset(f"smoke-{arch}", src_vocab=vocab, tgt_vocab=vocab, **overrides))


def reverse_pairs(
    n: int, vocab: int = 16, seed: int = 0, lo: int = 2, hi: int = 9
) -> ParallelArrays:
    """A reversal task: target = source reversed; ids from 4 (after the specials) to
    ``vocab - 1``."""
    rng = np.random.default_rng(seed)
    srcs = [rng.integers(4, vocab, size=rng.integers(lo, hi + 1)) for _ in range(n)]
    return ParallelArrays(Ragged.from_lists(srcs), Ragged.from_lists([s[::-1] for s in srcs]))


def tiny_setup(dropout: float = 0.0, **overrides):
    """``(model, train, dev, cfg)`` for the resume test (also run in a child process)."""
    torch.manual_seed(0)
    model = smoke_model(dropout=dropout)
    cfg = TrainConfig(
        batch_size=8, pool=3, max_updates=24, checkpoint_every=8, eval_every=8, seed=5
    )
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
    assert (cfg.optimizer, cfg.rho, cfg.eps, cfg.lr, cfg.clip_norm, cfg.batch_size, cfg.pool) == (
        "adadelta",
        0.95,
        1e-6,
        1.0,
        1.0,
        80,
        20,
    )
    with pytest.raises(ValueError, match="'batchsize'"):
        TrainConfig.from_dict({"max_updates": 5, "batchsize": 10})
    with pytest.raises(ValueError, match="never stops"):
        TrainConfig()
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(max_updates=1, batch_size=0)
    with pytest.raises(ValueError, match="batching"):
        TrainConfig(max_updates=1, batching="sorted")
    with pytest.raises(ValueError, match="give eval_every"):
        TrainConfig(patience=2)  # patience counts evaluations, so it needs a schedule


def test_paper_presets_are_named_and_unknown_names_list_the_valid_ones():
    a, b = train_preset("paper-a", max_updates=5), train_preset("paper-b", max_updates=5)
    assert (a.optimizer, a.rho, a.eps, a.lr, a.batch_size, a.batching, a.clip_norm) == (
        "adadelta",
        0.95,
        1e-6,
        1.0,
        64,
        "random",
        None,
    )
    assert (b.optimizer, b.rho, b.eps, b.lr, b.batch_size, b.batching, b.pool, b.clip_norm) == (
        "adadelta",
        0.95,
        1e-6,
        1.0,
        80,
        "pools",
        20,
        1.0,
    )
    assert b == TrainConfig(max_updates=5)  # the defaults are paper B's
    assert train_preset("paper-a", max_updates=5, clip_norm=1.0).clip_norm == 1.0
    with pytest.raises(ValueError, match="paper-a, paper-b"):
        train_preset("paper-c", max_updates=5)
    with pytest.raises(ValueError, match="'batchsize'"):
        train_preset("paper-a", max_updates=5, batchsize=3)
    with pytest.raises(ValueError, match="never stops"):
        train_preset("paper-a")  # the papers give no limit
    assert set(TRAIN_PRESETS) == {"paper-a", "paper-b"}


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
    assert nxt_pos == Position(0, 1600, 1) and set(nxt_idx.tolist()) <= set(
        b.order[1600:3200].tolist()
    )


# -- random minibatches (paper A) ----------------------------------------------------------------


def test_random_minibatches_use_every_pair_once_per_epoch_in_a_new_seeded_order():
    n, bs = 203, 64  # 3 full minibatches and one of 11
    b = RandomBatcher(n, bs, seed=7)
    stream = b.stream()
    epochs = []
    for e in range(3):
        batches = [next(stream) for _ in range(4)]
        assert [len(idx) for idx, _, _ in batches] == [64, 64, 64, 11]
        assert sorted(np.concatenate([idx for idx, _, _ in batches]).tolist()) == list(range(n))
        assert batches[-1][1] == Position(e + 1, 0, 0) and batches[-1][2] == pytest.approx(e + 1)
        assert batches[0][2] == pytest.approx(e + 64 / n)
        epochs.append(np.concatenate([idx for idx, _, _ in batches]))
    assert not np.array_equal(epochs[0], epochs[1])  # reshuffled every epoch
    assert not np.array_equal(epochs[0], np.sort(epochs[0]))  # and not in corpus order
    # seeded: the same seed draws the same minibatches, another seed others
    assert np.array_equal(
        np.concatenate([next(RandomBatcher(n, bs, 7).stream())[0]]), epochs[0][:64]
    )
    assert not np.array_equal(next(RandomBatcher(n, bs, 8).stream())[0], epochs[0][:64])
    # resumable: a stream started at a position continues exactly where the first one was
    resumed = RandomBatcher(n, bs, seed=7).stream(Position(1, 0, 2))
    assert np.array_equal(next(resumed)[0], epochs[1][128:192])
    assert np.array_equal(next(resumed)[0], epochs[1][192:])
    assert np.array_equal(next(resumed)[0], epochs[2][:64])


# -- the loop ------------------------------------------------------------------------------------


def test_training_learns_logs_and_returns_the_best_on_dev(tmp_path, one_thread):
    torch.manual_seed(0)
    model = smoke_model(emb=16, hidden=32)
    tr, dev = reverse_pairs(400, seed=1), reverse_pairs(40, seed=2)
    before = evaluate_nll(model, dev)["nll_sentence"]
    # Adam so that 60 updates move the loss a lot (Adadelta from the papers' tiny initial weights
    # is slow)
    cfg = TrainConfig(
        batch_size=20,
        pool=5,
        max_updates=60,
        eval_every=20,
        checkpoint_every=30,
        optimizer="adam",
        lr=0.01,
    )
    result = train(model, tr, dev, cfg, tmp_path, progress=False)
    assert result.updates == 60 and result.stopped == "max_updates"
    assert len(result.log) == 60 and [e["update"] for e in result.evals] == [20, 40, 60]
    assert result.best["dev_nll_sentence"] < 0.9 * before
    # the model holds the best-on-dev parameters
    best = min(result.evals, key=lambda e: e["dev_nll_sentence"])
    assert evaluate_nll(model, dev)["nll_sentence"] == pytest.approx(
        best["dev_nll_sentence"], rel=1e-6
    )
    # paper B Table 2 columns and per-update fields
    row = result.log[-1]
    assert set(row) >= {"update", "epoch", "train_nll_sentence", "train_nll_token", "seconds"}
    assert row["epoch"] == pytest.approx(60 * 20 / 400)
    # the same summed NLL of the update's minibatch, per sentence and per target token
    per_sentence = row["train_nll_token"] * row["tokens"] / row["sentences"]
    assert row["train_nll_sentence"] == pytest.approx(per_sentence, rel=1e-9)
    assert row["sentences"] == 20 and row["train_nll_token"] > 0
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
    model, tr, dev, cfg = tiny_setup(
        max_updates=3,
        checkpoint_every=None,
        eval_every=None,
        lr=1.0,
        optimizer="sgd",
        clip_norm=1.0,
    )
    before = params_of(model)
    res = train(model, tr, None, cfg, tmp_path, progress=False)
    assert res.log[0]["grad_norm"] > 1.0  # so the clip acted...
    # ...and one SGD step with lr 1 moved the parameters by exactly the clipped gradient (norm 1)
    torch.manual_seed(0)
    m2 = smoke_model()
    train(m2, tr, None, cfg.override(max_updates=1), tmp_path / "one", progress=False)
    step = torch.sqrt(sum(((params_of(m2)[k] - before[k]) ** 2).sum() for k in before))
    assert float(step) == pytest.approx(1.0, rel=1e-4)


def _hand_gradient(model: nn.Module, pairs: ParallelArrays, loss_norm: str) -> dict:
    """The gradient of the papers' objective on all of ``pairs`` as one minibatch, by hand: each
    sentence's summed cross-entropy (its words and EOS) from the plain model, one sentence at a
    time, averaged over the sentences or over the target tokens."""
    from rnnlib.batch import make_batch

    model.zero_grad(set_to_none=True)
    total = 0.0
    for i in range(len(pairs.src)):
        b = make_batch(pairs, [i])
        logits = model(b.src, b.src_mask, b.tgt_in)[0]  # (T, V), one sentence: no padding
        total = total + nn.functional.cross_entropy(logits, b.tgt_out[0], reduction="sum")
    tokens = sum(len(pairs.tgt[i]) + 1 for i in range(len(pairs.src)))
    (total / (len(pairs.src) if loss_norm == "sentence" else tokens)).backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def _step_gradient(tmp_path, pairs, loss_norm: str, rank: int = 0, size: int = 1) -> dict:
    """The gradient one training step leaves on the parameters (no clipping, SGD with lr 0) as
    process ``rank`` of ``size`` (``size`` > 1: a simulated torchrun process, whose gradient DDP
    would average with the others')."""
    from rnnlib import distributed
    from rnnlib.train import Trainer

    torch.manual_seed(0)
    cfg = TrainConfig(batch_size=len(pairs.src), pool=1, max_updates=1, checkpoint_every=None,
                      eval_every=None, seed=5, optimizer="sgd", lr=0.0, clip_norm=None,
                      loss_norm=loss_norm)  # fmt: skip
    trainer = Trainer(smoke_model(), pairs, None, cfg, tmp_path / f"{loss_norm}-{rank}-{size}",
                      progress=False)  # fmt: skip
    trainer.world = distributed.World(rank=rank, size=size)
    seen = []
    local_batch = trainer._local_batch
    trainer._local_batch = lambda idx: (seen.append(sorted(idx.tolist())), local_batch(idx))[1]
    trainer.step()
    assert seen == [list(range(len(pairs.src)))]  # the minibatch is every pair
    return {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters()}


@pytest.mark.parametrize("loss_norm", ["sentence", "token"])
def test_the_gradient_is_the_mean_over_sentences_or_tokens_and_ddp_averages_to_it(
    tmp_path, loss_norm, monkeypatch
):
    from rnnlib import distributed

    pairs = reverse_pairs(6, seed=3)  # 6 sentences of 2 to 9 words (their lengths differ)
    torch.manual_seed(0)
    hand = _hand_gradient(smoke_model(), pairs, loss_norm)
    one = _step_gradient(tmp_path, pairs, loss_norm)
    assert set(one) == set(hand)
    for n in hand:
        torch.testing.assert_close(one[n], hand[n], rtol=1e-4, atol=1e-6)
    # two processes, each with every other pair: DDP's average of their gradients is the
    # gradient of the whole minibatch (each scales its loss by the world size over the global
    # count); the sum over processes of the logged numbers is the identity here
    monkeypatch.setattr(distributed, "all_sum", lambda values, world, device: list(values))
    shares = [_step_gradient(tmp_path, pairs, loss_norm, rank=r, size=2) for r in (0, 1)]
    for n in hand:
        torch.testing.assert_close((shares[0][n] + shares[1][n]) / 2, hand[n], rtol=1e-4, atol=1e-6)


def test_early_stopping_after_patience_evaluations_without_improvement(tmp_path):
    # lr 0: the dev NLL never improves after the first evaluation
    model, tr, dev, cfg = tiny_setup(
        optimizer="sgd", lr=0.0, max_updates=100, eval_every=1, patience=2
    )
    res = train(model, tr, dev, cfg, tmp_path, progress=False)
    assert res.stopped == "early_stopping" and res.updates == 3
    with pytest.raises(ValueError, match="needs a dev set"):
        train(model, tr, None, cfg, tmp_path / "no_dev", progress=False)
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


# -- resuming with a changed limit ----------------------------------------------------------------


def noisy_run(work: Path, **overrides):
    """A run whose dev NLL goes up and down (Adam, lr 0.2), with patience 2:
    ``(result, parameters)``."""
    model, tr, dev, cfg = tiny_setup(
        optimizer="adam", lr=0.2, max_updates=40, eval_every=4, checkpoint_every=None, patience=2
    )
    result = train(model, tr, dev, cfg.override(**overrides), work, progress=False)
    return result, params_of(model)


def evals_of(result) -> list[tuple]:
    return [
        (e["update"], e["dev_nll_sentence"], e["dev_nll_token"], e["scheduled"])
        for e in result.evals
    ]


def assert_same_run(a, params_a, b, params_b) -> None:
    assert evals_of(a) == evals_of(b)
    assert (a.updates, a.stopped, a.best["update"]) == (b.updates, b.stopped, b.best["update"])
    assert [r["train_nll_sentence"] for r in a.log] == [r["train_nll_sentence"] for r in b.log]
    assert all(torch.equal(params_a[k], params_b[k]) for k in params_b)


@pytest.mark.slow  # trains three runs: about 2 to 3 s each
@pytest.mark.parametrize("batching", ["pools", "random"])
def test_resumed_with_more_updates_equals_the_uninterrupted_run(tmp_path, batching):
    straight, p_straight = noisy_run(tmp_path / "straight", batching=batching)
    assert (
        straight.stopped == "early_stopping" and straight.updates <= 40
    )  # patience decides the end (here at the 40th update)
    first, _ = noisy_run(tmp_path / "resumed", batching=batching, max_updates=7)
    # the first run ends off the eval_every schedule and evaluates there once more...
    assert [(e["update"], e["scheduled"]) for e in first.evals] == [(4, True), (7, False)]
    resumed, p_resumed = noisy_run(tmp_path / "resumed", batching=batching)
    # ...which neither stays in the resumed history nor counts toward patience or the best state
    assert resumed.resumed_from == 7
    assert_same_run(resumed, p_resumed, straight, p_straight)


@pytest.mark.parametrize(
    "first,then",
    [
        ({"max_epochs": 0.5}, {"max_epochs": 3.0}),
        ({"patience": 1}, {}),  # early-stopped, then resumed with a larger patience
        ({"checkpoint_every": 3, "max_updates": 10}, {"checkpoint_every": 5}),
        (
            {"max_updates": 12},
            {"patience": None, "max_updates": 20},
        ),  # a limit on the eval_every schedule
    ],
)
def test_resumed_after_a_changed_limit_or_checkpoint_interval_equals_the_uninterrupted_run(
    tmp_path, first, then
):
    straight, p_straight = noisy_run(tmp_path / "straight", **then)
    noisy_run(tmp_path / "resumed", **{**then, **first})
    resumed, p_resumed = noisy_run(tmp_path / "resumed", **then)
    assert resumed.resumed_from is not None and resumed.updates > resumed.resumed_from
    assert_same_run(resumed, p_resumed, straight, p_straight)


@pytest.mark.parametrize("change", [{"eval_batch_size": 3}, {"fast": False}, {"device": "cpu"}])
@pytest.mark.slow  # trains: about 6 s each
def test_resumed_with_another_eval_batch_fast_path_or_device_ends_where_the_uninterrupted_run_ends(
    tmp_path, change
):
    """The changes allowed on resume that alter the arithmetic: the same evaluations, stop and
    best update, the numbers equal up to rounding (the docstring's promise)."""
    straight, p_straight = noisy_run(tmp_path / "straight")
    noisy_run(tmp_path / "resumed", max_updates=10)
    resumed, p_resumed = noisy_run(tmp_path / "resumed", **change)
    assert resumed.resumed_from == 10
    assert (resumed.updates, resumed.stopped, resumed.best["update"]) == (
        straight.updates,
        straight.stopped,
        straight.best["update"],
    )
    assert [(e["update"], e["scheduled"]) for e in resumed.evals] == [
        (e["update"], e["scheduled"]) for e in straight.evals
    ]
    # the numbers: rounding differences grow without bound along the unstable run above (Adam at
    # lr 0.2; on one machine 8.8% at its last evaluation with the plain modules, 0.2% on another),
    # so they are compared on a stable run (lr 0.01), 30 updates after the resume
    stable = {"lr": 0.01, "patience": None, "max_updates": 40}
    straight, p_straight = noisy_run(tmp_path / "stable-straight", **stable)
    noisy_run(tmp_path / "stable-resumed", **{**stable, "max_updates": 10})
    resumed, p_resumed = noisy_run(tmp_path / "stable-resumed", **stable, **change)
    assert resumed.resumed_from == 10 and resumed.updates == straight.updates == 40
    np.testing.assert_allclose(
        [e["dev_nll_sentence"] for e in resumed.evals],
        [e["dev_nll_sentence"] for e in straight.evals],
        rtol=1e-4,
    )
    for k in p_straight:
        torch.testing.assert_close(p_resumed[k], p_straight[k], rtol=1e-3, atol=1e-4)


def test_a_limit_the_checkpoint_is_past_returns_at_once_and_another_eval_schedule_is_refused(
    tmp_path,
):
    done, p_done = noisy_run(tmp_path / "run", patience=None, max_updates=20)
    with pytest.raises(ValueError, match="eval_every=4"):
        noisy_run(tmp_path / "run", patience=None, max_updates=40, eval_every=5)
    for change in ({"max_updates": 12}, {"max_epochs": 0.5}, {}):
        again, p_again = noisy_run(
            tmp_path / "run", **{"patience": None, "max_updates": 20, **change}
        )
        assert again.resumed_from == again.updates == 20  # nothing trained, nothing undone
        assert evals_of(again) == evals_of(done) and again.best == done.best
        assert all(torch.equal(p_again[k], p_done[k]) for k in p_done)


CHILD = """
import os, signal, sys, torch
torch.set_num_threads(1)
from test_train import tiny_setup
import rnnlib.train
model, tr, dev, cfg = tiny_setup(dropout=0.3)
batch_nll = rnnlib.train.batch_nll
updates = 0
def killed_in_update_11(net, *args, **kwargs):
    # the process kills itself inside update 11: after the checkpoint of update 8, before that of 16
    global updates
    updates += net.training
    if net.training and updates == 11:
        os.kill(os.getpid(), signal.SIGKILL)
    return batch_nll(net, *args, **kwargs)
rnnlib.train.batch_nll = killed_in_update_11
rnnlib.train.train(model, tr, dev, cfg, sys.argv[1], progress=False)
"""


@pytest.mark.slow  # trains in a process it kills: about 9 s
def test_killed_run_with_dropout_resumes_bitwise_equal_to_an_uninterrupted_run(
    tmp_path, one_thread, monkeypatch
):
    work = tmp_path / "killed"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(work)],
        env=env,
        cwd=REPO,
        capture_output=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert load_checkpoint(work / "checkpoint.pt")["update"] == 8  # killed between checkpoints
    shutil.copytree(work, tmp_path / "no_rng")

    model, tr, dev, cfg = tiny_setup(dropout=0.3)
    resumed = train(model, tr, dev, cfg, work, progress=False)
    assert resumed.resumed_from == 8 and resumed.updates == 24
    resumed_params = params_of(model)

    model, tr, dev, cfg = tiny_setup(dropout=0.3)
    straight = train(model, tr, dev, cfg, tmp_path / "straight", progress=False)
    straight_params = params_of(model)
    assert all(torch.equal(resumed_params[k], v) for k, v in straight_params.items())
    assert [r["train_nll_sentence"] for r in resumed.log] == [
        r["train_nll_sentence"] for r in straight.log
    ]
    assert evals_of(resumed) == evals_of(straight)

    # the dropout masks depend on the restored random-number state: without it, the run differs
    monkeypatch.setattr("rnnlib.train.set_rng_state", lambda state: None)
    model, tr, dev, cfg = tiny_setup(dropout=0.3)
    train(model, tr, dev, cfg, tmp_path / "no_rng", progress=False)
    assert not all(torch.equal(v, straight_params[k]) for k, v in params_of(model).items())


def test_run_file_with_an_unknown_key_is_refused_naming_it(tmp_path, capsys):
    from rnnlib.train import main as train_main

    run = tmp_path / "run.yml"
    run.write_text(
        "data: .\nwork_dir: w\nmodel: {preset: smoke-rnnsearch}\ntrian: {max_updates: 1}\n"
    )
    assert train_main(["--config", str(run)]) == 2
    assert "'trian'" in capsys.readouterr().err
    run.write_text(
        "data: .\nwork_dir: w\nmodel: {preset: smoke-rnnsearch}\ntrain: {max_update: 1}\n"
    )
    reverse_pairs(10).src.save(tmp_path, "train.src")
    reverse_pairs(10).tgt.save(tmp_path, "train.tgt")
    assert train_main(["--config", str(run)]) == 2
    assert "'max_update'" in capsys.readouterr().err


def test_run_file_train_section_may_start_from_a_named_preset():
    from rnnlib.train import run_train_config

    cfg = run_train_config({"train": {"preset": "paper-a", "max_updates": 3, "batch_size": 32}})
    assert cfg == train_preset("paper-a", max_updates=3, batch_size=32) and cfg.batching == "random"
    assert run_train_config({"train": {"max_updates": 3}}) == TrainConfig(max_updates=3)
    with pytest.raises(ValueError, match="'paper-z'"):
        run_train_config({"train": {"preset": "paper-z", "max_updates": 3}})


# -- the learning-rate schedule --------------------------------------------------------------------
def _scripted_dev(monkeypatch, nlls):
    """Make every evaluation return the next dev NLL of ``nlls`` (per sentence and per token)."""
    import rnnlib.train as train_module

    seq = iter(nlls)

    def fake(*args, **kwargs):
        x = next(seq)
        return {"nll_sentence": x, "nll_token": x / 4}

    monkeypatch.setattr(train_module, "evaluate_nll", fake)


NLLS = [5.0, 6.0, 6.0, 4.0, 7.0, 7.0, 7.0, 7.0]
# the rate each evaluation reports (the one its updates used): halved after every second
# evaluation in a row without a lower dev NLL, the count starting again at a new best
LRS = [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025]


def test_the_rate_is_multiplied_after_lr_patience_evaluations_without_improvement(
    tmp_path, monkeypatch
):
    _scripted_dev(monkeypatch, NLLS)
    model, tr, dev, cfg = tiny_setup(
        optimizer="sgd", lr=0.1, max_updates=8, eval_every=1, lr_decay=0.5, lr_patience=2
    )
    res = train(model, tr, dev, cfg, tmp_path, progress=False)
    assert [e["lr"] for e in res.evals] == pytest.approx(LRS)
    assert res.best["update"] == 4
    # the rate is part of the optimiser's state: a resumed run goes on from the decayed rate
    _scripted_dev(monkeypatch, NLLS)
    model, tr, dev, cfg = tiny_setup(
        optimizer="sgd", lr=0.1, max_updates=5, eval_every=1, lr_decay=0.5, lr_patience=2
    )
    train(model, tr, dev, cfg, tmp_path / "resumed", progress=False)
    _scripted_dev(monkeypatch, NLLS[5:])
    resumed = train(model, tr, dev, cfg.override(max_updates=8), tmp_path / "resumed", False)
    assert resumed.resumed_from == 5
    assert [e["lr"] for e in resumed.evals] == pytest.approx(LRS)


def _scheduled_rates(monkeypatch, folder, **schedule) -> list[float]:
    """The rate each evaluation reports in an 8-update run on the scripted dev NLLs ``NLLS``,
    evaluated at every update and halved by the schedule ``schedule``."""
    _scripted_dev(monkeypatch, NLLS)
    model, tr, dev, cfg = tiny_setup(
        optimizer="sgd", lr=0.1, max_updates=8, eval_every=1, lr_decay=0.5, **schedule
    )
    return [e["lr"] for e in train(model, tr, dev, cfg, folder, progress=False).evals]


def test_no_cut_before_lr_decay_start_and_stalls_cut_as_before_from_it_on(tmp_path, monkeypatch):
    # NLLS stalls at evaluations 2, 3 and 5-8; with patience 1 and no start every stall cuts
    every = _scheduled_rates(monkeypatch, tmp_path / "a", lr_patience=1)
    assert every == pytest.approx([0.1, 0.1, 0.05, 0.025, 0.025, 0.0125, 0.00625, 0.003125])
    # from update 5 on: the stalls at updates 2 and 3 cut nothing, those at 5, 6, 7 do
    later = _scheduled_rates(monkeypatch, tmp_path / "b", lr_patience=1, lr_decay_start=5)
    assert later == pytest.approx([0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.025, 0.0125])
    # patience 2 from update 3 on: the stall at update 2 does not count, so the streak 2-3 cuts
    # nothing (it would without a start); the streak 5-8 cuts after 6 and after 8
    two = _scheduled_rates(monkeypatch, tmp_path / "c", lr_patience=2, lr_decay_start=3)
    assert two == pytest.approx([0.1] * 6 + [0.05, 0.05])


def test_lr_min_stops_the_run_once_the_schedule_has_cut_the_rate_below_it(tmp_path, monkeypatch):
    _scripted_dev(monkeypatch, NLLS)
    model, tr, dev, cfg = tiny_setup(
        optimizer="sgd",
        lr=0.1,
        max_updates=8,
        eval_every=1,
        lr_decay=0.5,
        lr_patience=2,
        lr_min=0.04,
    )
    res = train(model, tr, dev, cfg, tmp_path, progress=False)
    # the second cut (after update 6) takes the rate to 0.025 < 0.04: the run ends there
    assert res.stopped == "lr_min" and res.updates == 6
    assert [e["lr"] for e in res.evals] == pytest.approx(LRS[:6])
    assert res.best["update"] == 4


def test_a_constant_rate_keeps_the_keys_of_runs_made_before_the_schedule():
    from dataclasses import asdict

    cfg = TrainConfig(max_updates=10)
    d = cfg.to_dict()
    assert "lr_decay" not in d and "lr_patience" not in d
    assert d == {k: v for k, v in asdict(cfg).items() if k not in LATER_FIELDS}
    # lr_min and lr_decay_start cannot act on a constant rate, so they stay out of its key
    assert cfg.override(lr_min=1e-4, lr_decay_start=5).to_dict() == d
    scheduled = cfg.override(lr_decay=0.5, eval_every=2).to_dict()
    assert scheduled["lr_decay"] == 0.5 and scheduled["lr_patience"] == 1
    assert "lr_min" not in scheduled and "lr_decay_start" not in scheduled
    assert (
        cfg.override(lr_decay=0.5, eval_every=2, lr_decay_start=4).to_dict()["lr_decay_start"] == 4
    )
    with pytest.raises(ValueError, match="lr_decay_start must be a positive integer"):
        TrainConfig(max_updates=10, eval_every=1, lr_decay=0.5, lr_decay_start=0)
    assert cfg.override(lr_decay=0.5, eval_every=2, lr_min=1e-4).to_dict()["lr_min"] == 1e-4
    with pytest.raises(ValueError, match="lr_min must be positive"):
        TrainConfig(max_updates=10, lr_min=0.0)
    with pytest.raises(ValueError, match="lr_decay must be in"):
        TrainConfig(max_updates=10, eval_every=1, lr_decay=1.5)
    with pytest.raises(ValueError, match="give eval_every"):
        TrainConfig(max_updates=10, lr_decay=0.5)


# -- the cool-down -------------------------------------------------------------------------------


def test_the_cooldown_share_falls_linearly_over_the_last_updates_of_the_budget():
    from rnnlib.train import cooldown_factor

    cfg = TrainConfig(max_updates=200, lr_cooldown=4, lr_cooldown_end=10)
    # chunks of the run (max_updates 200 here) do not move it: only lr_cooldown_end counts
    assert [cooldown_factor(cfg, u) for u in range(5, 12)] == pytest.approx(
        [1.0, 1.0, 0.8, 0.6, 0.4, 0.2, 1.0]
    )
    assert cooldown_factor(TrainConfig(max_updates=10), 10) == 1.0
    assert "lr_cooldown" not in TrainConfig(max_updates=10).to_dict()
    assert "lr_cooldown_end" not in TrainConfig(max_updates=10).to_dict()
    assert cfg.to_dict()["lr_cooldown"] == 4 and cfg.to_dict()["lr_cooldown_end"] == 10
    with pytest.raises(ValueError, match="lr_cooldown and lr_cooldown_end go together"):
        TrainConfig(max_updates=10, lr_cooldown=4)
    with pytest.raises(ValueError, match="lr_cooldown must be a positive integer"):
        TrainConfig(max_updates=10, lr_cooldown=0, lr_cooldown_end=10)


def test_a_cooldown_changes_only_its_updates_keeps_the_scheduled_rate_and_resumes_bitwise(
    tmp_path, monkeypatch
):
    stepped = []  # the rate each optimiser step used
    sgd_step = torch.optim.SGD.step

    def step(self, *args, **kw):
        stepped.append(self.param_groups[0]["lr"])
        return sgd_step(self, *args, **kw)

    monkeypatch.setattr(torch.optim.SGD, "step", step)

    def run(work, **kw):
        model, tr, dev, cfg = tiny_setup(
            optimizer="sgd", lr=0.5, eval_every=2, checkpoint_every=None, **kw
        )
        return train(model, tr, dev, cfg, work, progress=False), params_of(model)

    plain, p_plain = run(tmp_path / "plain", max_updates=8)
    stepped.clear()
    cool, p_cool = run(tmp_path / "cool", max_updates=8, lr_cooldown=4, lr_cooldown_end=8)
    assert stepped == pytest.approx([0.5] * 4 + [0.4, 0.3, 0.2, 0.1])
    # updates 1-4 at the full rate: the same losses; 5-8 at 4/5, 3/5, 2/5, 1/5 of it
    # (update 5's loss is computed before its step, so it is still the same)
    assert [r["train_nll_sentence"] for r in cool.log[:5]] == [
        r["train_nll_sentence"] for r in plain.log[:5]
    ]
    assert cool.log[5]["train_nll_sentence"] != plain.log[5]["train_nll_sentence"]
    # the evaluations report the scheduled rate, which the cool-down leaves alone
    assert [e["lr"] for e in cool.evals] == pytest.approx([0.5] * len(cool.evals))
    # trained in chunks (max_updates 3, then 8), as the book does, it ends where one run ends
    run(tmp_path / "chunks", max_updates=3, lr_cooldown=4, lr_cooldown_end=8)
    chunked, p_chunked = run(tmp_path / "chunks", max_updates=8, lr_cooldown=4, lr_cooldown_end=8)
    assert chunked.resumed_from == 3
    assert_same_run(chunked, p_chunked, cool, p_cool)
    assert any(not torch.equal(p_cool[k], p_plain[k]) for k in p_plain)
