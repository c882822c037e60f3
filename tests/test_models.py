"""RNNsearch and the RNN Encoder--Decoder: step == forward, padding, attention masks, init, presets;
the tanh-unit ablation (ModelConfig.unit) and its cache-key compatibility."""

import dataclasses

import pytest
import torch

from rnnlib.batch import pad, pad_sources
from rnnlib.encoders import EncoderOut
from rnnlib.gru import GRUCell, TanhCell
from rnnlib.models import RNNEncDec, RNNSearch
from rnnlib.presets import PRESETS, ModelConfig, build_model, preset
from rnnlib.specials import BOS, EOS

VARIANTS = {
    "rnnsearch-prev": dict(name="smoke-rnnsearch"),
    "rnnsearch-current": dict(name="smoke-rnnsearch", deep_output_state="current", output_rank=5),
    "rnnsearch-reset-after": dict(name="smoke-rnnsearch", reset="after"),
    "rnnencdec": dict(name="smoke-rnnencdec"),
    "cho2014": dict(name="smoke-cho2014"),
    "rnnsearch-tanh": dict(name="smoke-rnnsearch", unit="tanh"),
    "rnnencdec-tanh": dict(name="smoke-rnnencdec", unit="tanh"),
}


def _model(variant: str, seed: int = 0, dropout: float = 0.0):
    kw = dict(VARIANTS[variant])
    torch.manual_seed(seed)
    # init="default" (uniform +-1/sqrt(n), N(0,1) embeddings) gives sharp, easily compared outputs
    return build_model(preset(kw.pop("name"), init="default", dropout=dropout, **kw)).eval()


SRC = [[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15, 16]]  # words; pad_sources appends EOS
TGT = [[20, 21, 22], [23], [24, 25, 26, 27, 28]]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_forward_equals_step_by_step(variant):
    model = _model(variant)
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    with torch.no_grad():
        logits, att = model(src, mask, tgt_in, return_attention=True)
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        for t in range(tgt_in.shape[1]):
            step_logits, state, alpha = model.step(tgt_in[:, t], state, enc)
            torch.testing.assert_close(logits[:, t], step_logits, atol=1e-5, rtol=0)
            if alpha is not None:
                torch.testing.assert_close(att[:, t], alpha, atol=1e-6, rtol=0)
    assert logits.shape == (3, tgt_in.shape[1], model.config.tgt_vocab)


@pytest.mark.parametrize(
    "variant",
    [
        "rnnsearch-prev",
        "rnnsearch-reset-after",
        "rnnencdec",
        "cho2014",
        "rnnsearch-tanh",
        "rnnencdec-tanh",
    ],
)
def test_sentence_alone_equals_sentence_in_padded_batch(variant):
    model = _model(variant)
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    with torch.no_grad():
        batch_logits = model(src, mask, tgt_in)
        batch_enc = model.encode(src, mask)
        for b, (s, y) in enumerate(zip(SRC, TGT)):
            s1, m1 = pad_sources([s])
            y1, _ = pad([y], prefix=BOS)
            alone = model(s1, m1, y1)
            torch.testing.assert_close(batch_logits[b, : len(y) + 1], alone[0], atol=1e-5, rtol=0)
            enc1 = model.encode(s1, m1)
            torch.testing.assert_close(batch_enc.init[b], enc1.init[0], atol=1e-6, rtol=0)
            torch.testing.assert_close(
                batch_enc.annotations[b, : len(s) + 1], enc1.annotations[0], atol=1e-6, rtol=0
            )


@pytest.mark.parametrize("variant", ["rnnsearch-prev", "rnnencdec"])
def test_padding_token_ids_cannot_leak(variant):
    """Whatever ids sit under the padding, the encoding and the outputs are the same."""
    model = _model(variant)
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    noisy = src.clone()
    noisy[~mask] = torch.randint(4, model.config.src_vocab, (int((~mask).sum()),))
    with torch.no_grad():
        torch.testing.assert_close(
            model(src, mask, tgt_in), model(noisy, mask, tgt_in), atol=0, rtol=0
        )


def test_backward_rnn_starts_on_the_source_end():
    model = _model("rnnsearch-prev")
    enc_mod = model.encoder
    src, mask = pad_sources(SRC)
    with torch.no_grad():
        ann, first_backward = enc_mod(src, mask)
        for b, s in enumerate(SRC):
            rev = torch.tensor([EOS] + s[::-1]).unsqueeze(0)
            states = enc_mod.bwd(enc_mod.embed(rev))[0]  # reads <end>, x_T .. x_1
            torch.testing.assert_close(first_backward[b], states[-1], atol=1e-6, rtol=0)
            torch.testing.assert_close(
                ann[b, : len(s) + 1, model.config.hidden :], states.flip(0), atol=1e-6, rtol=0
            )
            assert ann[b, len(s) + 1 :].abs().sum() == 0


def test_rnnencdec_context_is_tanh_V_of_the_state_after_the_source_end():
    model = _model("rnnencdec")
    src, mask = pad_sources(SRC)
    with torch.no_grad():
        states, c = model.encoder(src, mask)
        for b, s in enumerate(SRC):
            h_N = model.encoder.rnn(model.encoder.embed(torch.tensor([s + [EOS]])))[
                0, -1
            ]  # after <end>
            torch.testing.assert_close(c[b], torch.tanh(model.encoder.V(h_N)), atol=1e-6, rtol=0)


def test_padded_source_positions_get_exactly_zero_attention():
    model = _model("rnnsearch-prev")
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    with torch.no_grad():
        _, att = model(src, mask, tgt_in, return_attention=True)
    pad_att = att.masked_select(~mask.unsqueeze(1).expand_as(att))
    assert pad_att.numel() > 0 and bool((pad_att == 0).all())
    torch.testing.assert_close(att.sum(-1), torch.ones(att.shape[:2]), atol=1e-6, rtol=0)


def test_first_previous_word_has_zero_embedding():
    """e(y_0) = 0 (A App. A): the BOS row of E cannot change anything."""
    model = _model("rnnsearch-prev")
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    with torch.no_grad():
        before = model(src, mask, tgt_in)
        model.decoder.embed.weight[BOS].normal_(0, 5)
        torch.testing.assert_close(model(src, mask, tgt_in), before, atol=0, rtol=0)


@torch.no_grad()
def test_paper_initialisation():
    model = build_model(
        preset(
            "smoke-rnnsearch", hidden=64, align=64, emb=48, maxout=32, src_vocab=500, tgt_vocab=500
        ),
        generator=torch.Generator().manual_seed(0),
    )
    cells = [m for m in model.modules() if isinstance(m, GRUCell)]
    assert len(cells) == 3  # forward, backward, decoder
    for cell in cells:
        for U in cell.recurrent_blocks():
            torch.testing.assert_close(U @ U.T, torch.eye(64), atol=1e-5, rtol=0)
        W_in = torch.cat([cell.W_r.weight, cell.W_z.weight, cell.W.weight])
        assert 0.008 < float(W_in.std()) < 0.012
        assert all(float(m.bias.abs().sum()) == 0 for m in (cell.W_r, cell.W_z, cell.W))
    att = model.decoder.attention
    assert (
        0.0008 < float(att.W_a.weight.std()) < 0.0012
        and 0.0008 < float(att.U_a.weight.std()) < 0.0012
    )
    assert float(att.v_a.abs().sum()) == 0 and float(att.U_a.bias.abs().sum()) == 0
    assert 0.008 < float(model.decoder.output.W_o.weight.std()) < 0.012
    assert float(model.decoder.embed.weight[BOS].abs().sum()) == 0
    # zero v_a: the first attention weights are uniform over each sentence's real words
    src, mask = pad_sources(SRC)
    with torch.no_grad():
        enc = model.encode(src, mask)
        _, _, alpha = model.step(torch.full((3,), BOS), model.init_state(enc), enc)
    torch.testing.assert_close(alpha, mask.float() / mask.sum(1, keepdim=True), atol=1e-7, rtol=0)


def test_build_model_is_reproducible_with_a_generator():
    a = build_model(preset("smoke-rnnsearch"), generator=torch.Generator().manual_seed(3))
    b = build_model(preset("smoke-rnnsearch"), generator=torch.Generator().manual_seed(3))
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q), n


def test_encoder_out_reorders_along_batch():
    model = _model("rnnsearch-prev")
    src, mask = pad_sources(SRC)
    with torch.no_grad():
        enc = model.encode(src, mask)
    rep = enc.repeat_interleave(2)
    assert rep.batch_size == 6 and torch.equal(rep.keys[3], enc.keys[1])
    sel = enc.index_select(torch.tensor([2, 0]))
    assert torch.equal(sel.annotations[0], enc.annotations[2]) and torch.equal(
        sel.mask[1], enc.mask[0]
    )
    assert sel.context is None and isinstance(sel, EncoderOut)


def test_preset_rejects_unknown_field_and_name():
    with pytest.raises(TypeError, match=r"'hiden'.*valid fields: arch, src_vocab"):
        preset("cpu-rnnsearch", hiden=3)
    with pytest.raises(KeyError, match="valid presets: paper-rnnsearch"):
        preset("paper-transformer")
    with pytest.raises(ValueError, match="deep_output_state='next'"):
        preset("cpu-rnnsearch", deep_output_state="next")
    assert preset("cpu-rnnsearch", hidden=8).hidden == 8
    assert ModelConfig.from_dict(preset("cpu-rnnencdec").to_dict()) == preset("cpu-rnnencdec")


def test_paper_sizes():
    b = preset("paper-rnnsearch")
    assert (b.hidden, b.emb, b.maxout, b.align, b.src_vocab, b.tgt_vocab) == (
        1000,
        620,
        500,
        1000,
        30000,
        30000,
    )
    a = preset("paper-cho2014")
    assert (a.arch, a.hidden, a.emb, a.maxout, a.src_vocab, a.output_rank) == (
        "rnnencdec",
        1000,
        100,
        500,
        15000,
        100,
    )
    assert preset("paper-rnnencdec").arch == "rnnencdec"
    assert {"cpu-rnnsearch", "cpu-rnnencdec", "smoke-rnnsearch", "smoke-rnnencdec"} <= set(PRESETS)


@pytest.mark.slow  # a paper-size network: about 3 s each, more for rnnsearch
@pytest.mark.parametrize("name", ["paper-rnnsearch", "paper-rnnencdec", "paper-cho2014"])
def test_paper_preset_trains_one_step(name):
    """Instantiate the full paper-size model and take one Adadelta step (rho 0.95, eps 1e-6,
    clip 1)."""
    torch.manual_seed(0)
    model = build_model(preset(name))
    assert isinstance(model, RNNSearch if preset(name).arch == "rnnsearch" else RNNEncDec)
    src, mask = pad_sources([[5, 6, 7, 8, 9], [9, 10, 11]])
    tgt_in, _ = pad([[11, 12, 13], [14]], prefix=BOS)
    tgt_out, tgt_mask = pad([[11, 12, 13], [14]], suffix=3)
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-6)

    def nll():
        logits = model(src, mask, tgt_in)
        tok = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), tgt_out.flatten(), reduction="none"
        )
        return (tok * tgt_mask.flatten()).sum() / 2

    loss = nll()
    assert (
        abs(float(loss.detach()) - 3 * torch.log(torch.tensor(float(model.config.tgt_vocab)))) < 0.5
    )  # ~uniform at init
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    with torch.no_grad():
        assert float(nll()) < float(loss)


# -- the tanh unit (A §2.3's gating ablation, ModelConfig.unit) ------------------------------------

# ModelConfig's fields before ``unit`` was added: the cache keys of every run trained then.
FIELDS_BEFORE_UNIT = [
    "arch",
    "src_vocab",
    "tgt_vocab",
    "emb",
    "hidden",
    "maxout",
    "align",
    "reset",
    "decoder_reset",
    "reset_context",
    "deep_output_state",
    "output_rank",
    "dropout",
    "init",
]


@pytest.mark.parametrize("name", ["smoke-rnnsearch", "smoke-rnnencdec", "smoke-cho2014"])
def test_default_unit_is_the_gru_everywhere(name):
    model = build_model(preset(name))
    assert preset(name).unit == "gru"
    cells = [m for m in model.modules() if isinstance(m, (GRUCell, TanhCell))]
    assert cells and all(isinstance(m, GRUCell) for m in cells)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_tanh_model_has_tanh_units_in_every_layer_and_trains_through_them(arch):
    model = build_model(
        preset(f"smoke-{arch}", unit="tanh"), generator=torch.Generator().manual_seed(0)
    )
    cells = [m for m in model.modules() if isinstance(m, (GRUCell, TanhCell))]
    assert len(cells) == (3 if arch == "rnnsearch" else 2) and all(
        isinstance(m, TanhCell) for m in cells
    )
    assert not [n for n, _ in model.named_parameters() if "_r." in n or "_z." in n]  # no gates
    with torch.no_grad():
        for cell in cells:  # the papers' init: U orthogonal, b = 0
            torch.testing.assert_close(
                cell.U.weight @ cell.U.weight.T, torch.eye(16), atol=1e-5, rtol=0
            )
            assert float(cell.W.bias.abs().sum()) == 0
    assert model.decoder.cell.C.weight.shape == (16, 32 if arch == "rnnsearch" else 16)
    # (the papers' v_a = 0 gives W_a and U_a no gradient at first: the gradient check uses the
    # default init)
    torch.manual_seed(0)
    model = build_model(preset(f"smoke-{arch}", unit="tanh", init="default"))
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    tgt_out, tgt_mask = pad(TGT, suffix=EOS)
    logits, att = model(src, mask, tgt_in, return_attention=True)
    assert logits.shape == (3, tgt_in.shape[1], 40)
    assert (att is None) == (arch == "rnnencdec") and (
        att is None or att.shape == (3, tgt_in.shape[1], mask.shape[1])
    )
    enc = model.encode(src, mask)
    assert enc.annotations.shape == (3, mask.shape[1], 32 if arch == "rnnsearch" else 16)
    loss = torch.nn.functional.cross_entropy(logits[tgt_mask], tgt_out[tgt_mask])
    loss.backward()
    # the gradient reaches every recurrent matrix, the encoders' included (the BOS row of E aside)
    for name, p in model.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name


def _copy_pairs(n: int, seed: int):
    import numpy as np

    from rnnlib.ragged import ParallelArrays, Ragged

    rng = np.random.default_rng(seed)
    srcs = [rng.integers(4, 12, size=rng.integers(2, 6)) for _ in range(n)]
    return ParallelArrays(Ragged.from_lists(srcs), Ragged.from_lists([s.copy() for s in srcs]))


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_tanh_model_trains_searches_and_its_checkpoint_loads_back(arch, tmp_path):
    config = preset(f"smoke-{arch}", unit="tanh", src_vocab=12, tgt_vocab=12)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models run faster so
    try:
        _train_search_reload(config, tmp_path)
    finally:
        torch.set_num_threads(threads)


def _train_search_reload(config: ModelConfig, tmp_path) -> None:
    from rnnlib import search
    from rnnlib.checkpoint import load_checkpoint
    from rnnlib.train import TrainConfig, evaluate_nll, train

    torch.manual_seed(0)
    model = build_model(config)
    tr, dev = _copy_pairs(200, 1), _copy_pairs(20, 2)
    before = evaluate_nll(model, dev)["nll_sentence"]
    cfg = TrainConfig(
        batch_size=20, pool=2, max_updates=30, checkpoint_every=30, optimizer="adam", lr=0.01
    )
    result = train(
        model, tr, None, cfg, tmp_path, progress=False
    )  # the fast path (TrainConfig.fast)
    assert result.updates == 30 and evaluate_nll(model, dev)["nll_sentence"] < 0.9 * before
    again = build_model(config)
    again.load_state_dict(load_checkpoint(tmp_path / "checkpoint.pt")["model"])
    with pytest.raises(
        RuntimeError, match="W_r"
    ):  # a GRU model cannot take the tanh model's weights
        build_model(dataclasses.replace(config, unit="gru")).load_state_dict(again.state_dict())
    src, mask = pad_sources([[5, 6, 7], [8, 9, 10, 11]])
    model.eval(), again.eval()
    greedy = search.greedy(model, src, mask, max_len=8)
    assert [h.tokens for h in search.greedy(again, src, mask, max_len=8)] == [
        h.tokens for h in greedy
    ]
    beams = search.beam_search(again, src, mask, beam_size=3, n_best=2, max_len=8)
    assert [len(b) for b in beams] == [2, 2] and any(len(h.tokens) for b in beams for h in b)
    assert beams[0][0].score >= beams[0][1].score


def test_unit_option_is_checked_with_named_errors():
    with pytest.raises(
        ValueError, match=r"ModelConfig.unit='lstm'; expected one of \('gru', 'tanh'\)"
    ):
        preset("smoke-rnnsearch", unit="lstm")
    for field, value in (("reset", "after"), ("decoder_reset", "before"), ("reset_context", True)):
        with pytest.raises(
            ValueError,
            match=rf"ModelConfig.{field}=.*with unit='tanh' \(the tanh unit has no reset gate",
        ):
            preset("smoke-rnnencdec", unit="tanh", **{field: value})
    with pytest.raises(
        ValueError,
        match="decoder_reset='after'.*set reset='before', decoder_reset=None, reset_context=False",
    ):
        preset("smoke-cho2014", unit="tanh")  # A's decoder reads the reset gate into the context
    assert (
        preset("smoke-cho2014", unit="tanh", decoder_reset=None, reset_context=False).unit == "tanh"
    )


def test_a_gru_config_keys_as_before_unit_existed_and_a_tanh_config_keys_apart():
    """The book's cache keys models by ModelConfig.to_dict(): a GRU config's dict (so its key) is
    the one it had before the ``unit`` field existed; a tanh config's key differs."""
    from rnnlib.cache import ArtifactCache, config_hash

    for name in PRESETS:
        config = preset(name)
        old = {f: getattr(config, f) for f in FIELDS_BEFORE_UNIT}
        assert config.to_dict() == old
        assert ArtifactCache.key("run", {"model": config.to_dict()}, None) == ArtifactCache.key(
            "run", {"model": old}, None
        )
        assert config_hash({"model": config}) == config_hash(
            {"model": old}
        )  # a config passed as is
        assert ModelConfig.from_dict(old) == config  # an old dict loads as the GRU
    tanh = preset("cpu-rnnsearch", unit="tanh")
    assert tanh.to_dict()["unit"] == "tanh" and ModelConfig.from_dict(tanh.to_dict()) == tanh
    assert config_hash(tanh.to_dict()) != config_hash(preset("cpu-rnnsearch").to_dict())
    assert [f.name for f in dataclasses.fields(ModelConfig)] == FIELDS_BEFORE_UNIT + ["unit"]
