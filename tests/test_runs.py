"""Test-set translation (rnnlib.translate) and training runs as cache artifacts
(rnnlib.experiments.training_runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from rnnlib.batch import source_batch
from rnnlib.cache import ArtifactCache
from rnnlib.experiments.training_runs import (
    decode_run,
    length_filter,
    load_model,
    run_logs,
    train_run,
)
from rnnlib.presets import build_model, preset
from rnnlib.ragged import ParallelArrays, Ragged
from rnnlib.search import beam_search
from rnnlib.specials import UNK
from rnnlib.train import TrainConfig, train
from rnnlib.translate import translate

VOCAB = 14


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices; the machine is shared
    yield
    torch.set_num_threads(threads)


def model_config(arch="rnnsearch"):
    return preset(f"smoke-{arch}", src_vocab=VOCAB, tgt_vocab=VOCAB)


def reverse_pairs(n, seed=0, lo=2, hi=9):
    rng = np.random.default_rng(seed)
    srcs = [rng.integers(4, VOCAB, size=rng.integers(lo, hi + 1)) for _ in range(n)]
    return ParallelArrays(Ragged.from_lists(srcs), Ragged.from_lists([s[::-1] for s in srcs]))


class PrefersUnk(nn.Module):
    """A model whose every step strongly prefers [UNK] (its decoder interface, logits shifted)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def encode(self, src, src_mask):
        return self.model.encode(src, src_mask)

    def init_state(self, enc):
        return self.model.init_state(enc)

    def step(self, prev, state, enc):
        logits, state, alpha = self.model.step(prev, state, enc)
        logits = logits.clone()
        logits[:, UNK] += 30.0
        return logits, state, alpha


def test_translate_keeps_the_input_order_and_equals_searching_each_sentence_alone():
    torch.manual_seed(3)
    model = build_model(model_config()).eval()
    sources = [s for s in reverse_pairs(9, seed=4).src]
    hyps = translate(model, sources, beam_size=3, batch_size=4, max_len=12)
    assert len(hyps) == len(sources)
    for src, hyp in zip(sources, hyps):
        b = source_batch([src])
        alone = beam_search(model, b.src, b.src_mask, beam_size=3, max_len=12)[0][0]
        assert hyp.tokens == alone.tokens
        assert hyp.score == pytest.approx(alone.score, abs=1e-4)
        assert hyp.attention is None
    with_att = translate(model, sources[:2], beam_size=3, max_len=12, attention=True)
    assert with_att[0].attention.shape[0] == len(with_att[0].tokens) + 1


def test_forbid_unk_removes_unk_from_a_model_that_prefers_it():
    torch.manual_seed(3)
    model = PrefersUnk(build_model(model_config())).eval()
    sources = [s for s in reverse_pairs(5, seed=5).src]
    free = translate(model, sources, beam_size=2, max_len=6)
    assert all(UNK in h.tokens for h in free), "the test model should generate [UNK] when allowed"
    banned = translate(model, sources, beam_size=2, max_len=6, forbid_unk=True)
    assert not any(UNK in h.tokens for h in banned)


def test_length_filter_keeps_pairs_with_both_sides_short_enough():
    pairs = ParallelArrays(
        Ragged.from_lists([[4] * 3, [4] * 5, [4] * 2]),
        Ragged.from_lists([[5] * 3, [5] * 2, [5] * 6]),
    )
    assert length_filter(pairs, 3).tolist() == [0]
    assert length_filter(pairs, 6).tolist() == [0, 1, 2]
    assert length_filter(pairs, None).tolist() == [0, 1, 2]


def _cfg(**kw):
    base = dict(
        optimizer="adam",
        lr=0.01,
        batch_size=8,
        pool=2,
        max_updates=12,
        eval_every=4,
        checkpoint_every=None,
        device="cpu",
        seed=5,
    )
    return TrainConfig(**{**base, **kw})


def _weights_sum(model):
    return float(sum(p.detach().double().sum() for p in model.parameters()))


@pytest.mark.slow  # trains two runs: about 3 s
def test_a_continued_run_ends_exactly_where_one_uninterrupted_run_ends(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    pairs, dev = reverse_pairs(60, seed=1), reverse_pairs(10, seed=2)
    mc = model_config()
    whole = train_run(
        cache, "t/run", {"name": "whole"}, mc, _cfg(), pairs, dev, dev_bleu=_weights_sum
    )
    first = train_run(
        cache,
        "t/run",
        {"name": "first"},
        mc,
        _cfg(max_updates=8),
        pairs,
        dev,
        dev_bleu=_weights_sum,
        keep_state=True,
    )
    later = train_run(
        cache,
        "t/run",
        {"name": "later"},
        mc,
        _cfg(max_updates=12, patience=50),
        pairs,
        dev,
        dev_bleu=_weights_sum,
        parent=first,
    )
    assert first.extra["updates"] == 8 and later.extra["updates"] == whole.extra["updates"] == 12
    assert later.config["parent"] == first.key
    a, b = load_model(whole, mc).state_dict(), load_model(later, mc).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    logs_whole, logs_later = run_logs(whole), run_logs(later)
    pd.testing.assert_frame_equal(
        logs_whole["train"].drop(columns="seconds"), logs_later["train"].drop(columns="seconds")
    )
    assert (
        logs_whole["bleu"]["update"].tolist() == logs_later["bleu"]["update"].tolist() == [4, 8, 12]
    )
    assert logs_whole["bleu"]["dev_bleu"].tolist() == logs_later["bleu"]["dev_bleu"].tolist()
    assert logs_whole["eval"]["update"].tolist() == [4, 8, 12]

    # chunking for the dev-BLEU curve does not change training: one plain train() call agrees
    torch.manual_seed(5)
    plain = build_model(mc)
    train(plain, pairs, dev, _cfg(), tmp_path / "plain", progress=False)
    c = plain.state_dict()
    assert all(torch.equal(a[k], c[k]) for k in a)


def test_a_continuation_needs_the_parents_state(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    pairs = reverse_pairs(30, seed=1)
    first = train_run(cache, "t/run", {}, model_config(), _cfg(max_updates=4), pairs, None)
    with pytest.raises(ValueError, match="keep_state=True"):
        train_run(
            cache, "t/run", {"x": 1}, model_config(), _cfg(max_updates=8), pairs, None, parent=first
        )


@pytest.mark.slow  # trains three runs: about 5 s
def test_a_branch_from_the_trunk_is_the_run_without_its_cooldown_then_a_longer_one(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    pairs, dev = reverse_pairs(60, seed=1), reverse_pairs(10, seed=2)
    mc = model_config()

    def run(name, **kw):
        extra = {k: kw.pop(k) for k in ("parent", "branch", "keep_state") if k in kw}
        cfg = _cfg(**kw)
        return train_run(
            cache, "t/run", {"name": name}, mc, cfg, pairs, dev, dev_bleu=_weights_sum, **extra
        )

    cooled = run("cooled", lr_cooldown=4, lr_cooldown_end=12, keep_state=True)
    # the state where the cool-down began is kept: update 8, on the evaluation grid
    assert cooled.extra["trunk_update"] == 8 and "trunk.pt" in cooled.meta["files"]
    plain = run("plain")  # the same run at the full rate to the end
    longer = run(
        "longer", max_updates=16, lr_cooldown=4, lr_cooldown_end=16, parent=cooled, branch="trunk"
    )
    assert longer.config["branch"] == "trunk" and longer.extra["branch"] == "trunk"
    logs = {n: run_logs(a) for n, a in (("cooled", cooled), ("plain", plain), ("longer", longer))}
    # up to update 12 the branch is the run without the cool-down: the free control
    ev_plain, ev_longer = logs["plain"]["eval"], logs["longer"]["eval"]
    assert ev_longer["update"].tolist() == [4, 8, 12, 16]
    assert ev_longer["dev_nll_sentence"][:3].tolist() == ev_plain["dev_nll_sentence"].tolist()
    assert logs["longer"]["bleu"]["update"].tolist() == [4, 8, 12, 16]
    assert (
        logs["longer"]["bleu"]["dev_bleu"][:2].tolist()
        == logs["cooled"]["bleu"]["dev_bleu"][:2].tolist()
    )
    # ... and the cool-down changed the parent's last updates
    assert (
        logs["cooled"]["eval"]["dev_nll_sentence"].tolist()[:2]
        == ev_plain["dev_nll_sentence"].tolist()[:2]
    )
    assert (
        logs["cooled"]["eval"]["dev_nll_sentence"].tolist()[2]
        != ev_plain["dev_nll_sentence"].tolist()[2]
    )
    # the branch ends where one uninterrupted run with its own budget and cool-down ends
    straight = run("straight", max_updates=16, lr_cooldown=4, lr_cooldown_end=16)
    a, b = load_model(straight, mc).state_dict(), load_model(longer, mc).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    # a branch needs the trunk; a run without a cool-down keeps none
    kept = run("kept", keep_state=True)
    assert "trunk.pt" not in kept.meta["files"] and "trunk_update" not in kept.extra
    with pytest.raises(ValueError, match="kept no trunk.pt"):
        run("nope", max_updates=16, parent=kept, branch="trunk")
    with pytest.raises(ValueError, match="branch must be"):
        run("bad", parent=cooled, branch="middle")
    # a continuation from the end keeps the key it had before branches existed
    end = run("end", max_updates=16, parent=cooled)
    assert "branch" not in end.config and "branch" not in end.extra


def test_a_trunk_off_the_evaluation_grid_is_kept_and_the_chunks_go_back_onto_the_grid(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    pairs, dev = reverse_pairs(60, seed=1), reverse_pairs(10, seed=2)
    mc = model_config()
    cfg = _cfg(lr_cooldown=3, lr_cooldown_end=12)  # begins after update 9; evaluations every 4
    cooled = train_run(
        cache, "t/run", {}, mc, cfg, pairs, dev, dev_bleu=_weights_sum, keep_state=True
    )
    assert cooled.extra["trunk_update"] == 9
    assert run_logs(cooled)["bleu"]["update"].tolist() == [4, 8, 9, 12]
    assert run_logs(cooled)["eval"]["update"].tolist() == [4, 8, 12]
    later = _cfg(max_updates=16, lr_cooldown=4, lr_cooldown_end=16)
    branch = train_run(
        cache, "t/run", {}, mc, later, pairs, dev, _weights_sum, parent=cooled, branch="trunk"
    )
    logs = run_logs(branch)
    assert logs["bleu"]["update"].tolist() == [4, 8, 9, 12, 16]
    assert logs["eval"]["update"].tolist() == [4, 8, 12, 16]


def test_decode_run_stores_tokens_and_text_in_order_and_counts_generated_unk(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    torch.manual_seed(3)
    model = PrefersUnk(build_model(model_config())).eval()
    sources = [s for s in reverse_pairs(6, seed=7).src]
    words = lambda ids: ["[UNK]" if i == UNK else f"w{i}" for i in ids]  # noqa: E731
    art = decode_run(
        cache, "t/dec", {"model": "m"}, model, sources, words, " ".join, beam_size=2, max_len=5
    )
    banned = decode_run(
        cache,
        "t/dec",
        {"model": "m"},
        model,
        sources,
        words,
        " ".join,
        beam_size=2,
        max_len=5,
        forbid_unk=True,
    )
    assert art.key != banned.key
    assert art.extra["unk_generated"] > 0 and banned.extra["unk_generated"] == 0
    text = art.file("text.txt").read_text().split("\n")[:-1]
    expected = [
        " ".join(words(h.tokens)) for h in translate(model, sources, beam_size=2, max_len=5)
    ]
    assert text == expected
    # the count is of the [UNK] the search generated: every one of them in the text
    assert art.extra["unk_generated"] == sum(line.split().count("[UNK]") for line in text) > 0
    assert "[UNK]" not in banned.file("tokens.txt").read_text()
