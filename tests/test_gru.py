"""The gated recurrent unit: paper A's equations, torch.nn.GRU equivalence, gradients; and the
plain tanh unit of A §2.3's gating ablation."""

import pytest
import torch

from rnnlib.gru import GRU, GRUCell, TanhCell, TanhRNN, make_cell, make_rnn


def copy_to_torch(cell: GRUCell, ref) -> None:
    """Our named matrices into a ``torch.nn.GRU`` (layer 0) or ``torch.nn.GRUCell``, stacked
    (r, z, n)."""
    suffix = "_l0" if isinstance(ref, torch.nn.GRU) else ""
    with torch.no_grad():
        for name, maps in (
            ("ih", (cell.W_r, cell.W_z, cell.W)),
            ("hh", (cell.U_r, cell.U_z, cell.U)),
        ):
            getattr(ref, f"weight_{name}{suffix}").copy_(torch.cat([m.weight for m in maps]))
            getattr(ref, f"bias_{name}{suffix}").copy_(torch.cat([m.bias for m in maps]))


def test_reset_after_equals_torch_gru():
    torch.manual_seed(0)
    ours, ref = GRU(5, 7, reset="after"), torch.nn.GRU(5, 7, batch_first=True)
    copy_to_torch(ours.cell, ref)
    x, h0 = torch.randn(3, 6, 5), torch.randn(3, 7)
    expected, _ = ref(x, h0.unsqueeze(0))
    torch.testing.assert_close(ours(x, h0), expected, atol=1e-6, rtol=0)


def test_single_step_equals_torch_grucell():
    torch.manual_seed(1)
    cell, ref = GRUCell(4, 6, reset="after"), torch.nn.GRUCell(4, 6)
    copy_to_torch(cell, ref)
    x, h = torch.randn(2, 4), torch.randn(2, 6)
    torch.testing.assert_close(cell(x, h), ref(x, h), atol=1e-6, rtol=0)


def _explicit(cell: GRUCell, x, h, c=None):
    """Paper A Eqs. 5-8 written out gate by gate with matrix products (z on the OLD state, A
    Eq. 7)."""
    W_r, W_z, W = cell.W_r.weight, cell.W_z.weight, cell.W.weight
    b_r, b_z, b = cell.W_r.bias, cell.W_z.bias, cell.W.bias
    U_r, U_z, U = cell.U_r.weight, cell.U_z.weight, cell.U.weight
    ctx = [0.0, 0.0, 0.0] if c is None else [c @ C.weight.T for C in (cell.C_r, cell.C_z, cell.C)]
    bh = [0.0, 0.0, 0.0] if cell.U.bias is None else [cell.U_r.bias, cell.U_z.bias, cell.U.bias]
    r = torch.sigmoid(x @ W_r.T + b_r + h @ U_r.T + bh[0] + ctx[0])
    z = torch.sigmoid(x @ W_z.T + b_z + h @ U_z.T + bh[1] + ctx[1])
    if cell.reset == "before":
        cand = torch.tanh(x @ W.T + b + (r * h) @ U.T + ctx[2])
    else:  # A's decoder as read: r * (U h + C c)
        cand = torch.tanh(x @ W.T + b + r * (h @ U.T + bh[2] + ctx[2]))
    return z * h + (1 - z) * cand


def test_reset_before_is_papers_candidate():
    torch.manual_seed(2)
    cell = GRUCell(4, 6, reset="before")
    x, h = torch.randn(3, 4), torch.randn(3, 6)
    torch.testing.assert_close(cell(x, h), _explicit(cell, x, h), atol=1e-6, rtol=0)
    after = GRUCell(4, 6, reset="after")
    with torch.no_grad():
        for name, p in cell.named_parameters():
            after.get_parameter(name).copy_(p)
        for m in (after.U_r, after.U_z, after.U):
            m.bias.zero_()
    assert (after(x, h) - cell(x, h)).abs().max() > 1e-3  # the two placements really differ


def test_context_variants():
    torch.manual_seed(3)
    x, h, c = torch.randn(2, 4), torch.randn(2, 6), torch.randn(2, 5)
    b_cell = GRUCell(4, 6, reset="before", context_size=5)  # B A.2.2
    torch.testing.assert_close(b_cell(x, h, c), _explicit(b_cell, x, h, c), atol=1e-6, rtol=0)
    a_cell = GRUCell(
        4, 6, reset="after", context_size=5, reset_context=True
    )  # A App. A.1.1 as read
    torch.testing.assert_close(a_cell(x, h, c), _explicit(a_cell, x, h, c), atol=1e-6, rtol=0)


def test_sequence_runner_with_context_equals_steps():
    torch.manual_seed(4)
    rnn = GRU(4, 6, reset="before", context_size=3)
    x, c = torch.randn(2, 5, 4), torch.randn(2, 3)
    out = rnn(x, None, c)
    h = torch.zeros(2, 6)
    for t in range(5):
        h = rnn.cell(x[:, t], h, c)
        torch.testing.assert_close(out[:, t], h, atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    "reset,ctx,reset_context",
    [("before", 0, False), ("after", 0, False), ("before", 3, False), ("after", 3, True)],
)
def test_gradcheck_float64(reset, ctx, reset_context):
    torch.manual_seed(5)
    cell = GRUCell(3, 4, reset=reset, context_size=ctx, reset_context=reset_context).double()
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    h = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    args = (
        (x, h) if not ctx else (x, h, torch.randn(2, ctx, dtype=torch.float64, requires_grad=True))
    )
    params = tuple(cell.parameters())

    def f(*inputs):
        return torch.func.functional_call(
            cell,
            dict(zip([n for n, _ in cell.named_parameters()], inputs[len(args) :])),
            inputs[: len(args)],
        )

    assert torch.autograd.gradcheck(f, args + tuple(p.detach().requires_grad_() for p in params))


def test_bad_reset_option_is_named():
    with pytest.raises(ValueError, match="reset='middle'"):
        GRUCell(3, 4, reset="middle")


def test_missing_or_unexpected_context_is_named():
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    with pytest.raises(ValueError, match=r"context_size=5 but c is None"):
        GRUCell(3, 4, context_size=5)(x, h)
    with pytest.raises(ValueError, match=r"context_size=0 but c is \(2, 5\)"):
        GRUCell(3, 4)(x, h, torch.randn(2, 5))


# -- the plain tanh unit (A §2.3, ModelConfig.unit="tanh") -----------------------------------------


def test_tanh_rnn_equals_torch_rnn_with_tanh():
    """h_t = tanh(W x_t + U h_{t-1} + b): torch.nn.RNN (tanh) with our W, b, U and a zero
    recurrent bias."""
    torch.manual_seed(6)
    ours, ref = TanhRNN(5, 7), torch.nn.RNN(5, 7, nonlinearity="tanh", batch_first=True)
    with torch.no_grad():
        ref.weight_ih_l0.copy_(ours.cell.W.weight)
        ref.bias_ih_l0.copy_(ours.cell.W.bias)
        ref.weight_hh_l0.copy_(ours.cell.U.weight)
        ref.bias_hh_l0.zero_()
    x, h0 = torch.randn(3, 6, 5), torch.randn(3, 7)
    expected, _ = ref(x, h0.unsqueeze(0))
    torch.testing.assert_close(ours(x, h0), expected, atol=1e-6, rtol=0)
    assert sorted(n for n, _ in ours.named_parameters()) == [
        "cell.U.weight",
        "cell.W.bias",
        "cell.W.weight",
    ]


def test_tanh_cell_with_context_is_the_gru_candidate_without_gates():
    """The decoder's tanh unit: tanh(W x + U h + C c + b), the GRU candidate's inputs without r
    or z."""
    torch.manual_seed(7)
    cell = TanhCell(4, 6, context_size=5)
    x, h, c = torch.randn(2, 4), torch.randn(2, 6), torch.randn(2, 5)
    expected = torch.tanh(
        x @ cell.W.weight.T + cell.W.bias + h @ cell.U.weight.T + c @ cell.C.weight.T
    )
    torch.testing.assert_close(cell(x, h, c), expected, atol=1e-6, rtol=0)
    # a GRU with the same candidate maps and its gates forced to r = 1, z = 0 computes the same
    gru = GRUCell(4, 6, reset="before", context_size=5)
    with torch.no_grad():
        for name in ("W", "U", "C"):
            getattr(gru, name).weight.copy_(getattr(cell, name).weight)
        gru.W.bias.copy_(cell.W.bias)
        for m in (gru.U_r, gru.U_z, gru.C_r, gru.C_z):
            m.weight.zero_()
        gru.W_r.bias.fill_(50.0)  # r = sigmoid(50) = 1
        gru.W_z.bias.fill_(-50.0)  # z = 0: h_t = h~_t
        gru.W_r.weight.zero_()
        gru.W_z.weight.zero_()
    torch.testing.assert_close(gru(x, h, c), cell(x, h, c), atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match=r"TanhCell: context_size=5 but c is None"):
        cell(x, h)


def test_tanh_cell_gradcheck_float64():
    torch.manual_seed(8)
    cell = TanhCell(3, 4, context_size=2).double()
    names = [n for n, _ in cell.named_parameters()]
    args = tuple(torch.randn(2, k, dtype=torch.float64, requires_grad=True) for k in (3, 4, 2))

    def f(*inputs):
        return torch.func.functional_call(cell, dict(zip(names, inputs[3:])), inputs[:3])

    assert torch.autograd.gradcheck(
        f, args + tuple(p.detach().requires_grad_() for p in cell.parameters())
    )


def test_make_cell_and_make_rnn_build_the_named_unit_and_refuse_reset_options_for_tanh():
    assert isinstance(make_cell("gru", 3, 4, "after", 5, True), GRUCell)
    assert isinstance(make_cell("tanh", 3, 4, context_size=5), TanhCell)
    assert isinstance(make_rnn("gru", 3, 4), GRU) and isinstance(make_rnn("tanh", 3, 4), TanhRNN)
    with pytest.raises(ValueError, match=r"unit='lstm'; expected one of \('gru', 'tanh'\)"):
        make_cell("lstm", 3, 4)
    with pytest.raises(ValueError, match="unit='tanh' has no reset gate; reset='after'"):
        make_rnn("tanh", 3, 4, reset="after")
    with pytest.raises(ValueError, match="reset_context=True"):
        make_cell("tanh", 3, 4, context_size=5, reset_context=True)
