"""The fast path (rnnlib.fast) computes what the plain modules compute, from the same parameters:
encoder outputs, teacher-forced logits and attention, step-by-step logits, the gradient of
every parameter, the training loss, and search results.

fp32 agreement is asserted to 1e-6 (absolute); float64 agreement to 1e-12, which shows that the
fp32 differences are float rounding of the same function, not a different function."""

import copy

import numpy as np
import pytest
import torch

from rnnlib import search
from rnnlib.batch import Batch, pad, pad_sources
from rnnlib.fast import kernels
from rnnlib.fast.kernels import FastModel
from rnnlib.fast.precision import bf16_error
from rnnlib.presets import build_model, preset
from rnnlib.specials import BOS, EOS
from rnnlib.train import batch_nll

SIZES = dict(hidden=64, emb=32, align=48, maxout=32, src_vocab=60, tgt_vocab=60)
VARIANTS = {
    "rnnsearch": dict(name="smoke-rnnsearch"),
    "rnnsearch-reset-after": dict(name="smoke-rnnsearch", reset="after"),  # torch.gru encoder
    "rnnsearch-current-rank": dict(
        name="smoke-rnnsearch", deep_output_state="current", output_rank=8
    ),
    "rnnencdec": dict(name="smoke-rnnencdec"),
    "cho2014": dict(name="smoke-cho2014", output_rank=8),
    "rnnsearch-tanh": dict(name="smoke-rnnsearch", unit="tanh"),  # A §2.3's ungated unit
    "rnnencdec-tanh": dict(name="smoke-rnnencdec", unit="tanh"),
}
SRC = [[5, 6, 7, 8, 9, 10, 11, 12], [11, 12], [13, 14, 15, 16], [20, 21, 22, 23, 24]]
TGT = [[20, 21, 22], [23], [24, 25, 26, 27, 28, 29, 30], [5, 6]]


def _model(variant: str, init: str = "default", dtype=torch.float32):
    kw = dict(VARIANTS[variant])
    torch.manual_seed(0)
    # init="default" (uniform +-1/sqrt(n)): sharp outputs and non-uniform attention
    return build_model(preset(kw.pop("name"), init=init, **{**SIZES, **kw})).to(dtype)


def _batch() -> Batch:
    src, src_mask = pad_sources(SRC)  # padded: four lengths
    tgt_in, _ = pad(TGT, prefix=BOS)
    tgt_out, tgt_mask = pad(TGT, suffix=EOS)
    return Batch(src, src_mask, tgt_in, tgt_out, tgt_mask)


def _everything(net, model, b: Batch) -> dict:
    """Encoder outputs, teacher-forced logits/attention, the gradient of every parameter of
    ``model`` (through ``net``), and the logits of ``T`` decoder steps."""
    out = {}
    enc = net.encode(b.src, b.src_mask)
    out["annotations"], out["init"] = enc.annotations.detach(), enc.init.detach()
    logits, att = net(b.src, b.src_mask, b.tgt_in, return_attention=True)
    out["logits"] = logits.detach()
    if att is not None:
        out["attention"] = att.detach()
    selected = net(b.src, b.src_mask, b.tgt_in, False, b.tgt_mask)  # (N, K), the training path
    torch.testing.assert_close(
        selected, logits[b.tgt_mask]
    )  # (the fast path's product has other row blocks)
    loss = torch.nn.functional.cross_entropy(selected, b.tgt_out[b.tgt_mask], reduction="sum")
    grads = torch.autograd.grad(loss, list(model.parameters()))
    out.update({f"grad {n}": g for (n, _), g in zip(model.named_parameters(), grads)})
    with torch.no_grad():
        enc = net.encode(b.src, b.src_mask)
        state = net.init_state(enc)
        for t in range(b.tgt_in.shape[1]):
            out[f"step {t}"], state, _ = net.step(b.tgt_in[:, t], state, enc)
    return out


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("init", ["default", "paper"])
def test_fast_path_equals_plain_modules_fp32(variant, init):
    model = _model(variant, init)
    plain, fast = (
        _everything(model, model, _batch()),
        _everything(FastModel(model), model, _batch()),
    )
    assert plain.keys() == fast.keys() and len([k for k in plain if k.startswith("grad")]) == len(
        list(model.parameters())
    )
    for key in plain:
        torch.testing.assert_close(
            fast[key], plain[key], atol=1e-6, rtol=0, msg=lambda m: f"{key}: {m}"
        )
    if init == "default":  # outputs large enough to disagree (the papers' init gives logits ~1e-5)
        assert (
            plain["logits"].abs().max() > 0.1
            and plain["attention" if "attention" in plain else "init"].std() > 1e-3
        )


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("init", ["default", "paper"])
def test_fast_path_is_the_same_function_float64(variant, init):
    model = _model(variant, init, dtype=torch.float64)
    plain, fast = (
        _everything(model, model, _batch()),
        _everything(FastModel(model), model, _batch()),
    )
    scale = {key: max(1.0, float(plain[key].abs().max())) for key in plain}
    for key in plain:
        torch.testing.assert_close(
            fast[key], plain[key], atol=1e-12 * scale[key], rtol=0, msg=lambda m: f"{key}: {m}"
        )


@pytest.mark.parametrize("rows", [1, 3])
def test_blocked_attention_map_in_search_equals_the_plain_equations(rows, monkeypatch):
    """Without gradients the fast path computes the (B, S, n') map a block of rows at a time
    (kernels.BLOCK floats): with blocks of 1 and 3 of the 4 sentences, the decoder steps give the
    plain modules' logits, states and attention, and beam search the same n-best lists."""
    model = _model("rnnsearch").eval()
    b = _batch()
    S, n_align = b.src.shape[1], SIZES["align"]
    assert b.src.shape[0] > rows  # more than one block
    monkeypatch.setattr(kernels, "BLOCK", rows * S * n_align)
    calls = []
    split = torch.Tensor.split
    monkeypatch.setattr(
        torch.Tensor, "split", lambda t, *a, **k: calls.append(a) or split(t, *a, **k)
    )
    with torch.no_grad():
        out = {}
        for name, net in (("plain", model), ("fast", FastModel(model))):
            enc = net.encode(b.src, b.src_mask)
            state, steps = net.init_state(enc), []
            for t in range(b.tgt_in.shape[1]):
                logits, state, alpha = net.step(b.tgt_in[:, t], state, enc)
                steps.append((logits, state, alpha))
            out[name] = steps
    assert (rows,) in calls  # the blocked branch ran, with blocks of `rows` rows
    for (lp, sp, ap), (lf, sf, af) in zip(out["plain"], out["fast"]):
        for fast, plain in ((lf, lp), (sf, sp), (af, ap)):
            torch.testing.assert_close(fast, plain, atol=1e-6, rtol=0)
    beams = {
        fast: search.beam_search(
            model, b.src, b.src_mask, beam_size=4, n_best=3, max_len=8, fast=fast
        )
        for fast in (True, False)
    }
    assert [[h.tokens for h in hyps] for hyps in beams[True]] == [
        [h.tokens for h in hyps] for hyps in beams[False]
    ]


def test_keys_are_U_a_h_j_on_both_paths():
    """B A.1.2's ``U_a h_j`` (plus the bias of U_a), worked out one sentence, position and unit
    at a time from the parameters in float64: not through the ``U_a`` module that
    ``precompute`` calls."""
    model = _model("rnnsearch")
    att = model.decoder.attention
    with torch.no_grad():
        att.U_a.bias.copy_(torch.linspace(-1, 1, att.U_a.bias.numel()))  # zero at init: not here
    b = _batch()
    with torch.no_grad():
        plain, fast = model.encode(b.src, b.src_mask), FastModel(model).encode(b.src, b.src_mask)
    U = att.U_a.weight.double().tolist()  # (n', 2n)
    bias = att.U_a.bias.double().tolist()
    H = plain.annotations.double().tolist()  # (B, S, 2n)
    by_hand = torch.tensor(
        [
            [[sum(u * h for u, h in zip(row, h_j)) + c for row, c in zip(U, bias)] for h_j in sent]
            for sent in H
        ],
        dtype=torch.float64,
    )
    assert plain.keys.shape == (len(SRC), max(map(len, SRC)) + 1, len(bias))  # + EOS
    torch.testing.assert_close(plain.keys.double(), by_hand, atol=1e-6, rtol=0)
    torch.testing.assert_close(fast.keys, plain.keys, atol=1e-6, rtol=0)


def test_fast_path_owns_no_parameters_and_sees_their_updates():
    model = _model("rnnsearch")
    fast = FastModel(model)
    assert [id(p) for p in fast.parameters()] == [id(p) for p in model.parameters()]  # one set
    assert list(fast.state_dict()) == [f"model.{k}" for k in model.state_dict()]
    b = _batch()
    with torch.no_grad():
        enc = fast.encode(b.src, b.src_mask)
        state = fast.init_state(enc)
        before = fast.step(b.tgt_in[:, 0], state, enc)[0]
        model.decoder.attention.W_a.weight.mul_(-3)  # an in-place update (as an optimiser makes)
        after = fast.step(b.tgt_in[:, 0], state, enc)[0]
        plain = model.step(b.tgt_in[:, 0], state, model.encode(b.src, b.src_mask))[0]
    assert (after - before).abs().max() > 1e-4  # the step used the new W_a
    torch.testing.assert_close(after, plain, atol=1e-6, rtol=0)


@pytest.mark.parametrize("variant", ["rnnsearch", "cho2014", "rnnsearch-tanh"])
def test_training_loss_and_gradients_agree(variant):
    model = _model(variant)
    b = _batch()
    out = {}
    for fast in (True, False):
        nll = batch_nll(model, b, fast=fast)
        out[fast] = (nll.detach(), torch.autograd.grad(nll, list(model.parameters())))
    torch.testing.assert_close(out[True][0], out[False][0], atol=1e-5, rtol=1e-7)
    for g_fast, g_plain in zip(out[True][1], out[False][1]):
        torch.testing.assert_close(g_fast, g_plain, atol=1e-6, rtol=0)


def test_output_rows_are_rounded_up_under_cpu_autocast_only():
    cpu = torch.device("cpu")
    assert kernels.output_rows(13, cpu) == 13  # no autocast: the selected rows only
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert kernels.output_rows(13, cpu) == kernels.OUTPUT_ROWS
        assert kernels.output_rows(kernels.OUTPUT_ROWS, cpu) == kernels.OUTPUT_ROWS
        assert kernels.output_rows(kernels.OUTPUT_ROWS + 1, cpu) == 2 * kernels.OUTPUT_ROWS
        assert kernels.output_rows(0, cpu) == 0


@pytest.mark.parametrize("variant", ["rnnsearch", "rnnencdec"])
def test_rounded_output_rows_change_neither_loss_nor_gradients_under_bf16(variant, monkeypatch):
    """The repeated rows are dropped before the loss: under bf16 autocast the loss and every
    gradient are those of the real rows alone (OUTPUT_ROWS = 1 rounds nothing)."""
    model = _model(variant).eval()  # no dropout: the same function both ways
    b = _batch()
    n = int(b.tgt_mask.sum())
    out, seen = {}, []
    model.decoder.output.register_forward_pre_hook(lambda _, args: seen.append(len(args[0])))
    for rows in (1, 64):
        monkeypatch.setattr(kernels, "OUTPUT_ROWS", rows)
        seen.clear()
        nll = batch_nll(model, b, bf16=True)
        out[rows] = (nll.detach(), torch.autograd.grad(nll, list(model.parameters())))
        assert seen == [n if rows == 1 else 64]  # the deep output ran on the rounded count
    torch.testing.assert_close(out[64][0], out[1][0], atol=1e-4, rtol=1e-4)
    for g64, g1 in zip(out[64][1], out[1][1]):
        torch.testing.assert_close(g64, g1, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize(
    "variant", ["rnnsearch", "rnnencdec", "cho2014", "rnnsearch-tanh", "rnnencdec-tanh"]
)
def test_search_gives_identical_outputs_both_ways(variant):
    model = _model(variant).eval()
    src, mask = pad_sources(SRC)
    beams = {
        fast: search.beam_search(model, src, mask, beam_size=4, n_best=3, max_len=8, fast=fast)
        for fast in (True, False)
    }
    greedy = {fast: search.greedy(model, src, mask, max_len=8, fast=fast) for fast in (True, False)}
    for fast_hyps, plain_hyps in zip(
        beams[True] + [[g] for g in greedy[True]], beams[False] + [[g] for g in greedy[False]]
    ):
        assert [h.tokens for h in fast_hyps] == [h.tokens for h in plain_hyps]
        np.testing.assert_allclose(
            [h.score for h in fast_hyps], [h.score for h in plain_hyps], atol=1e-5
        )
        for f, p in zip(fast_hyps, plain_hyps):
            if p.attention is not None:
                np.testing.assert_allclose(f.attention, p.attention, atol=1e-6)
    assert any(len(h.tokens) for hyps in beams[True] for h in hyps)
    targets = [h[0].tokens for h in beams[True]]
    torch.testing.assert_close(
        search.score(model, src, mask, targets),
        search.score(model, src, mask, targets, fast=False),
        atol=1e-5,
        rtol=0,
    )


def test_bf16_error_is_measured():
    search_err = bf16_error("smoke-rnnsearch", batch_size=4)
    encdec_err = bf16_error("smoke-rnnencdec", batch_size=4)
    # bf16 keeps 8 bits of mantissa: visibly different from fp32, far from a different model
    assert 0 < search_err["logprob"] < 0.1 * search_err["logprob_range"]
    assert 0 < search_err["attention"] < 0.05
    assert encdec_err["attention"] is None and encdec_err["logprob"] > 0
    assert search_err == bf16_error("smoke-rnnsearch", batch_size=4)  # seeded


def test_fast_model_refuses_other_models():
    with pytest.raises(TypeError, match="RNNSearch or RNNEncDec.*Linear"):
        FastModel(torch.nn.Linear(2, 2))
    other = copy.deepcopy(torch.nn.Linear(2, 2))
    assert kernels.wrap(other) is other
