"""Greedy, beam search, sampling and scoring, all through the model's one decoder step."""

import itertools

import numpy as np
import pytest
import torch

from rnnlib import search
from rnnlib.batch import Batch, pad, pad_sources
from rnnlib.presets import build_model, preset
from rnnlib.specials import BOS, EOS, UNK

WORDS = range(4, 14)  # ids 4..13 are "words"


def _reverse_pairs(gen: torch.Generator, n: int):
    out = []
    for _ in range(n):
        length = int(torch.randint(3, 8, (1,), generator=gen))
        s = torch.randint(4, 14, (length,), generator=gen).tolist()
        out.append((s, s[::-1]))
    return out


@pytest.fixture(scope="module")
def reverser():
    """A small RNNsearch trained for a few seconds to reverse sequences (a quick proof that
    training, masking and attention work: its attention must become anti-diagonal)."""
    torch.manual_seed(0)
    model = build_model(
        preset(
            "smoke-rnnsearch",
            src_vocab=14,
            tgt_vocab=14,
            hidden=32,
            emb=16,
            align=32,
            maxout=16,
            init="default",
        )
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: threads only add overhead on a shared machine
    try:
        _train(model, opt, gen)
    finally:
        torch.set_num_threads(threads)
    return model.eval()


def _train(model, opt, gen):
    with torch.enable_grad():
        for _ in range(170):
            pairs = _reverse_pairs(gen, 32)
            src, mask = pad_sources([p[0] for p in pairs])
            tgt_in, _ = pad([p[1] for p in pairs], prefix=BOS)
            tgt_out, tgt_mask = pad([p[1] for p in pairs], suffix=EOS)
            logits = model(src, mask, tgt_in)
            tok = torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), tgt_out.flatten(), reduction="none"
            )
            loss = (tok * tgt_mask.flatten()).sum() / tgt_mask.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()


@pytest.fixture(scope="module")
def encdec():
    torch.manual_seed(7)
    return build_model(preset("smoke-rnnencdec", src_vocab=14, tgt_vocab=14, init="default")).eval()


TEST = _reverse_pairs(torch.Generator().manual_seed(99), 40)
# the trained reverser (about 10 s of training) puts its tests in the slow layer
WHICH = [pytest.param("reverser", marks=pytest.mark.slow), "encdec"]


@pytest.mark.slow  # trains the reverser: about 10 s
def test_trained_reverser_translates_and_attends_anti_diagonally(reverser):
    src, mask = pad_sources([p[0] for p in TEST])
    hyps = search.greedy(reverser, src, mask)
    accuracy = np.mean([h.tokens == p[1] for h, p in zip(hyps, TEST)])
    assert accuracy >= 0.8
    on_diagonal = []
    for h, (s, y) in zip(hyps, TEST):
        if h.tokens == y:
            n = len(s)
            assert h.attention.shape == (n + 1, n + 1)  # the last column: the source's EOS
            # output word i copies source word n-1-i: its attention peaks there
            on_diagonal.extend(h.attention[:n].argmax(1) == n - 1 - np.arange(n))
    assert np.mean(on_diagonal) >= 0.8, np.mean(on_diagonal)


@pytest.mark.parametrize("which", WHICH)
def test_beam_size_one_equals_greedy(which, request):
    model = request.getfixturevalue(which)
    src, mask = pad_sources([p[0] for p in TEST[:12]])
    greedy = search.greedy(model, src, mask)
    beam = search.beam_search(model, src, mask, beam_size=1)
    for g, (b,) in zip(greedy, beam):
        assert g.tokens == b.tokens
        assert g.score == pytest.approx(b.score, abs=1e-9)
        if g.attention is not None:
            np.testing.assert_array_equal(g.attention, b.attention)


@pytest.mark.parametrize("which", WHICH)
def test_sentence_alone_equals_sentence_in_padded_batch(which, request):
    model = request.getfixturevalue(which)
    sources = [p[0] for p in TEST[:6]]
    src, mask = pad_sources(sources)
    in_batch = search.beam_search(model, src, mask, beam_size=3, n_best=3)
    greedy_batch = search.greedy(model, src, mask)
    for s, nbest, g in zip(sources, in_batch, greedy_batch):
        s1, m1 = pad_sources([s])
        alone = search.beam_search(model, s1, m1, beam_size=3, n_best=3)[0]
        assert [h.tokens for h in alone] == [h.tokens for h in nbest]
        for a, b in zip(alone, nbest):
            assert a.score == pytest.approx(b.score, abs=1e-5)
            if a.attention is not None:
                np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)
        g1 = search.greedy(model, s1, m1)[0]
        assert g1.tokens == g.tokens and g1.score == pytest.approx(g.score, abs=1e-5)


@pytest.mark.slow  # trains the reverser: about 10 s
def test_hypothesis_attention_covers_only_real_source_words(reverser):
    sources = [[4, 5, 6, 7, 8, 9, 10], [11, 12, 13]]
    src, mask = pad_sources(sources)
    assert src.shape == (2, 8) and src[1].tolist() == [11, 12, 13, EOS, 0, 0, 0, 0]
    nbest = search.beam_search(reverser, src, mask, beam_size=4, n_best=2)
    for s, hyps in zip(sources, nbest):
        for h in hyps:
            assert h.attention.shape == (
                len(h.tokens) + 1,
                len(s) + 1,
            )  # words and the source's EOS
            np.testing.assert_allclose(
                h.attention.sum(1), 1.0, atol=1e-5
            )  # no mass left for padding


def test_golden_nbest_from_seeded_tiny_model():
    torch.manual_seed(1234)
    model = build_model(
        preset("smoke-rnnsearch", init="default", src_vocab=12, tgt_vocab=12)
    ).eval()
    src, mask = pad_sources([[5, 6, 7, 8], [9, 10]])
    got = search.beam_search(model, src, mask, beam_size=4, n_best=3, max_len=6)
    # (values for the named GRU matrices of rnnlib.gru, whose seeded default draws differ from
    # the stacked ones before; the same weights give the same outputs as before to 1e-15)
    expected = [
        [
            ([9, 5, 9, 5, 9, 5], -12.21792),
            ([9, 5, 9, 5, 5, 5], -12.85606),
            ([9, 5, 9, 5, 5, 9], -12.90068),
        ],
        [
            ([9, 5, 9, 5, 9, 5], -12.35719),
            ([9, 9, 5, 9, 5, 9], -12.93416),
            ([9, 5, 9, 9, 5, 9], -12.94181),
        ],
    ]
    for hyps, exp in zip(got, expected):
        assert [h.tokens for h in hyps] == [t for t, _ in exp]
        np.testing.assert_allclose([h.score for h in hyps], [s for _, s in exp], atol=1e-4)
    # the last column is the source's EOS
    np.testing.assert_allclose(
        got[0][0].attention[0], [0.1971, 0.2206, 0.1992, 0.1906, 0.1926], atol=1e-4
    )
    np.testing.assert_allclose(got[1][0].attention[0], [0.3291, 0.3318, 0.3391], atol=1e-4)


@pytest.mark.parametrize("which", WHICH)
def test_score_equals_sum_of_step_log_probabilities(which, request):
    model = request.getfixturevalue(which)
    sources, targets = [p[0] for p in TEST[:5]], [p[1] for p in TEST[:5]]
    targets[1] = [4, UNK, 9]
    src, mask = pad_sources(sources)
    got = search.score(model, src, mask, targets)
    with torch.no_grad():
        for b, (s, y) in enumerate(zip(sources, targets)):
            s1, m1 = pad_sources([s])
            enc = model.encode(s1, m1)
            state, prev, total = model.init_state(enc), torch.tensor([BOS]), 0.0
            for word in y + [EOS]:
                logits, state, _ = model.step(prev, state, enc)
                total += float(torch.log_softmax(logits, -1)[0, word])
                prev = torch.tensor([word])
            assert float(got[b]) == pytest.approx(total, abs=1e-4)
    # a padded tensor of targets and a Batch give the same scores
    tgt, _ = pad(targets)
    torch.testing.assert_close(search.score(model, src, mask, tgt), got)
    tgt_in, _ = pad(targets, prefix=BOS)
    tgt_out, tgt_mask = pad(targets, suffix=EOS)
    torch.testing.assert_close(
        search.score(model, Batch(src, mask, tgt_in, tgt_out, tgt_mask)), got
    )


@pytest.mark.slow  # trains the reverser: about 10 s
def test_beam_scores_are_model_log_probabilities(reverser):
    src, mask = pad_sources([p[0] for p in TEST[:4]])
    nbest = search.beam_search(reverser, src, mask, beam_size=3, n_best=3)
    for b, hyps in enumerate(nbest):
        s = search.score(reverser, src[b : b + 1], mask[b : b + 1], [h.tokens for h in hyps[:1]])
        assert float(s[0]) == pytest.approx(hyps[0].score, abs=1e-4)
        assert [h.score for h in hyps] == sorted([h.score for h in hyps], reverse=True)


def test_large_beam_finds_the_exact_nbest(encdec):
    """With a beam wider than the whole search space, beam search is exhaustive search."""
    src, mask = pad_sources([[5, 6, 7]])
    max_len = 3
    allowed = [UNK] + list(range(4, 14))
    seqs = [
        list(t)
        for n in range(max_len + 1)
        for t in itertools.product(allowed, repeat=n)
        if EOS not in t
    ]
    scores = search.score(encdec, src.expand(len(seqs), -1), mask.expand(len(seqs), -1), seqs)
    best = torch.topk(scores, 5)
    got = search.beam_search(encdec, src, mask, beam_size=1400, n_best=5, max_len=max_len)[0]
    assert [h.tokens for h in got] == [seqs[i] for i in best.indices.tolist()]
    np.testing.assert_allclose([h.score for h in got], best.values.numpy(), atol=1e-5)


@pytest.mark.slow  # trains the reverser: about 10 s
def test_forbid_unk_never_emits_unk(reverser):
    src, mask = pad_sources([p[0] for p in TEST[:8]])
    with torch.no_grad():
        reverser.decoder.output.W_o.bias[UNK] += 20.0  # make [UNK] the favourite word
    try:
        plain = search.beam_search(reverser, src, mask, beam_size=3)
        assert any(UNK in h[0].tokens for h in plain)
        for fn in (
            lambda: [
                h[0] for h in search.beam_search(reverser, src, mask, beam_size=3, forbid_unk=True)
            ],
            lambda: search.greedy(reverser, src, mask, forbid_unk=True),
            lambda: [
                x
                for h in search.sample(
                    reverser,
                    src,
                    mask,
                    n=5,
                    forbid_unk=True,
                    generator=torch.Generator().manual_seed(0),
                )
                for x in h
            ],
        ):
            hyps = fn()
            assert hyps and all(UNK not in h.tokens for h in hyps)
    finally:
        with torch.no_grad():
            reverser.decoder.output.W_o.bias[UNK] -= 20.0


def test_max_len_bounds_every_hypothesis(encdec):
    src, mask = pad_sources([[5, 6, 7, 8], [9]])
    for hyps in search.beam_search(encdec, src, mask, beam_size=4, n_best=4, max_len=2):
        assert all(len(h.tokens) <= 2 for h in hyps)


def test_default_length_limit_is_three_times_the_source_with_its_end(encdec):
    """GroundHog's beam search runs 3 * len(source) steps, the source counted with its EOS: a
    hypothesis that never ends on its own has 3 (S + 1) - 1 words and a forced EOS."""
    src, mask = pad_sources([[5, 6, 7, 8], [9]])
    with torch.no_grad():
        encdec.decoder.output.W_o.bias[EOS] -= 50.0  # the model never chooses to stop
    try:
        lengths = [
            [len(h.tokens) for h in hyps]
            for hyps in search.beam_search(encdec, src, mask, beam_size=3, n_best=3)
        ]
        greedy = [len(h.tokens) for h in search.greedy(encdec, src, mask)]
    finally:
        with torch.no_grad():
            encdec.decoder.output.W_o.bias[EOS] += 50.0
    assert lengths == [[14] * 3, [5] * 3] and greedy == [14, 5]


def test_sources_without_eos_are_refused(encdec):
    src, mask = pad([[5, 6, 7], [8]])  # words only: the model reads sources ending in EOS
    for fn in (search.greedy, search.beam_search):
        with pytest.raises(ValueError, match=r"must end with \[EOS\]"):
            fn(encdec, src, mask)
    with pytest.raises(ValueError, match="already contains"):
        pad_sources([[5, EOS]])
    with pytest.raises(ValueError, match="sentence 1 of the batch is empty"):
        pad_sources([[5], []])


def test_length_norm_ranks_by_score_per_word(encdec):
    src, mask = pad_sources([[5, 6, 7]])
    hyps = search.beam_search(encdec, src, mask, beam_size=6, n_best=6, length_norm=True)[0]
    per_word = [h.score / (len(h.tokens) + 1) for h in hyps]
    assert per_word == sorted(per_word, reverse=True)


@pytest.mark.slow  # trains the reverser: about 10 s
def test_sampling_is_reproducible_and_scored(reverser):
    src, mask = pad_sources([p[0] for p in TEST[:2]])
    a = search.sample(reverser, src, mask, n=50, generator=torch.Generator().manual_seed(5))
    b = search.sample(reverser, src, mask, n=50, generator=torch.Generator().manual_seed(5))
    assert len(a) == 2 and all(len(x) == 50 for x in a)
    assert [[h.tokens for h in x] for x in a] == [[h.tokens for h in x] for x in b]
    # the trained reverser mostly samples the reversal
    assert sum(h.tokens == TEST[0][1] for h in a[0]) >= 25
    s = search.score(
        reverser, src[:1].expand(5, -1), mask[:1].expand(5, -1), [h.tokens for h in a[0][:5]]
    )
    np.testing.assert_allclose(s.numpy(), [h.score for h in a[0][:5]], atol=1e-4)


@pytest.mark.slow  # trains the reverser: about 10 s
def test_search_restores_training_mode(reverser):
    reverser.train()
    search.greedy(reverser, *pad_sources([[4, 5]]))
    assert reverser.training
    reverser.eval()


def test_min_len_forbids_the_end_before_it_as_the_papers_code_did(encdec):
    """GroundHog's sampler forbids EOS for the first len(source) // 2 steps, the source counted
    with its EOS: a model that wants to stop at once then stops exactly there."""
    src, mask = pad_sources([[5, 6, 7, 8, 9, 10, 11], [9]])  # L = 8 and 2
    with torch.no_grad():
        encdec.decoder.output.W_o.bias[EOS] += 50.0  # the model always chooses to stop
    try:
        plain = [len(h[0].tokens) for h in search.beam_search(encdec, src, mask, beam_size=3)]
        gh = search.groundhog_min_len
        beam = [
            [len(h.tokens) for h in hyps]
            for hyps in search.beam_search(encdec, src, mask, beam_size=3, n_best=3, min_len=gh)
        ]
        greedy = [len(h.tokens) for h in search.greedy(encdec, src, mask, min_len=gh)]
        gen = torch.Generator().manual_seed(0)
        samples = search.sample(encdec, src, mask, n=4, min_len=gh, generator=gen)
        fixed = [len(h.tokens) for h in search.greedy(encdec, src, mask, min_len=3)]
        # max_len wins where the two conflict
        capped = [len(h.tokens) for h in search.greedy(encdec, src, mask, min_len=6, max_len=2)]
    finally:
        with torch.no_grad():
            encdec.decoder.output.W_o.bias[EOS] -= 50.0
    assert plain == [0, 0]
    assert beam == [[4] * 3, [1] * 3] and greedy == [4, 1]
    assert [[len(h.tokens) for h in s] for s in samples] == [[4] * 4, [1] * 4]
    assert fixed == [3, 3] and capped == [2, 2]


@pytest.mark.slow  # trains the reverser: about 10 s
def test_min_len_changes_nothing_where_the_model_ends_later_anyway(reverser):
    src, mask = pad_sources([p[0] for p in TEST[:8]])
    plain = search.beam_search(reverser, src, mask, beam_size=3, n_best=3)
    for min_len in (0, search.groundhog_min_len):
        got = search.beam_search(reverser, src, mask, beam_size=3, n_best=3, min_len=min_len)
        assert [[h.tokens for h in s] for s in got] == [[h.tokens for h in s] for s in plain]
    with pytest.raises(ValueError, match="min_len=-1"):
        search.greedy(reverser, src, mask, min_len=-1)
