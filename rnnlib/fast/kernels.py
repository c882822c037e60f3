"""The fast path of the two translation models: the plain modules' equations, computed faster.

:class:`FastModel` wraps a plain :class:`~rnnlib.models.RNNSearch` or
:class:`~rnnlib.models.RNNEncDec` and offers its interface (``encode``, ``init_state``, ``step``,
``forward``) computed from the SAME parameters: it owns none, so checkpoints, the papers'
initialisation and ``state_dict`` names are the plain modules'. Training and search use it by
default (``TrainConfig.fast``, ``fast=`` of the search functions); ``tests/test_fast.py``
checks that it gives the plain modules' encoder outputs, logits, attention and gradients.
The equations are the plain modules': the gated recurrent unit of A Eqs. (5)-(8) (and A §2.3's
tanh unit), the alignment model and context of B Eqs. (5)-(6), the deep output of B A.2.2.

Tricks (each the same function as the plain modules)
----------------------------------------------------
- Hoisted products: what does not depend on the previous state is computed before the
  recurrent loop, for all steps and the three gates at once: the input projections
  ``[W_r; W_z; W] x + b`` (encoders, teacher forcing: one product over the ``(B, T)`` positions),
  and RNNencdec's context term ``[C_r; C_z; C] c`` (once per sentence, :class:`FastEncoderOut`).
- Both directions: RNNsearch's forward and backward encoder RNNs step together, one batched
  product for both states (:func:`_both_directions`).
- Deep output after the loop: in teacher forcing the deep output and the softmax layer run once
  for all steps after the recurrent loop, on the real (unpadded) target positions only.
- Sigmoid form of the alignment model: ``tanh(u) = 2 sigmoid(2u) - 1``, so
  ``e_ij = (2 v_a)^T sigmoid(2u) - sum(v_a)`` with ``u = W_a s_{i-1} + U_a h_j``: torch's CPU
  ``tanh`` is much slower than its ``sigmoid``, and this ``(B, S, n')`` map is the largest
  element-wise cost of training and search.
- Blocked map in search: without gradients the map is computed :data:`BLOCK` floats (a block of
  rows) at a time, so the sigmoid and the product with ``v_a`` read it while it is in cache
  (:func:`attend`); a whole map at beam 10 is tens of MB.
- Cast once: under autocast (bf16), the matrices every decoder step multiplies are cast once
  per sequence, not at every step.
- Rounded row counts under bf16: the deep output runs on the real target positions plus a few
  repeated rows, a multiple of :data:`OUTPUT_ROWS` in all, so that oneDNN meets few shapes
  (:func:`output_rows`).
- Search's log-softmax overwrites the step's own fp32 logits (:mod:`rnnlib.fast.softmax`).

The plain tanh unit (``ModelConfig.unit="tanh"``, :class:`~rnnlib.gru.TanhCell`) goes through the
same path with one block (``W``, ``C``, ``U``) where the GRU has three (:func:`cell_step`);
the measurements (``BENCHMARKS.md``) are the GRU's.

Measured
--------
Each trick above was kept for a gain of about 5% or more over whole runs, measured by an
interleaved A/B of the trick on against off; the set-up, the figures and the tricks dropped for
paying less are in ``BENCHMARKS.md`` ("Where the speed goes").

Deviations
----------
- none in the function computed: results differ from the plain modules by float rounding
  (summation order), below 1e-6 in fp32 (``tests/test_fast.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..decoders import AttentionDecoder, ContextDecoder
from ..encoders import BiRNNEncoder, EncoderOut, RNNEncoder, check_sources, reverse_padded
from ..gru import GRUCell, TanhCell
from ..models import RNNEncDec, RNNSearch


@dataclass
class FastEncoderOut(EncoderOut):
    """:class:`~rnnlib.encoders.EncoderOut` plus RNNencdec's ``context_proj (B, 3n)``:
    ``[C_r; C_z; C] c`` (tanh unit: ``C c (B, n)``), the decoder's context term, computed once
    per sentence."""

    context_proj: torch.Tensor | None = None


# ---------------------------------------------------------------------------------------------
# the gated recurrent unit with stacked matrices


@dataclass
class Stacked:
    """A :class:`~rnnlib.gru.GRUCell`'s matrices for the fast path (or two cells' along a leading
    axis, :meth:`pair`): the input and context projections of the three gates stacked in the
    order (r, z, candidate), as ``torch.nn.GRU`` stores them, so each is one product;
    the recurrent matrices as printed.

    ``w_in (3n, in)`` = [W_r; W_z; W], ``b_in (3n)``; ``c (3n, ctx)`` = [C_r; C_z; C] or None;
    ``U_r, U_z, U (n, n)`` with their biases ``b_Ur, b_Uz, b_U`` (reset="after"; else None).
    A :class:`~rnnlib.gru.TanhCell` (``unit="tanh"``) has one block: ``w_in (n, in)`` = W,
    ``b_in (n)`` = b, ``c (n, ctx)`` = C or None, ``U (n, n)``, and None for the gates' matrices.
    """

    unit: str
    n: int
    reset: str
    reset_context: bool
    w_in: torch.Tensor
    b_in: torch.Tensor
    c: torch.Tensor | None
    U_r: torch.Tensor
    U_z: torch.Tensor
    U: torch.Tensor
    b_Ur: torch.Tensor | None
    b_Uz: torch.Tensor | None
    b_U: torch.Tensor | None

    @classmethod
    def of(cls, cell: GRUCell | TanhCell) -> "Stacked":
        if isinstance(cell, TanhCell):
            return cls(
                "tanh",
                cell.hidden_size,
                "before",
                False,
                cell.W.weight,
                cell.W.bias,
                _context_matrix(cell),
                None,
                None,
                cell.U.weight,
                None,
                None,
                None,
            )
        gates = (cell.W_r, cell.W_z, cell.W)
        return cls(
            "gru",
            cell.hidden_size,
            cell.reset,
            cell.reset_context,
            torch.cat([m.weight for m in gates]),
            torch.cat([m.bias for m in gates]),
            _context_matrix(cell),
            cell.U_r.weight,
            cell.U_z.weight,
            cell.U.weight,
            cell.U_r.bias,
            cell.U_z.bias,
            cell.U.bias,
        )

    @classmethod
    def pair(cls, a: "Stacked", b: "Stacked") -> "Stacked":
        """Two cells as one: matrices ``(2, rows, cols)``, biases ``(2, 1, rows)``, for
        :func:`cell_step` on states ``(2, B, n)``."""
        mat = lambda x, y: None if x is None else torch.stack([x, y])  # noqa: E731
        vec = lambda x, y: None if x is None else torch.stack([x, y]).unsqueeze(1)  # noqa: E731
        return cls(
            a.unit,
            a.n,
            a.reset,
            a.reset_context,
            mat(a.w_in, b.w_in),
            vec(a.b_in, b.b_in),
            mat(a.c, b.c),
            mat(a.U_r, b.U_r),
            mat(a.U_z, b.U_z),
            mat(a.U, b.U),
            vec(a.b_Ur, b.b_Ur),
            vec(a.b_Uz, b.b_Uz),
            vec(a.b_U, b.b_U),
        )

    def cast(self) -> "Stacked":
        """The matrices every step multiplies in the autocast dtype when autocast is on (cast
        once per sequence)."""
        self.U_r, self.U_z, self.U, self.c = _cast(self.U_r, self.U_z, self.U, self.c)
        return self


def _context_matrix(cell: GRUCell | TanhCell) -> torch.Tensor | None:
    """``[C_r; C_z; C] (3n, ctx)`` of a GRU cell, ``C (n, ctx)`` of a tanh cell, None without a
    context."""
    if cell.C is None:
        return None
    if isinstance(cell, TanhCell):
        return cell.C.weight
    return torch.cat([cell.C_r.weight, cell.C_z.weight, cell.C.weight])


def _cast(*tensors: torch.Tensor | None) -> tuple:
    """``tensors`` in the autocast dtype when autocast is on, else unchanged (autocast itself would
    cast them again at every step: it caches the casts of leaf parameters only, not of stacks)."""
    ref = next(t for t in tensors if t is not None)
    dev = ref.device.type
    if not torch.is_autocast_enabled(dev):
        return tensors
    dt = torch.get_autocast_dtype(dev)
    return tuple(t.to(dt) if t is not None and t.is_floating_point() else t for t in tensors)


def _mm(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """``h W^T (+ b)`` for ``h (B, in)``, ``w (out, in)``, or batched ``h (D, B, in)``,
    ``w (D, out, in)``."""
    if w.dim() == 2:
        return F.linear(h, w, b)
    out = torch.bmm(h, w.transpose(1, 2))
    return out if b is None else out + b


def gru_step(
    w: Stacked, xp: torch.Tensor, h: torch.Tensor, cp: torch.Tensor | None = None
) -> torch.Tensor:
    """One GRU update (A Eqs. 5--8) from projected inputs: ``xp = [W_r; W_z; W] x + b (B, 3n)``,
    ``h (B, n)``, ``cp = [C_r; C_z; C] c (B, 3n) | None`` -> ``(B, n)``. With a
    :meth:`Stacked.pair`, ``xp (2, B, 3n)`` and ``h (2, B, n)``."""
    x_r, x_z, x_n = xp.split(w.n, -1)
    c_n = None
    if cp is not None:
        c_r, c_z, c_n = cp.split(w.n, -1)
        x_r, x_z = x_r + c_r, x_z + c_z
    r = torch.sigmoid(x_r + _mm(h, w.U_r, w.b_Ur))
    z = torch.sigmoid(x_z + _mm(h, w.U_z, w.b_Uz))
    if w.reset == "before":
        pre = x_n + _mm(r * h, w.U)
        if c_n is not None:
            pre = pre + (r * c_n if w.reset_context else c_n)
    elif c_n is not None and w.reset_context:
        pre = x_n + r * (_mm(h, w.U, w.b_U) + c_n)
    else:
        pre = x_n + r * _mm(h, w.U, w.b_U) + (c_n if c_n is not None else 0.0)
    cand = torch.tanh(pre)
    return cand + z * (h - cand)  # = z * h + (1 - z) * cand  (A Eq. 7)


def tanh_step(
    w: Stacked, xp: torch.Tensor, h: torch.Tensor, cp: torch.Tensor | None = None
) -> torch.Tensor:
    """One tanh-unit update (A §2.3, :class:`~rnnlib.gru.TanhCell`) from ``xp = W x + b (B, n)``,
    ``h (B, n)``, ``cp = C c (B, n) | None``: ``tanh(W x + b + U h [+ C c])`` ``(B, n)``; with a
    :meth:`Stacked.pair`, ``xp`` and ``h`` are ``(2, B, n)``."""
    pre = xp + _mm(h, w.U)
    return torch.tanh(pre if cp is None else pre + cp)


def cell_step(
    w: Stacked, xp: torch.Tensor, h: torch.Tensor, cp: torch.Tensor | None = None
) -> torch.Tensor:
    """:func:`gru_step` or :func:`tanh_step`, as ``w.unit`` says."""
    return (tanh_step if w.unit == "tanh" else gru_step)(w, xp, h, cp)


def gru_sequence(w: Stacked, x: torch.Tensor) -> torch.Tensor:
    """States ``(B, T, n)`` of a GRU (or tanh unit) from ``h_0 = 0`` over ``x (B, T, in)`` (no
    context)."""
    B, T, _ = x.shape
    h, outs = x.new_zeros(B, w.n), []
    for x_t in F.linear(x, w.w_in, w.b_in).unbind(1):  # W x + b for all steps at once
        h = cell_step(w, x_t, h)
        outs.append(h)
    return torch.stack(outs, 1) if outs else x.new_zeros(B, 0, w.n)


# ---------------------------------------------------------------------------------------------
# encoders


def birnn(
    enc: BiRNNEncoder, src: torch.Tensor, src_mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """:meth:`BiRNNEncoder.forward <rnnlib.encoders.BiRNNEncoder.forward>`:
    ``(annotations (B, S, 2n), <-h_1 (B, n))``."""
    lengths = check_sources(src, src_mask)
    fwd, bwd = _both_directions(
        Stacked.pair(Stacked.of(enc.fwd.cell), Stacked.of(enc.bwd.cell)), enc.embed(src), lengths
    )
    ann = torch.cat([fwd, bwd], -1) * src_mask.unsqueeze(-1).to(fwd.dtype)
    return ann, bwd[:, 0]


def _both_directions(
    w: Stacked, x: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``->h (B, S, n)`` and ``<-h (B, S, n)`` (in source order), both RNNs stepping together."""
    B, S, _ = x.shape
    n = w.n
    rows = w.w_in.shape[1]  # 3n (GRU) or n (tanh)
    xf, xb = F.linear(x, w.w_in.flatten(0, 1), w.b_in.flatten()).split(
        rows, -1
    )  # both directions' W x + b
    xs = torch.stack(
        [xf, reverse_padded(xb, lengths)]
    )  # (2, B, S, rows), backward reversed in length
    h, outs = x.new_zeros(2, B, n), []
    for x_t in xs.unbind(2):
        h = cell_step(w, x_t, h)
        outs.append(h)
    H = torch.stack(outs, 2) if outs else x.new_zeros(2, B, 0, n)
    return H[0], reverse_padded(H[1], lengths)


def rnn(
    enc: RNNEncoder, src: torch.Tensor, src_mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """:meth:`RNNEncoder.forward <rnnlib.encoders.RNNEncoder.forward>`:
    ``(states (B, S, n), c (B, n))``."""
    lengths = check_sources(src, src_mask)
    states = gru_sequence(Stacked.of(enc.rnn.cell), enc.embed(src))
    states = states * src_mask.unsqueeze(-1).to(states.dtype)
    last = states[torch.arange(src.shape[0], device=src.device), lengths - 1]
    return states, torch.tanh(enc.V(last))


# ---------------------------------------------------------------------------------------------
# the alignment model

#: floats of the (rows, S, n') attention map computed at once without gradients (2 MiB)
BLOCK = 1 << 19


def attend(
    query: torch.Tensor,
    keys: torch.Tensor,
    annotations: torch.Tensor,
    mask: torch.Tensor,
    v_a: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """B Eqs. 5--6 from ``query = W_a s_{i-1} (B, n')`` and ``keys = U_a h_j (B, S, n')``, in the
    sigmoid form: ``(context (B, 2n), alpha (B, S))``."""
    # v_a^T tanh(u) = (2 v_a)^T sigmoid(2u) - sum(v_a)
    q, v2 = query.unsqueeze(1), 2 * v_a
    if torch.is_grad_enabled():
        energy = (keys + q).mul_(2).sigmoid_() @ v2
    else:  # search: a block of rows at a time, read while it is in cache
        rows = max(1, BLOCK // max(1, keys.shape[1] * keys.shape[2]))
        energy = torch.cat(
            [(k + qq).mul_(2).sigmoid_() @ v2 for k, qq in zip(keys.split(rows), q.split(rows))]
        )
    energy = (energy - v_a.sum()).masked_fill(~mask, torch.finfo(energy.dtype).min)  # (B, S)
    alpha = torch.softmax(energy, dim=-1)
    context = torch.bmm(alpha.unsqueeze(1).to(annotations.dtype), annotations).squeeze(1)
    return context, alpha


# ---------------------------------------------------------------------------------------------
# decoders


@dataclass
class _DecoderWeights:
    """What every decoder step multiplies, taken (and under autocast cast) once per sequence."""

    cell: Stacked
    W_a: torch.Tensor | None = None
    v_a: torch.Tensor | None = None


def _decoder_weights(dec: nn.Module) -> _DecoderWeights:
    cell = Stacked.of(dec.cell).cast()
    if isinstance(dec, AttentionDecoder):
        return _DecoderWeights(cell, *_cast(dec.attention.W_a.weight, dec.attention.v_a))
    return _DecoderWeights(cell)


def _advance(
    w: _DecoderWeights,
    xp: torch.Tensor,
    s: torch.Tensor,
    enc: EncoderOut,
    annotations: torch.Tensor,
):
    """``s_i``, ``c_i``, ``alpha_i`` from ``W x_i + b (B, 3n)`` (tanh: ``(B, n)``) and
    ``s_{i-1} (B, n)`` (B A.2.2, Eqs. 5--6)."""
    c, alpha = attend(F.linear(s, w.W_a), enc.keys, annotations, enc.mask, w.v_a)
    return cell_step(w.cell, xp, s, F.linear(c, w.cell.c)), c, alpha


def _attention_forward(
    dec: AttentionDecoder, enc: EncoderOut, tgt_in: torch.Tensor, out_mask: torch.Tensor | None
):
    w = _decoder_weights(dec)
    e = dec.embed_prev(tgt_in)
    s = dec.init_state(enc)
    (ann,) = _cast(enc.annotations)
    states, contexts, alphas = [], [], []
    for x_i in F.linear(e, w.cell.w_in, w.cell.b_in).unbind(1):  # W E y_{i-1} for all steps at once
        new, c, alpha = _advance(w, x_i, s, enc, ann)
        states.append(new if dec.use_current else s)
        contexts.append(c)
        alphas.append(alpha)
        s = new
    return _output(dec, torch.stack(states, 1), e, torch.stack(contexts, 1), out_mask), torch.stack(
        alphas, 1
    )


def _context_forward(
    dec: ContextDecoder, enc: FastEncoderOut, tgt_in: torch.Tensor, out_mask: torch.Tensor | None
):
    w = _decoder_weights(dec)
    e = dec.embed_prev(tgt_in)
    s = dec.init_state(enc)
    cp, states = _context_proj(dec, enc), []
    for x_i in F.linear(e, w.cell.w_in, w.cell.b_in).unbind(1):
        new = cell_step(w.cell, x_i, s, cp)
        states.append(new if dec.use_current else s)
        s = new
    c = enc.context.unsqueeze(1).expand(-1, tgt_in.shape[1], -1)
    return _output(dec, torch.stack(states, 1), e, c, out_mask), None


#: Under autocast on the CPU, the deep output runs on a row count rounded up to a multiple of
#: this (:func:`output_rows`).
OUTPUT_ROWS = 64


def output_rows(n: int, device: torch.device) -> int:
    """The row count the deep output runs on for ``n`` selected positions: ``n``, or under
    autocast on the CPU ``n`` rounded up to a multiple of :data:`OUTPUT_ROWS`.

    Why: under bf16 autocast the CPU's matrix products go through oneDNN, which compiles a
    primitive for each shape it meets. A bf16 training update of the ``cpu`` RNNsearch makes
    36 of them, 12 of whose shapes depend on the count of real target tokens, a different count
    at almost every update; so the output layer met new shapes all the time, paid for compiling
    them and grew the process (measured in ``BENCHMARKS.md``, section "oneDNN's primitive cache
    under bf16"). Rounded up, the count takes a few dozen values. The extra
    rows repeat the first one and are dropped before the loss, so each real position's logits
    are computed from its own row as before (equal up to bf16 rounding, ``tests/test_fast.py``).
    """
    if device.type != "cpu" or not torch.is_autocast_enabled("cpu"):
        return n
    return -(-n // OUTPUT_ROWS) * OUTPUT_ROWS


def _output(dec, states, e, contexts, out_mask):
    """The deep output of all steps at once from ``states (B, T, n)``, ``e (B, T, m)`` and
    ``contexts (B, T, c)`` (RNNencdec: an expanded view): with ``out_mask (B, T) bool`` the
    logits of the selected positions, ``(N, K)`` with ``N = out_mask.sum()``, computed on
    :func:`output_rows` rows; without, ``(B, T, K)``."""
    if out_mask is None:
        return dec.output(states, e, contexts)
    states, e, contexts = states[out_mask], e[out_mask], contexts[out_mask]
    n = states.shape[0]
    extra = output_rows(n, states.device) - n
    if extra == 0:
        return dec.output(states, e, contexts)
    states, e, contexts = (torch.cat([t, t[:1].expand(extra, -1)]) for t in (states, e, contexts))
    return dec.output(states, e, contexts)[:n]


def _context_proj(dec: ContextDecoder, enc: EncoderOut) -> torch.Tensor:
    """``[C_r; C_z; C] c (B, 3n)`` (tanh unit: ``C c (B, n)``) of ``enc`` (computed if ``enc`` is a
    plain EncoderOut)."""
    cp = getattr(enc, "context_proj", None)
    if cp is not None:
        return cp
    return F.linear(enc.context, _context_matrix(dec.cell))


# ---------------------------------------------------------------------------------------------
# the model


class FastModel(nn.Module):
    """``model``'s interface, computed by the fast path from ``model``'s own parameters.

    ``model``: a plain :class:`~rnnlib.models.RNNSearch` or :class:`~rnnlib.models.RNNEncDec`
    (the only submodule: ``parameters()`` are ``model``'s). Its train/eval mode is ``model``'s.
    """

    supports_out_mask = True

    def __init__(self, model: nn.Module) -> None:
        if not isinstance(model, (RNNSearch, RNNEncDec)):
            raise TypeError(
                f"FastModel: expected an RNNSearch or RNNEncDec, got {type(model).__name__}"
            )
        super().__init__()
        self.model = model
        self.config = model.config

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> EncoderOut:
        """As the model's ``encode`` (RNNencdec's also carries ``[C_r; C_z; C] c``:
        :class:`FastEncoderOut`)."""
        m = self.model
        if isinstance(m, RNNSearch):
            ann, first_backward = birnn(m.encoder, src, src_mask)
            return EncoderOut(
                annotations=ann,
                mask=src_mask,
                init=first_backward,
                keys=m.decoder.attention.precompute(ann),
            )
        states, c = rnn(m.encoder, src, src_mask)
        enc = FastEncoderOut(annotations=states, mask=src_mask, init=c, context=c)
        enc.context_proj = _context_proj(m.decoder, enc)
        return enc

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        return self.model.init_state(enc)

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: EncoderOut):
        """One decoder step, as :meth:`rnnlib.decoders.AttentionDecoder.step`."""
        dec = self.model.decoder
        w = _decoder_weights(dec)
        e = dec.embed_prev(prev_word)
        xp = F.linear(e, w.cell.w_in, w.cell.b_in)
        if isinstance(dec, AttentionDecoder):
            new, c, alpha = _advance(w, xp, state, enc, enc.annotations)
        else:
            new, c, alpha = cell_step(w.cell, xp, state, _context_proj(dec, enc)), enc.context, None
        return dec.output(new if dec.use_current else state, e, c), new, alpha

    def forward(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor,
        tgt_in: torch.Tensor,
        return_attention: bool = False,
        out_mask: torch.Tensor | None = None,
    ):
        """As :meth:`rnnlib.models.RNNSearch.forward`: teacher-forced ``logits (B, T, K)`` [and
        attention], or ``(N, K)`` for the positions ``out_mask (B, T)`` selects."""
        enc = self.encode(src, src_mask)
        dec = self.model.decoder
        run = _attention_forward if isinstance(dec, AttentionDecoder) else _context_forward
        logits, attention = run(dec, enc, tgt_in, out_mask)
        return (logits, attention) if return_attention else logits


def wrap(model: nn.Module) -> nn.Module:
    """The fast path of ``model``: a :class:`FastModel` for a plain RNNSearch/RNNEncDec; any
    other module (a FastModel already, a DistributedDataParallel wrapper, another model) as is."""
    return FastModel(model) if isinstance(model, (RNNSearch, RNNEncDec)) else model
