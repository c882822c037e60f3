"""The gated recurrent unit of Cho et al. 2014 (paper A) with explicit reset and update gates.

One cell serves every recurrent layer of both papers: the encoders (A Appendix A, B A.2.1),
RNNsearch's decoder (B A.1.1 / A.2.2, with the context ``c_i`` as an extra input) and the RNN
Encoder--Decoder's decoder (A Appendix A.1.1, with the fixed summary ``c``).

Shapes are batch-first: inputs ``x: (B, T, input_size)`` or ``(B, input_size)``, states
``h: (B, n)`` with ``n = hidden_size``, optional context ``c: (B, context_size)``.

Update-gate convention
----------------------
This module uses paper A's Eq. 7, where ``z`` multiplies the OLD state::

    h_t = z * h_{t-1} + (1 - z) * h~_t           (A Eq. 7; also torch.nn.GRU)

Paper B (A.1.1) writes ``s_i = (1 - z_i) * s_{i-1} + z_i * s~_i``: its gate ``z_B`` multiplies the
NEW candidate, so ``z_B = 1 - z_A`` and B's gate pre-activation is the negation of ours
(``W_z -> -W_z``, ``U_z -> -U_z``, ``C_z -> -C_z``, ``b_z -> -b_z``). The two parametrisations
define the same family of functions, and the papers' initialisation (zero-mean Gaussian,
random orthogonal, zero bias) is symmetric under that negation, so training is unaffected.
Gate analyses that quote B's convention must report ``1 - z``.

Equations
---------
- A Eq. 5: r = sigmoid(W_r x + U_r h_{t-1} [+ C_r c])
- A Eq. 6: z = sigmoid(W_z x + U_z h_{t-1} [+ C_z c])
- A Eq. 7: h_t = z * h_{t-1} + (1 - z) * h~_t
- A Eq. 8, reset="before" (the papers' form): h~_t = tanh(W x + U (r * h_{t-1}) [+ C c])
- reset="after" (torch.nn.GRU's form): h~_t = tanh(W x + b + r * (U h_{t-1} + b_U) [+ C c])
- A Appendix A.1.1 as we read its brackets (reset_context=True): the reset gate also scales the
  context term, h~'_t = tanh(W' e(y_{t-1}) + r' * (U' h'_{t-1} + C c)) with reset="after"
- B A.1.1 / A.2.2: the decoder unit is the same cell with input e(y_{i-1}) and context c_i

Deviations
----------
- Biases: both papers omit biases "to make the equations uncluttered"; every input
  projection here has a bias (initialised to zero, B.1). reset="after" also has the recurrent
  bias ``b_U`` of torch.nn.GRU so that it equals it exactly.
- The update gate follows A's convention (z on the old state) for B's models too; see above
  (Reading the papers, ``reading-update-gate``).
- The three gate matrices are stored stacked in the order (r, z, candidate), as torch.nn.GRU
  stores them, so the fused kernel can use them directly.

Speed (same equations, fewer and larger products)
-------------------------------------------------
- The input projections ``W x + b`` of all steps are one product before the recurrent loop.
- :meth:`GRUCell.step` also runs two independent layers at once (the encoder's two directions):
  states ``(D, B, n)`` with weights ``(D, 3n, n)`` become batched products.
- A caller that multiplies the same state by other matrices (the decoder's ``W_a s_{i-1}``) may
  pass ``U_{r,z} h`` in, computed in one stacked product with them (``hp``).
- Under autocast the recurrent weights are cast once per sequence (:func:`autocast_once`), not
  at every step.
"""
from __future__ import annotations

import torch
from torch import nn

RESET_MODES = ("before", "after")


def autocast_once(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``tensors`` cast to the autocast dtype when autocast is on for their device, else unchanged.

    Loops call it once per sequence on the weights (and other tensors) every step multiplies,
    so autocast does not cast them again at each step (it caches only leaf parameters, not the
    slices and stacks the loops use).
    """
    dev = tensors[0].device.type
    if not torch.is_autocast_enabled(dev):
        return tensors
    dt = torch.get_autocast_dtype(dev)
    return tuple(t.to(dt) if t.is_floating_point() else t for t in tensors)


def _mm(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """``h W^T (+ b)`` for ``h (B, in)``, ``w (out, in)``, or batched ``h (D, B, in)``, ``w (D, out, in)``."""
    if w.dim() == 2:
        return nn.functional.linear(h, w, b)
    out = torch.bmm(h, w.transpose(1, 2))
    return out if b is None else out + b


class GRUCell(nn.Module):
    """One gated recurrent unit layer (A Eqs. 5--8) with an optional per-step context input.

    Parameters: ``weight_ih (3n, input_size)`` = [W_r; W_z; W], ``bias_ih (3n)``,
    ``weight_hh (3n, n)`` = [U_r; U_z; U] (recurrent, orthogonal blocks at init),
    ``bias_hh (3n)`` only for ``reset="after"``, ``weight_ch (3n, context_size)`` = [C_r; C_z; C]
    when ``context_size > 0``.
    """

    def __init__(self, input_size: int, hidden_size: int, reset: str = "before",
                 context_size: int = 0, reset_context: bool = False) -> None:
        super().__init__()
        if reset not in RESET_MODES:
            raise ValueError(f"GRUCell: reset={reset!r}; expected one of {RESET_MODES}")
        if reset_context and context_size == 0:
            raise ValueError("GRUCell: reset_context=True needs context_size > 0")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.context_size, self.reset, self.reset_context = context_size, reset, reset_context
        n = hidden_size
        self.weight_ih = nn.Parameter(torch.empty(3 * n, input_size))
        self.bias_ih = nn.Parameter(torch.zeros(3 * n))
        self.weight_hh = nn.Parameter(torch.empty(3 * n, n))
        self.bias_hh = nn.Parameter(torch.zeros(3 * n)) if reset == "after" else None
        self.weight_ch = nn.Parameter(torch.empty(3 * n, context_size)) if context_size else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Plain default (uniform +-1/sqrt(n), as torch.nn.GRU); :mod:`rnnlib.init` applies the papers'."""
        bound = self.hidden_size ** -0.5
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def recurrent_blocks(self) -> list[torch.Tensor]:
        """Views of ``U_r, U_z, U`` (each ``(n, n)``), the recurrent matrices B.1 makes orthogonal."""
        return list(self.weight_hh.split(self.hidden_size, 0))

    # -- projections that do not depend on the state: computed once per sequence -------------
    def project_input(self, x: torch.Tensor) -> torch.Tensor:
        """``W_{r,z,.} x + b``: ``(..., input_size) -> (..., 3n)``."""
        return nn.functional.linear(x, self.weight_ih, self.bias_ih)

    def project_context(self, c: torch.Tensor) -> torch.Tensor:
        """``C_{r,z,.} c``: ``(..., context_size) -> (..., 3n)``."""
        return nn.functional.linear(c, self.weight_ch)

    @property
    def gate_rows(self) -> int:
        """Rows of the recurrent product taken before the reset gate: ``2n`` (U_r, U_z) or ``3n``."""
        return (2 if self.reset == "before" else 3) * self.hidden_size

    def recurrent_weights(self) -> tuple[torch.Tensor, ...]:
        """``(U_rz (2n, n), U (n, n), None)`` for reset="before", ``(U_rzn (3n, n), None, b_U)`` for "after".

        Loops take them once (cast once under autocast) and pass them to every :meth:`step`, so
        the backward pass accumulates each block's gradient instead of re-slicing at every step.
        """
        n = self.hidden_size
        if self.reset == "before":
            return (*autocast_once(*self.weight_hh.split([2 * n, n])), None)
        return (*autocast_once(self.weight_hh), None, self.bias_hh)

    def step(self, xp: torch.Tensor, h: torch.Tensor, cp: torch.Tensor | None = None,
             weights: tuple[torch.Tensor, ...] | None = None, hp: torch.Tensor | None = None) -> torch.Tensor:
        """One update from projected inputs: ``xp (B, 3n)``, ``h (B, n)``, ``cp (B, 3n) | None`` -> ``(B, n)``.

        ``weights``: :meth:`recurrent_weights`, when the caller loops over many steps (``(D, ., n)``
        stacks of them with ``h (D, B, n)`` run ``D`` layers at once). ``hp``: ``U_{r,z} h``
        (``(B, 2n)``; ``U_{r,z,.} h + b_U``, ``(B, 3n)``, for reset="after") if the caller computed it.
        """
        n = self.hidden_size
        weights = weights if weights is not None else self.recurrent_weights()
        x_r, x_z, x_n = xp.split(n, -1)
        c_n = None
        if cp is not None:
            c_r, c_z, c_n = cp.split(n, -1)
            x_r, x_z = x_r + c_r, x_z + c_z
        if hp is None:
            hp = _mm(h, weights[0], weights[2])
        if self.reset == "before":
            u_r, u_z = hp.split(n, -1)
            r = torch.sigmoid(x_r + u_r)
            z = torch.sigmoid(x_z + u_z)
            pre = x_n + _mm(r * h, weights[1])
            if c_n is not None:
                pre = pre + (r * c_n if self.reset_context else c_n)
        else:
            u_r, u_z, u_n = hp.split(n, -1)
            r = torch.sigmoid(x_r + u_r)
            z = torch.sigmoid(x_z + u_z)
            if c_n is not None and self.reset_context:
                pre = x_n + r * (u_n + c_n)
            else:
                pre = x_n + r * u_n + (c_n if c_n is not None else 0.0)
        cand = torch.tanh(pre)
        return cand + z * (h - cand)  # = z * h + (1 - z) * cand  (A Eq. 7)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None = None) -> torch.Tensor:
        """``x (B, input_size)``, ``h (B, n)``, ``c (B, context_size) | None`` -> ``h' (B, n)``."""
        cp = self.project_context(c) if (c is not None and self.weight_ch is not None) else None
        return self.step(self.project_input(x), h, cp)


class GRU(nn.Module):
    """A :class:`GRUCell` run over a sequence: ``x (B, T, input_size)`` -> states ``(B, T, n)``.

    With ``reset="after"`` and no context the cell is exactly ``torch.nn.GRU``'s unit, and the
    fused kernel (``torch.gru``) runs on the cell's own parameters; otherwise the input projection
    ``W x`` for all ``T`` steps is one matrix product and only the recurrent part loops.
    """

    def __init__(self, input_size: int, hidden_size: int, reset: str = "before",
                 context_size: int = 0, reset_context: bool = False, fused: bool = True) -> None:
        super().__init__()
        self.cell = GRUCell(input_size, hidden_size, reset, context_size, reset_context)
        self.fused = fused

    @property
    def uses_fused_kernel(self) -> bool:
        return self.fused and self.cell.reset == "after" and self.cell.weight_ch is None

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None,
                c: torch.Tensor | None = None) -> torch.Tensor:
        """``x (B, T, in)``, ``h0 (B, n)`` (zeros if None, A: h<0> = 0), ``c (B, ctx)`` fixed context.

        Returns all states ``(B, T, n)``; ``out[:, t]`` is ``h_{t+1}``.
        """
        cell = self.cell
        B, T, _ = x.shape
        if h0 is None:
            h0 = x.new_zeros(B, cell.hidden_size)
        if self.uses_fused_kernel and c is None:
            params = [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh]
            out, _ = torch.gru(x, h0.unsqueeze(0).contiguous(), params, True, 1, 0.0,
                               self.training, False, True)
            return out
        xp = cell.project_input(x)
        cp = cell.project_context(c) if c is not None else None
        h, outs, weights = h0, [], cell.recurrent_weights()
        for x_t in xp.unbind(1):
            h = cell.step(x_t, h, cp, weights)
            outs.append(h)
        return torch.stack(outs, 1) if outs else x.new_zeros(B, 0, cell.hidden_size)
