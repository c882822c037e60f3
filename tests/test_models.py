"""RNNsearch and the RNN Encoder--Decoder: step == forward, padding, attention masks, init, presets."""
import time

import pytest
import torch

from rnnlib.batch import pad, pad_sources
from rnnlib.encoders import EncoderOut
from rnnlib.gru import GRUCell
from rnnlib.models import RNNEncDec, RNNSearch
from rnnlib.presets import PRESETS, ModelConfig, build_model, preset
from rnnlib.specials import BOS, EOS

VARIANTS = {
    "rnnsearch-prev": dict(name="smoke-rnnsearch"),
    "rnnsearch-current": dict(name="smoke-rnnsearch", deep_output_state="current", output_rank=5),
    "rnnsearch-reset-after": dict(name="smoke-rnnsearch", reset="after"),
    "rnnencdec": dict(name="smoke-rnnencdec"),
    "cho2014": dict(name="smoke-cho2014"),
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


@pytest.mark.parametrize("variant", ["rnnsearch-prev", "rnnsearch-reset-after", "rnnencdec", "cho2014"])
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
            torch.testing.assert_close(batch_enc.annotations[b, : len(s) + 1], enc1.annotations[0], atol=1e-6, rtol=0)


@pytest.mark.parametrize("variant", ["rnnsearch-prev", "rnnencdec"])
def test_padding_token_ids_cannot_leak(variant):
    """Whatever ids sit under the padding, the encoding and the outputs are the same."""
    model = _model(variant)
    src, mask = pad_sources(SRC)
    tgt_in, _ = pad(TGT, prefix=BOS)
    noisy = src.clone()
    noisy[~mask] = torch.randint(4, model.config.src_vocab, (int((~mask).sum()),))
    with torch.no_grad():
        torch.testing.assert_close(model(src, mask, tgt_in), model(noisy, mask, tgt_in), atol=0, rtol=0)


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
            torch.testing.assert_close(ann[b, : len(s) + 1, model.config.hidden:], states.flip(0), atol=1e-6, rtol=0)
            assert ann[b, len(s) + 1:].abs().sum() == 0


def test_rnnencdec_context_is_tanh_V_of_the_state_after_the_source_end():
    model = _model("rnnencdec")
    src, mask = pad_sources(SRC)
    with torch.no_grad():
        states, c = model.encoder(src, mask)
        for b, s in enumerate(SRC):
            h_N = model.encoder.rnn(model.encoder.embed(torch.tensor([s + [EOS]])))[0, -1]  # after <end>
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
    model = build_model(preset("smoke-rnnsearch", hidden=64, align=64, emb=48, maxout=32,
                               src_vocab=500, tgt_vocab=500), generator=torch.Generator().manual_seed(0))
    cells = [m for m in model.modules() if isinstance(m, GRUCell)]
    assert len(cells) == 3  # forward, backward, decoder
    for cell in cells:
        for U in cell.recurrent_blocks():
            torch.testing.assert_close(U @ U.T, torch.eye(64), atol=1e-5, rtol=0)
        W_in = torch.cat([cell.W_r.weight, cell.W_z.weight, cell.W.weight])
        assert 0.008 < float(W_in.std()) < 0.012
        assert all(float(m.bias.abs().sum()) == 0 for m in (cell.W_r, cell.W_z, cell.W))
    att = model.decoder.attention
    assert 0.0008 < float(att.W_a.weight.std()) < 0.0012 and 0.0008 < float(att.U_a.weight.std()) < 0.0012
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
    assert torch.equal(sel.annotations[0], enc.annotations[2]) and torch.equal(sel.mask[1], enc.mask[0])
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
    assert (b.hidden, b.emb, b.maxout, b.align, b.src_vocab, b.tgt_vocab) == (1000, 620, 500, 1000, 30000, 30000)
    a = preset("paper-cho2014")
    assert (a.arch, a.hidden, a.emb, a.maxout, a.src_vocab, a.output_rank) == ("rnnencdec", 1000, 100, 500, 15000, 100)
    assert preset("paper-rnnencdec").arch == "rnnencdec"
    assert {"cpu-rnnsearch", "cpu-rnnencdec", "smoke-rnnsearch", "smoke-rnnencdec"} <= set(PRESETS)


@pytest.mark.parametrize("name", [pytest.param("paper-rnnsearch", marks=pytest.mark.slow),
                                  "paper-rnnencdec", "paper-cho2014"])
def test_paper_preset_trains_one_step(name):
    """Instantiate the full paper-size model and take one Adadelta step (rho 0.95, eps 1e-6, clip 1)."""
    torch.manual_seed(0)
    start = time.time()
    model = build_model(preset(name))
    assert isinstance(model, RNNSearch if preset(name).arch == "rnnsearch" else RNNEncDec)
    src, mask = pad_sources([[5, 6, 7, 8, 9], [9, 10, 11]])
    tgt_in, _ = pad([[11, 12, 13], [14]], prefix=BOS)
    tgt_out, tgt_mask = pad([[11, 12, 13], [14]], suffix=3)
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-6)

    def nll():
        logits = model(src, mask, tgt_in)
        tok = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), reduction="none")
        return (tok * tgt_mask.flatten()).sum() / 2

    loss = nll()
    assert abs(float(loss.detach()) - 3 * torch.log(torch.tensor(float(model.config.tgt_vocab)))) < 0.5  # ~uniform at init
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    with torch.no_grad():
        assert float(nll()) < float(loss)
    assert time.time() - start < 60
