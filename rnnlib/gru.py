"""The gated recurrent unit of Cho et al. 2014 (paper A) with explicit reset and update gates,
and the plain tanh unit A §2.3 compares it with.

One cell serves every recurrent layer of both papers: the encoders (A Appendix A, B A.2.1),
RNNsearch's decoder (B A.1.1 / A.2.2, with the context ``c_i`` as an extra input) and the RNN
Encoder--Decoder's decoder (A Appendix A.1.1, with the fixed summary ``c``).

``ModelConfig.unit="tanh"`` puts :class:`TanhCell` in every one of those layers instead: A §2.3
reports that the same model with "an oft-used tanh unit without any gating" gave no meaningful
result (claim ``C-A-GRU-1``). It receives the inputs the GRU's candidate receives, without the
gates: ``h_t = tanh(W x_t + U h_{t-1} [+ C c] + b)``. :func:`make_cell` and :func:`make_rnn`
build the unit a config names.

Shapes are batch-first: inputs ``x: (B, T, input_size)`` or ``(B, input_size)``, states
``h: (B, n)`` with ``n = hidden_size``, optional context ``c: (B, context_size)``.

This module is the equations as printed, one line each. Training and search run the same
cell through :mod:`rnnlib.fast.kernels`, which computes the same numbers from these parameters
with fewer and larger products (tested equal in ``tests/test_fast.py``).

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
- A §2.3, unit="tanh": h_t = tanh(W x_t + U h_{t-1} [+ C c] + b) (A Eq. 8 without the reset
  gate, and h_t = h~_t without the update gate)

Deviations
----------
- Biases: both papers omit biases "to make the equations uncluttered"; every input
  projection here (``W_r``, ``W_z``, ``W``) has a bias (initialised to zero, B.1). reset="after"
  also gives ``U_r``, ``U_z``, ``U`` the recurrent biases of torch.nn.GRU so that it equals it
  exactly.
- The update gate follows A's convention (z on the old state) for B's models too; see above
  (Reading the papers, ``reading-update-gate``).
- The tanh unit (unit="tanh") is not specified by A beyond "an oft-used tanh unit without any
  gating"; we give it exactly the GRU candidate's inputs (``W x``, ``U h_{t-1}``, the context
  ``C c`` in the decoders) and its bias ``b``, and keep every other layer of the model, the
  initialisation (``U`` random orthogonal) and the training as for the GRU. The reset options
  (``reset``, ``decoder_reset``, ``reset_context``) have no meaning for it and are refused unless
  left at their defaults.
"""

from __future__ import annotations

import torch
from torch import nn

from .config import UNITS

RESET_MODES = ("before", "after")


class GRUCell(nn.Module):
    """One gated recurrent unit layer (A Eqs. 5--8) with an optional per-step context input.

    Linear maps (each ``nn.Linear``, so its matrix is ``.weight``, ``(out, in)``):
    ``W_r, W_z, W: input_size -> n`` (with biases); ``U_r, U_z, U: n -> n`` (recurrent, random
    orthogonal at init; biases only for ``reset="after"``); ``C_r, C_z, C: context_size -> n``
    (no bias) when ``context_size > 0``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        reset: str = "before",
        context_size: int = 0,
        reset_context: bool = False,
    ) -> None:
        super().__init__()
        if reset not in RESET_MODES:
            raise ValueError(f"GRUCell: reset={reset!r}; expected one of {RESET_MODES}")
        if reset_context and context_size == 0:
            raise ValueError("GRUCell: reset_context=True needs context_size > 0")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.context_size, self.reset, self.reset_context = context_size, reset, reset_context
        n, recurrent_bias = hidden_size, reset == "after"
        self.W_r, self.W_z, self.W = (nn.Linear(input_size, n) for _ in range(3))
        self.U_r, self.U_z, self.U = (nn.Linear(n, n, bias=recurrent_bias) for _ in range(3))
        if context_size:
            self.C_r, self.C_z, self.C = (nn.Linear(context_size, n, bias=False) for _ in range(3))
        else:
            self.C_r = self.C_z = self.C = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Plain default (uniform +-1/sqrt(n), as torch.nn.GRU); :mod:`rnnlib.init` applies the
        papers'."""
        bound = self.hidden_size**-0.5
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def recurrent_blocks(self) -> list[torch.Tensor]:
        """``U_r, U_z, U`` (each ``(n, n)``), the recurrent matrices B.1 makes orthogonal."""
        return [self.U_r.weight, self.U_z.weight, self.U.weight]

    def forward(
        self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``x (B, input_size)``, ``h = h_{t-1} (B, n)``, ``c (B, context_size) | None`` ->
        ``h_t (B, n)``."""
        if (c is None) != (self.C is None):
            raise ValueError(
                f"GRUCell: context_size={self.context_size} but c is "
                f"{'None' if c is None else tuple(c.shape)}"
            )
        r = torch.sigmoid(self.W_r(x) + self.U_r(h) + self._context(self.C_r, c))  # A Eq. 5
        z = torch.sigmoid(self.W_z(x) + self.U_z(h) + self._context(self.C_z, c))  # A Eq. 6
        C_c = self._context(self.C, c)
        if self.reset == "before":  # A Eq. 8
            h_tilde = torch.tanh(
                self.W(x) + self.U(r * h) + (r * C_c if self.reset_context else C_c)
            )
        elif self.reset_context:  # A App. A.1.1 as read
            h_tilde = torch.tanh(self.W(x) + r * (self.U(h) + C_c))
        else:  # torch.nn.GRU
            h_tilde = torch.tanh(self.W(x) + r * self.U(h) + C_c)
        return z * h + (1 - z) * h_tilde  # A Eq. 7

    @staticmethod
    def _context(C: nn.Linear | None, c: torch.Tensor | None) -> torch.Tensor | float:
        """``C c``, or 0 for a cell without a context."""
        return 0.0 if c is None else C(c)


class TanhCell(nn.Module):
    """The plain tanh unit (A §2.3): ``h_t = tanh(W x_t + U h_{t-1} [+ C c] + b)``, no gates.

    Linear maps: ``W: input_size -> n`` (its bias is ``b``), ``U: n -> n`` (recurrent, no bias,
    random orthogonal at init), ``C: context_size -> n`` (no bias) when ``context_size > 0``;
    the same names and shapes as the GRU candidate's maps.
    """

    def __init__(self, input_size: int, hidden_size: int, context_size: int = 0) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.context_size = input_size, hidden_size, context_size
        self.W = nn.Linear(input_size, hidden_size)
        self.U = nn.Linear(hidden_size, hidden_size, bias=False)
        self.C = nn.Linear(context_size, hidden_size, bias=False) if context_size else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Plain default (uniform +-1/sqrt(n)); :mod:`rnnlib.init` applies the papers'."""
        bound = self.hidden_size**-0.5
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def recurrent_blocks(self) -> list[torch.Tensor]:
        """``[U]`` (``(n, n)``), the recurrent matrix B.1 makes orthogonal."""
        return [self.U.weight]

    def forward(
        self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``x (B, input_size)``, ``h = h_{t-1} (B, n)``, ``c (B, context_size) | None`` ->
        ``h_t (B, n)``."""
        if (c is None) != (self.C is None):
            raise ValueError(
                f"TanhCell: context_size={self.context_size} but c is "
                f"{'None' if c is None else tuple(c.shape)}"
            )
        return torch.tanh(self.W(x) + self.U(h) + GRUCell._context(self.C, c))  # A §2.3's tanh unit


def _check_unit(where: str, unit: str, reset: str, reset_context: bool) -> None:
    if unit not in UNITS:
        raise ValueError(f"{where}: unit={unit!r}; expected one of {UNITS}")
    if unit == "tanh" and (reset != "before" or reset_context):
        raise ValueError(
            f"{where}: unit='tanh' has no reset gate; reset={reset!r} and "
            f"reset_context={reset_context!r} must stay 'before' and False"
        )


def make_cell(
    unit: str,
    input_size: int,
    hidden_size: int,
    reset: str = "before",
    context_size: int = 0,
    reset_context: bool = False,
) -> GRUCell | TanhCell:
    """The cell ``unit`` names (``ModelConfig.unit``): a :class:`GRUCell`, or a :class:`TanhCell`,
    which has no reset gate and so refuses ``reset="after"`` and ``reset_context=True``."""
    _check_unit("make_cell", unit, reset, reset_context)
    if unit == "gru":
        return GRUCell(input_size, hidden_size, reset, context_size, reset_context)
    return TanhCell(input_size, hidden_size, context_size)


class _Recurrent(nn.Module):
    """A cell (``self.cell``) run over a sequence."""

    cell: nn.Module

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor | None = None, c: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``x (B, T, in)``, ``h0 (B, n)`` (zeros if None, A: h<0> = 0), ``c (B, ctx)`` fixed
        context.

        Returns all states ``(B, T, n)``; ``out[:, t]`` is ``h_{t+1}``.
        """
        B, T, _ = x.shape
        h = x.new_zeros(B, self.cell.hidden_size) if h0 is None else h0
        states = []
        for t in range(T):
            h = self.cell(x[:, t], h, c)
            states.append(h)
        return torch.stack(states, 1) if states else x.new_zeros(B, 0, self.cell.hidden_size)


class GRU(_Recurrent):
    """A :class:`GRUCell` run over a sequence: ``x (B, T, input_size)`` -> states ``(B, T, n)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        reset: str = "before",
        context_size: int = 0,
        reset_context: bool = False,
    ) -> None:
        super().__init__()
        self.cell = GRUCell(input_size, hidden_size, reset, context_size, reset_context)


class TanhRNN(_Recurrent):
    """A :class:`TanhCell` run over a sequence: ``x (B, T, input_size)`` -> states ``(B, T, n)``."""

    def __init__(self, input_size: int, hidden_size: int, context_size: int = 0) -> None:
        super().__init__()
        self.cell = TanhCell(input_size, hidden_size, context_size)


def make_rnn(unit: str, input_size: int, hidden_size: int, reset: str = "before") -> GRU | TanhRNN:
    """The sequence layer of the cell ``unit`` names, without a context (the encoders' layers)."""
    _check_unit("make_rnn", unit, reset, False)
    return (
        GRU(input_size, hidden_size, reset) if unit == "gru" else TanhRNN(input_size, hidden_size)
    )
