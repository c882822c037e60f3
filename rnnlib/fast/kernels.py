"""The fast path of the two translation models: the plain modules' equations, computed faster.

:class:`FastModel` wraps a plain :class:`~rnnlib.models.RNNSearch` or
:class:`~rnnlib.models.RNNEncDec` and offers its interface (``encode``, ``init_state``, ``step``,
``forward``) computed from the SAME parameters: it owns none, so checkpoints, the papers'
initialisation and ``state_dict`` names are the plain modules'. Training and search use it by
default (``TrainConfig.fast``, ``fast=`` of the search functions); ``tests/test_fast.py``
checks that it gives the plain modules' logits, attention, encoder outputs and gradients.

Tricks (each the same function as the plain modules)
----------------------------------------------------
- GRU: the three gate matrices of a unit are stacked (r, z, candidate), as ``torch.nn.GRU``
  stores them, once per forward; the input projections ``W x + b`` of all steps are one product
  before the recurrent loop (:func:`gru_sequence`, the decoders' teacher forcing).
- Encoder: RNNsearch's forward and backward RNNs step together, one batched product for both
  states (:func:`_both_directions`); a unit with reset="after" and no context is exactly
  ``torch.nn.GRU``'s and runs ``torch.gru``'s fused kernel.
- Decoder step: ``s_{i-1}`` is multiplied by the stacked ``[2 W_a; U_r; U_z]`` in one product (the
  alignment model's query and the gates' recurrent terms); RNNencdec's ``[C_r; C_z; C] c`` is
  computed once per sentence; during search the stacked matrices are reused from step to step
  until a parameter changes.
- Alignment model: ``tanh(u) = 2 sigmoid(2u) - 1``, so ``e_ij = (2 v_a)^T sigmoid(2u) - sum(v_a)``:
  torch's CPU ``tanh`` is much slower than its ``sigmoid``, and this ``(B, S, n')`` map is the
  largest element-wise cost of training and search. The factor 2 is carried by the operands:
  the keys are ``2 U_a h_j`` (:class:`FastEncoderOut`) and the query ``2 W_a s_{i-1}``, so no pass
  over the map multiplies it (doubling is exact in floating point). Without gradients (search)
  the map is computed a block of rows at a time (:data:`BLOCK`), so the addition, the sigmoid
  and the product with ``v_a`` read it while it is in cache.
- Teacher forcing: the deep output and the softmax layer run once for all steps after the
  recurrent loop, on the real (unpadded) target positions only.
- Under autocast, the matrices every step multiplies are cast once per sequence.

Measured with interleaved A/B runs of whole training and beam-search runs: see "Measured".

Measured
--------
MEASURED_PLACEHOLDER

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
from ..encoders import BiRNNEncoder, EncoderOut, RNNEncoder, _check, reverse_padded
from ..gru import GRUCell
from ..models import RNNEncDec, RNNSearch

# measurement switches for the interleaved A/B runs (removed once the figures are in)
TRICKS = {"fused_gru": True, "both_directions": True, "stacked_query": True, "sigmoid": True,
          "blocked": True, "cast_once": True, "hoist_input": True, "output_after_loop": True,
          "cache_weights": True}

#: floats of the (rows, S, n') attention map computed at once without gradients (2 MiB)
BLOCK = 1 << 19


@dataclass
class FastEncoderOut(EncoderOut):
    """:class:`~rnnlib.encoders.EncoderOut` plus what the fast decoder step reuses.

    ``keys2 (B, S, n')``: ``2 U_a h_j`` (RNNsearch; the factor of the sigmoid form below);
    ``context_proj (B, 3n)``: ``[C_r; C_z; C] c``, the decoder's context term (RNNencdec).
    """

    keys2: torch.Tensor | None = None
    context_proj: torch.Tensor | None = None


# ---------------------------------------------------------------------------------------------
# the gated recurrent unit with stacked matrices

@dataclass
class Stacked:
    """A :class:`~rnnlib.gru.GRUCell`'s matrices stacked in the order (r, z, candidate), as
    ``torch.nn.GRU`` stores them (or ``D`` cells' stacks along a leading axis).

    ``w_in (3n, in)`` = [W_r; W_z; W] and ``b_in (3n)``; ``u_gates``: the recurrent rows taken
    before the reset gate, ``[U_r; U_z] (2n, n)`` for reset="before", ``[U_r; U_z; U] (3n, n)`` for
    "after" (then with ``b_u (3n)``); ``u_cand``: ``U (n, n)`` for reset="before"; ``c (3n, ctx)``.
    """

    n: int
    reset: str
    reset_context: bool
    w_in: torch.Tensor
    b_in: torch.Tensor
    u_gates: torch.Tensor
    u_cand: torch.Tensor | None
    b_u: torch.Tensor | None
    c: torch.Tensor | None

    @classmethod
    def of(cls, cell: GRUCell) -> "Stacked":
        cat = lambda *maps: torch.cat([m.weight for m in maps])  # noqa: E731
        before = cell.reset == "before"
        return cls(cell.hidden_size, cell.reset, cell.reset_context,
                   cat(cell.W_r, cell.W_z, cell.W), torch.cat([cell.W_r.bias, cell.W_z.bias, cell.W.bias]),
                   cat(cell.U_r, cell.U_z) if before else cat(cell.U_r, cell.U_z, cell.U),
                   cell.U.weight if before else None,
                   None if before else torch.cat([cell.U_r.bias, cell.U_z.bias, cell.U.bias]),
                   cat(cell.C_r, cell.C_z, cell.C) if cell.C is not None else None)

    @classmethod
    def pair(cls, a: "Stacked", b: "Stacked") -> "Stacked":
        """Two cells' stacks as one ``(2, rows, cols)`` stack (biases ``(2, 1, rows)``) for :func:`gru_step`."""
        st = lambda x, y: None if x is None else torch.stack([x, y])  # noqa: E731
        b_u = st(a.b_u, b.b_u)
        return cls(a.n, a.reset, a.reset_context, st(a.w_in, b.w_in), st(a.b_in, b.b_in).unsqueeze(1),
                   st(a.u_gates, b.u_gates), st(a.u_cand, b.u_cand),
                   None if b_u is None else b_u.unsqueeze(1), st(a.c, b.c))


def _mm(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """``h W^T (+ b)`` for ``h (B, in)``, ``w (out, in)``, or batched ``h (D, B, in)``, ``w (D, out, in)``."""
    if w.dim() == 2:
        return F.linear(h, w, b)
    out = torch.bmm(h, w.transpose(1, 2))
    return out if b is None else out + b


def gru_step(w: Stacked, xp: torch.Tensor, h: torch.Tensor, cp: torch.Tensor | None = None,
             hp: torch.Tensor | None = None) -> torch.Tensor:
    """One GRU update (A Eqs. 5--8) from projected inputs: ``xp = W x + b (B, 3n)``, ``h (B, n)``,
    ``cp = C c (B, 3n) | None`` -> ``(B, n)``; ``hp``: the product with ``u_gates`` (``+ b_u``) if
    the caller computed it. With a :meth:`Stacked.pair`, ``xp (2, B, 3n)`` and ``h (2, B, n)``."""
    n = w.n
    x_r, x_z, x_n = xp.split(n, -1)
    c_n = None
    if cp is not None:
        c_r, c_z, c_n = cp.split(n, -1)
        x_r, x_z = x_r + c_r, x_z + c_z
    if hp is None:
        hp = _mm(h, w.u_gates, w.b_u)
    if w.reset == "before":
        u_r, u_z = hp.split(n, -1)
        r = torch.sigmoid(x_r + u_r)
        z = torch.sigmoid(x_z + u_z)
        pre = x_n + _mm(r * h, w.u_cand)
        if c_n is not None:
            pre = pre + (r * c_n if w.reset_context else c_n)
    else:
        u_r, u_z, u_n = hp.split(n, -1)
        r = torch.sigmoid(x_r + u_r)
        z = torch.sigmoid(x_z + u_z)
        if c_n is not None and w.reset_context:
            pre = x_n + r * (u_n + c_n)
        else:
            pre = x_n + r * u_n + (c_n if c_n is not None else 0.0)
    cand = torch.tanh(pre)
    return cand + z * (h - cand)  # = z * h + (1 - z) * cand  (A Eq. 7)


def gru_sequence(w: Stacked, x: torch.Tensor, training: bool) -> torch.Tensor:
    """States ``(B, T, n)`` of a GRU from ``h_0 = 0`` over ``x (B, T, in)`` (no context)."""
    B, T, _ = x.shape
    h0 = x.new_zeros(B, w.n)
    if w.reset == "after" and TRICKS["fused_gru"]:  # torch.nn.GRU's unit: its fused kernel
        params = [w.w_in, w.u_gates, w.b_in, w.b_u]
        return torch.gru(x, h0.unsqueeze(0), params, True, 1, 0.0, training, False, True)[0]
    outs, h = [], h0
    if TRICKS["hoist_input"]:
        for x_t in F.linear(x, w.w_in, w.b_in).unbind(1):
            h = gru_step(w, x_t, h)
            outs.append(h)
    else:
        for x_t in x.unbind(1):
            h = gru_step(w, F.linear(x_t, w.w_in, w.b_in), h)
            outs.append(h)
    return torch.stack(outs, 1) if outs else x.new_zeros(B, 0, w.n)


# ---------------------------------------------------------------------------------------------
# encoders

def birnn(enc: BiRNNEncoder, src: torch.Tensor, src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:meth:`BiRNNEncoder.forward <rnnlib.encoders.BiRNNEncoder.forward>`: ``(annotations (B, S, 2n), <-h_1 (B, n))``."""
    lengths = _check(src, src_mask)
    x = enc.embed(src)
    f, b = Stacked.of(enc.fwd.cell), Stacked.of(enc.bwd.cell)
    if TRICKS["both_directions"] and not (f.reset == "after" and TRICKS["fused_gru"]):
        fwd, bwd = _both_directions(Stacked.pair(f, b), x, lengths)
    else:
        fwd = gru_sequence(f, x, enc.training)
        bwd = reverse_padded(gru_sequence(b, reverse_padded(x, lengths), enc.training), lengths)
    ann = torch.cat([fwd, bwd], -1) * src_mask.unsqueeze(-1).to(fwd.dtype)
    return ann, bwd[:, 0]


def _both_directions(w: Stacked, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``->h (B, S, n)`` and ``<-h (B, S, n)`` (in source order), both RNNs stepping together."""
    B, S, _ = x.shape
    n = w.n
    xf, xb = F.linear(x, w.w_in.flatten(0, 1), w.b_in.flatten()).split(3 * n, -1)
    xs = torch.stack([xf, reverse_padded(xb, lengths)])  # (2, B, S, 3n), backward reversed in length
    h, outs = x.new_zeros(2, B, n), []
    for x_t in xs.unbind(2):
        h = gru_step(w, x_t, h)
        outs.append(h)
    H = torch.stack(outs, 2) if outs else x.new_zeros(2, B, 0, n)
    return H[0], reverse_padded(H[1], lengths)


def rnn(enc: RNNEncoder, src: torch.Tensor, src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:meth:`RNNEncoder.forward <rnnlib.encoders.RNNEncoder.forward>`: ``(states (B, S, n), c (B, n))``."""
    lengths = _check(src, src_mask)
    states = gru_sequence(Stacked.of(enc.rnn.cell), enc.embed(src), enc.training)
    states = states * src_mask.unsqueeze(-1).to(states.dtype)
    last = states[torch.arange(src.shape[0], device=src.device), lengths - 1]
    return states, torch.tanh(enc.V(last))


# ---------------------------------------------------------------------------------------------
# the alignment model

def attend(query: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor, mask: torch.Tensor,
           v_a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """B Eqs. 5--6 from ``query = 2 W_a s_{i-1} (B, n')`` and ``keys = 2 U_a h_j (B, S, n')``
    (see "Tricks"): ``(context (B, 2n), alpha (B, S))``."""
    q = query.unsqueeze(1)
    if TRICKS["sigmoid"]:
        # v_a^T tanh(u) = (2 v_a)^T sigmoid(2u) - sum(v_a), 2u = 2 W_a s_{i-1} + 2 U_a h_j
        v2, act, shift = 2 * v_a, torch.sigmoid, v_a.sum()
    else:
        v2, act, shift = v_a, torch.tanh, 0.0
    if not TRICKS["blocked"] or (torch.is_grad_enabled() and (keys.requires_grad or q.requires_grad or v2.requires_grad)):
        energy = act(keys + q) @ v2
    else:
        rows = max(1, BLOCK // max(1, keys.shape[1] * keys.shape[2]))
        energy = torch.cat([act(k + qq) @ v2 for k, qq in zip(keys.split(rows), q.split(rows))])
    energy = (energy - shift).masked_fill(~mask, torch.finfo(energy.dtype).min)  # (B, S)
    alpha = torch.softmax(energy, dim=-1)
    context = torch.bmm(alpha.unsqueeze(1).to(annotations.dtype), annotations).squeeze(1)
    return context, alpha


def _key_scale() -> float:
    return 2.0 if TRICKS["sigmoid"] else 1.0


# ---------------------------------------------------------------------------------------------
# decoders

def _cast(*tensors: torch.Tensor | None) -> tuple:
    """``tensors`` in the autocast dtype when autocast is on (so loops do not cast them at every step)."""
    if not TRICKS["cast_once"]:
        return tensors
    ref = next(t for t in tensors if t is not None)
    dev = ref.device.type
    if not torch.is_autocast_enabled(dev):
        return tensors
    dt = torch.get_autocast_dtype(dev)
    return tuple(t.to(dt) if t is not None and t.is_floating_point() else t for t in tensors)


@dataclass
class _DecoderWeights:
    """What every decoder step multiplies, taken once per sequence (or per search)."""

    cell: Stacked
    query: torch.Tensor | None = None  # [2 W_a; u_gates] (RNNsearch)
    w_a: torch.Tensor | None = None
    v_a: torch.Tensor | None = None


def decoder_weights(dec: nn.Module) -> _DecoderWeights:
    cell = Stacked.of(dec.cell)
    if not isinstance(dec, AttentionDecoder):
        cell.u_gates, cell.u_cand = _cast(cell.u_gates, cell.u_cand)
        return _DecoderWeights(cell)
    w_a = _key_scale() * dec.attention.W_a.weight
    query = torch.cat([w_a, cell.u_gates]) if TRICKS["stacked_query"] else None
    query, w_a, cell.u_gates, cell.u_cand, cell.c, v_a = _cast(query, w_a, cell.u_gates, cell.u_cand,
                                                                cell.c, dec.attention.v_a)
    return _DecoderWeights(cell, query, w_a, v_a)


def _advance(dec: AttentionDecoder, w: _DecoderWeights, xp: torch.Tensor, s: torch.Tensor,
             keys: torch.Tensor, annotations: torch.Tensor, mask: torch.Tensor):
    """``s_i``, ``c_i``, ``alpha_i`` from ``W x_i + b (B, 3n)`` and ``s_{i-1} (B, n)`` (B A.2.2, Eqs. 5--6)."""
    cell = w.cell
    if w.query is not None:  # [2 W_a s; U_r s; U_z s] in one product
        q, hp = F.linear(s, w.query).split([w.w_a.shape[0], cell.u_gates.shape[0]], -1)
        if cell.b_u is not None:
            hp = hp + cell.b_u
    else:
        q, hp = F.linear(s, w.w_a), None
    c, alpha = attend(q, keys, annotations, mask, w.v_a)
    new = gru_step(cell, xp, s, F.linear(c, cell.c), hp=hp)
    return new, c, alpha


def _attention_forward(dec: AttentionDecoder, enc: FastEncoderOut, tgt_in: torch.Tensor,
                       out_mask: torch.Tensor | None, w: _DecoderWeights):
    e = dec.embed_prev(tgt_in)
    xp = F.linear(e, w.cell.w_in, w.cell.b_in) if TRICKS["hoist_input"] else None  # W E y_{i-1} for all steps at once
    s = dec.init_state(enc)
    (ann,) = _cast(enc.annotations)
    states, contexts, alphas, logits = [], [], [], []
    for i in range(tgt_in.shape[1]):
        x_i = xp[:, i] if xp is not None else F.linear(e[:, i], w.cell.w_in, w.cell.b_in)
        new, c, alpha = _advance(dec, w, x_i, s, enc.keys2, ann, enc.mask)
        if TRICKS["output_after_loop"]:
            states.append(new if dec.use_current else s)
            contexts.append(c)
        else:
            logits.append(dec.output(new if dec.use_current else s, e[:, i], c))
        alphas.append(alpha)
        s = new
    if TRICKS["output_after_loop"]:
        logits = _output(dec, torch.stack(states, 1), e, torch.stack(contexts, 1), out_mask)
    else:
        logits = torch.stack(logits, 1)
        logits = logits[out_mask] if out_mask is not None else logits
    return logits, torch.stack(alphas, 1)


def _context_forward(dec: ContextDecoder, enc: FastEncoderOut, tgt_in: torch.Tensor,
                     out_mask: torch.Tensor | None, w: _DecoderWeights):
    e = dec.embed_prev(tgt_in)
    xp = F.linear(e, w.cell.w_in, w.cell.b_in) if TRICKS["hoist_input"] else None
    s = dec.init_state(enc)
    states, logits = [], []
    for i in range(tgt_in.shape[1]):
        x_i = xp[:, i] if xp is not None else F.linear(e[:, i], w.cell.w_in, w.cell.b_in)
        new = gru_step(w.cell, x_i, s, enc.context_proj)
        if TRICKS["output_after_loop"]:
            states.append(new if dec.use_current else s)
        else:
            logits.append(dec.output(new if dec.use_current else s, e[:, i], enc.context))
        s = new
    if TRICKS["output_after_loop"]:
        c = enc.context.unsqueeze(1).expand(-1, tgt_in.shape[1], -1)
        return _output(dec, torch.stack(states, 1), e, c, out_mask), None
    logits = torch.stack(logits, 1)
    return (logits[out_mask] if out_mask is not None else logits), None


def _output(dec, states, e, contexts, out_mask):
    """The deep output of all steps at once, on the rows ``out_mask (B, T)`` selects (all if None)."""
    if out_mask is not None:
        states, e, contexts = states[out_mask], e[out_mask], contexts[out_mask]
    return dec.output(states, e, contexts)


def _keys(enc: EncoderOut) -> torch.Tensor:
    """``2 U_a h_j`` of ``enc`` (computed from a plain EncoderOut's ``U_a h_j`` if need be)."""
    keys2 = getattr(enc, "keys2", None)
    return keys2 if keys2 is not None else _key_scale() * enc.keys


def _context_proj(dec: ContextDecoder, enc: EncoderOut) -> torch.Tensor:
    """``[C_r; C_z; C] c (B, 3n)`` of ``enc`` (once per sentence; computed if ``enc`` lacks it)."""
    cp = getattr(enc, "context_proj", None)
    if cp is not None:
        return cp
    cell = dec.cell
    return F.linear(enc.context, torch.cat([cell.C_r.weight, cell.C_z.weight, cell.C.weight]))


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
            raise TypeError(f"FastModel: expected an RNNSearch or RNNEncDec, got {type(model).__name__}")
        super().__init__()
        self.model = model
        self.config = model.config
        self._cache: tuple | None = None

    def _decoder_weights(self) -> _DecoderWeights:
        """Stacked decoder weights: fresh under autograd; reused by later search steps until a
        parameter changes (every in-place update bumps its version counter)."""
        if torch.is_grad_enabled() or not TRICKS["cache_weights"]:
            return decoder_weights(self.model.decoder)
        dev = self.model.decoder.cell.W.weight.device.type
        key = (tuple(p._version for p in self.model.decoder.parameters()),
               torch.is_autocast_enabled(dev) and torch.get_autocast_dtype(dev))
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, decoder_weights(self.model.decoder))
        return self._cache[1]

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> FastEncoderOut:
        m = self.model
        if isinstance(m, RNNSearch):
            ann, first_backward = birnn(m.encoder, src, src_mask)
            keys = F.linear(ann, _key_scale() * m.decoder.attention.U_a.weight,
                            _key_scale() * m.decoder.attention.U_a.bias)
            return FastEncoderOut(annotations=ann, mask=src_mask, init=first_backward, keys2=keys)
        states, c = rnn(m.encoder, src, src_mask)
        enc = FastEncoderOut(annotations=states, mask=src_mask, init=c, context=c)
        enc.context_proj = _context_proj(m.decoder, enc)
        return enc

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        return self.model.init_state(enc)

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: FastEncoderOut):
        """One decoder step (see :meth:`rnnlib.decoders.AttentionDecoder.step`) on an ``enc`` from :meth:`encode`."""
        dec, w = self.model.decoder, self._decoder_weights()
        e = dec.embed_prev(prev_word)
        xp = F.linear(e, w.cell.w_in, w.cell.b_in)
        if isinstance(dec, AttentionDecoder):
            new, c, alpha = _advance(dec, w, xp, state, _keys(enc), enc.annotations, enc.mask)
        else:
            new, c, alpha = gru_step(w.cell, xp, state, _context_proj(dec, enc)), enc.context, None
        return dec.output(new if dec.use_current else state, e, c), new, alpha

    def forward(self, src: torch.Tensor, src_mask: torch.Tensor, tgt_in: torch.Tensor,
                return_attention: bool = False, out_mask: torch.Tensor | None = None):
        """As :meth:`rnnlib.models.RNNSearch.forward`: teacher-forced ``logits (B, T, K)`` [and
        attention], or ``(N, K)`` for the positions ``out_mask (B, T)`` selects."""
        enc = self.encode(src, src_mask)
        dec = self.model.decoder
        run = _attention_forward if isinstance(dec, AttentionDecoder) else _context_forward
        logits, attention = run(dec, enc, tgt_in, out_mask, decoder_weights(dec))
        return (logits, attention) if return_attention else logits


def wrap(model: nn.Module) -> nn.Module:
    """The fast path of ``model``: a :class:`FastModel` for a plain RNNSearch/RNNEncDec; any
    other module (a FastModel already, a DistributedDataParallel wrapper, another model) as is."""
    return FastModel(model) if isinstance(model, (RNNSearch, RNNEncDec)) else model
