"""Search and scoring, all through the model's one decoder ``step``.

* :func:`greedy` -- the most probable word at every step.
* :func:`beam_search` -- batched over sentences AND beams (one ``step`` call per time step for
  the whole batch); the n-best with their scores and attention.
* :func:`sample` -- ancestral samples (A Table 3 draws 50 per source phrase).
* :func:`score` -- teacher-forced ``log p(y | x)`` of given pairs (A's phrase-table feature).

Every function takes ``src (B, S) int64`` + ``src_mask (B, S) bool`` or a
:class:`~rnnlib.batch.Batch`, whose every source ends in ``EOS`` (as
:func:`rnnlib.batch.source_batch` builds them; anything else is an error), runs the model in
eval mode without gradients (restoring its mode afterwards), and returns, per sentence,
:class:`Hypothesis` objects whose ``tokens`` exclude ``BOS`` and ``EOS`` and whose ``score`` is
``sum_i log p(y_i | y_<i, x)`` including the final ``EOS``. Each computes the model through
its fast path (:mod:`rnnlib.fast`: the same numbers up to float rounding, tested in
``tests/test_fast.py``) unless given ``fast=False``, which runs the plain modules.

``max_len`` bounds the tokens before ``EOS``; a hypothesis that reaches it must end with ``EOS``
at the next step. By default it is ``3 L - 1`` for a source of ``L`` tokens counting its
``EOS`` (``L = S_words + 1``): at most ``3 L`` decoder steps, the limit of the papers'
implementation (GroundHog's beam search runs ``3 * len(source)`` steps over the source with its
end-of-sentence token). A callable ``max_len`` receives these ``L`` too. ``min_len`` (default
``None``: no minimum; an int, such a callable, or the name of one in :data:`MIN_LENS`) forbids
``EOS`` before that many tokens; :func:`groundhog_min_len` (``"groundhog"``) is the papers'
implementation's ``L // 2``. Where the two conflict,
``max_len`` wins.

Beam search follows the procedure of the papers' implementation (GroundHog): at every step
each sentence keeps the best ``K - f`` live expansions, where ``f`` of its ``K`` slots are
already taken by finished hypotheses; an expansion ending in ``EOS`` is finished and takes a
slot. A sentence stops when all ``K`` slots are finished, or -- without length normalisation,
where scores only fall -- as soon as its ``n_best``-th finished score beats every live one
(which cannot change the result). Sentences (and, in greedy search and sampling, rows) that
are finished leave the batch, so later steps only compute what is still searched (beam search
removes them in groups, once an eighth of its batch is finished).

Equations
---------
- B §3.1 / A Eq. 3: log p(y | x) = sum_i log p(y_i | y_<i, x), the score of a hypothesis
- B §4.2: beam search for the translation that approximately maximises p(y | x)
- B §5.1 "No UNK": forbid_unk=True gives [UNK] zero probability during search

Deviations
----------
- Beam width is not stated in B (Reading the papers, ``reading-beam-search``): it is a parameter
  here.
- The length limit (3 x the source length, ``<end>`` included) is the papers' implementation's;
  B states none. There, a hypothesis still unfinished after the last step is dropped (and the
  search is rerun with a doubled beam when none finished); here the last step may only emit
  ``EOS``, so every sentence gets a translation from one search.
- The papers' implementation also forbids ``EOS`` during the first ``len(source) // 2`` steps
  (GroundHog's ``sample.py`` passes ``minlen=len(seq) / 2``, ``seq`` ending in its
  end-of-sentence token), a minimum length the papers do not mention. It is an option here,
  ``min_len="groundhog"``; by default the model alone decides when to stop (the rnnsearch
  chapter turns it on, as the papers' code).
- Length normalisation is not mentioned in B; ``length_norm=True`` divides the final score by
  the length (EOS included), a float ``alpha`` by ``length ** alpha``, only to rank finished
  hypotheses (``Hypothesis.score`` stays the raw log-probability). Default: off.
- [PAD] and [BOS] are never generated (their probability is masked); scores are not
  renormalised, so ``score`` is always the model's own log-probability. Sampling draws from
  the distribution renormalised over the allowed words.
- RNNencdec has no attention: ``Hypothesis.attention`` is ``None`` for it.
- ``beam_search(..., bf16=True)`` runs the model's products in bfloat16 (an option, off by
  default; not in the papers).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from .fast import precision
from .fast.kernels import wrap as fast_path
from .fast.softmax import log_softmax_
from .batch import Batch, pad
from .specials import BOS, EOS, PAD, UNK


@dataclass
class Hypothesis:
    """``tokens`` (no BOS/EOS), ``score`` = sum of log-probabilities including EOS,
    ``attention (len(tokens) + 1, S_real + 1)`` (row i: weights used to emit token i, last row:
    EOS; column j: source word j, last column: the source's ``EOS``) or None."""

    tokens: list[int]
    score: float
    attention: np.ndarray | None = None


MaxLen = int | Callable[[torch.Tensor], torch.Tensor] | None


def default_max_len(src_lengths: torch.Tensor) -> torch.Tensor:
    """``3 L - 1`` tokens before ``EOS`` for a source of ``L`` tokens (its ``EOS`` included), i.e.
    at most ``3 L`` decoder steps as in the papers' implementation: ``(B,) -> (B,)``."""
    return 3 * src_lengths - 1


@contextlib.contextmanager
def _inference(model: torch.nn.Module, bf16: bool = False, fast: bool = True):
    """Eval mode, no gradients, optional bf16 autocast; yields the model to call (its fast path
    when ``fast``)."""
    was_training = model.training
    model.eval()
    dev = next(model.parameters()).device.type
    try:
        with torch.no_grad(), precision.autocast(bf16, dev):
            yield fast_path(model) if fast else model
    finally:
        model.train(was_training)


def _sources(model, batch_or_src, src_mask) -> tuple[torch.Tensor, torch.Tensor]:
    if isinstance(batch_or_src, Batch):
        batch_or_src, src_mask = batch_or_src.src, batch_or_src.src_mask
    if src_mask is None:
        raise ValueError("search: src_mask is required when src is a tensor (or pass a Batch)")
    if batch_or_src.dim() != 2 or batch_or_src.shape != src_mask.shape:
        raise ValueError(
            f"search: src {tuple(batch_or_src.shape)} and src_mask {tuple(src_mask.shape)} "
            "must both be (B, S)"
        )
    lengths = src_mask.sum(1)
    if bool((lengths == 0).any()):
        raise ValueError("search: a source sentence is empty (src_mask row with no True)")
    last = batch_or_src.gather(1, (lengths - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    if bool((last != EOS).any()):
        raise ValueError(
            f"search: every source must end with [EOS] (id {EOS}) at its last masked position; "
            "build src and src_mask with rnnlib.batch.source_batch or pad_sources"
        )
    device = next(model.parameters()).device
    return batch_or_src.to(device), src_mask.to(device)


def groundhog_min_len(src_lengths: torch.Tensor) -> torch.Tensor:
    """The papers' implementation's minimum length: ``EOS`` is forbidden while fewer than
    ``L // 2`` tokens are out, ``L`` the source's length with its ``EOS`` (GroundHog's
    ``minlen=len(seq) / 2``, Python 2's integer division): ``(B,) -> (B,)``."""
    return src_lengths // 2


#: minimum-length rules by name (a name keys a cached decode where a function could not)
MIN_LENS = {"groundhog": groundhog_min_len}


def _min_lens(min_len: MaxLen | str, src_mask: torch.Tensor) -> torch.Tensor | None:
    if min_len is None:
        return None
    lengths = src_mask.sum(1)
    if isinstance(min_len, str):
        if min_len not in MIN_LENS:
            raise ValueError(f"search: min_len={min_len!r} is not one of {sorted(MIN_LENS)}")
        min_len = MIN_LENS[min_len]
    if callable(min_len):
        return torch.as_tensor(min_len(lengths), device=lengths.device).long()
    if int(min_len) < 0:
        raise ValueError(f"search: min_len={min_len} must be >= 0")
    return torch.full_like(lengths, int(min_len)).long()


def _max_lens(max_len: MaxLen, src_mask: torch.Tensor) -> torch.Tensor:
    lengths = src_mask.sum(1)
    if max_len is None:
        out = default_max_len(lengths)
    elif callable(max_len):
        out = torch.as_tensor(max_len(lengths), device=lengths.device)
    else:
        if int(max_len) < 0:
            raise ValueError(f"search: max_len={max_len} must be >= 0")
        out = torch.full_like(lengths, int(max_len))
    return out.long()


def _log_probs(
    logits: torch.Tensor,
    forbid_unk: bool,
    force_eos: torch.Tensor,
    fast: bool = True,
    no_eos: torch.Tensor | None = None,
) -> torch.Tensor:
    """``(R, K)`` log-probabilities with [PAD], [BOS] (and [UNK]) masked; rows in
    ``force_eos (R,)`` may only end; rows in ``no_eos (R,)`` (and not in ``force_eos``) may not.

    ``fast``: the log-softmax overwrites fp32 ``logits`` (a step's own output, not used again;
    :func:`rnnlib.fast.softmax.log_softmax_`).
    """
    lp = log_softmax_(logits) if fast else torch.log_softmax(logits, -1, dtype=torch.float32)
    banned = [PAD, BOS] + ([UNK] if forbid_unk else [])
    lp[:, banned] = float("-inf")
    if no_eos is not None:
        lp[:, EOS] = lp[:, EOS].masked_fill(no_eos & ~force_eos, float("-inf"))
    if bool(force_eos.any()):
        not_eos = torch.ones(lp.shape[1], dtype=torch.bool, device=lp.device)
        not_eos[EOS] = False
        lp = lp.masked_fill(force_eos.unsqueeze(1) & not_eos, float("-inf"))
    return lp


def _run_rows(
    model, enc, max_lens: torch.Tensor, choose, forbid_unk: bool, fast: bool, min_lens=None
) -> list[Hypothesis]:
    """Decode every row of ``enc`` once, picking words with ``choose(lp) -> (rows,)``.

    Rows that have emitted EOS leave the batch, so the remaining steps only compute live rows.
    """
    R, dev = enc.batch_size, enc.mask.device
    src_lengths = enc.lengths.cpu().tolist()
    state = model.init_state(enc)
    prev = torch.full((R,), BOS, dtype=torch.long, device=dev)
    act = torch.arange(R, device=dev)  # the original row of every live row
    scores = torch.zeros(R, dtype=torch.float64, device=dev)
    hist = []  # per step: (act, word, alpha)
    for t in range(int(max_lens.max()) + 1):
        logits, state, alpha = model.step(prev, state, enc)
        no_eos = None if min_lens is None else t < min_lens[act]
        lp = _log_probs(logits, forbid_unk, t >= max_lens[act], fast, no_eos)
        word = choose(lp)
        scores.index_add_(0, act, lp.gather(1, word.unsqueeze(1)).squeeze(1).double())
        hist.append((act, word, alpha))
        live = word != EOS
        if not bool(live.any()):
            break
        if not bool(live.all()):
            keep = live.nonzero().squeeze(1)
            act, word, state, enc = act[keep], word[keep], state[keep], enc.index_select(keep)
        prev = word
    tokens: list[list[int]] = [[] for _ in range(R)]
    attn: list[list[np.ndarray]] = [[] for _ in range(R)]
    for act_t, word_t, alpha_t in hist:
        act_np, word_np = act_t.cpu().numpy(), word_t.cpu().numpy()
        alpha_np = alpha_t.float().cpu().numpy() if alpha_t is not None else None
        for i, r in enumerate(act_np):
            tokens[r].append(int(word_np[i]))
            if alpha_np is not None:
                attn[r].append(alpha_np[i])
    out = []
    for r in range(R):
        toks = tokens[r][:-1] if tokens[r] and tokens[r][-1] == EOS else tokens[r]
        att = np.stack(attn[r])[:, : src_lengths[r]] if attn[r] else None
        out.append(Hypothesis(toks, float(scores[r]), att))
    return out


def greedy(
    model,
    batch_or_src,
    src_mask: torch.Tensor | None = None,
    max_len: MaxLen = None,
    forbid_unk: bool = False,
    fast: bool = True,
    min_len: MaxLen | str = None,
) -> list[Hypothesis]:
    """The most probable word at each step, for every sentence of the batch: one Hypothesis each."""
    with _inference(model, fast=fast) as model:
        src, src_mask = _sources(model, batch_or_src, src_mask)
        enc = model.encode(src, src_mask)
        return _run_rows(
            model,
            enc,
            _max_lens(max_len, src_mask),
            lambda lp: lp.argmax(-1),
            forbid_unk,
            fast,
            _min_lens(min_len, src_mask),
        )


def sample(
    model,
    batch_or_src,
    src_mask: torch.Tensor | None = None,
    n: int = 50,
    max_len: MaxLen = None,
    generator: torch.Generator | None = None,
    forbid_unk: bool = False,
    fast: bool = True,
    min_len: MaxLen | str = None,
) -> list[list[Hypothesis]]:
    """``n`` ancestral samples per sentence (A Table 3), drawn with ``generator``:
    ``[sentence][sample]``."""
    if n < 1:
        raise ValueError(f"sample: n={n} must be >= 1")
    with _inference(model, fast=fast) as model:
        src, src_mask = _sources(model, batch_or_src, src_mask)
        enc = model.encode(src, src_mask).repeat_interleave(n)
        lens = _max_lens(max_len, src_mask).repeat_interleave(n)
        mins = _min_lens(min_len, src_mask)
        mins = None if mins is None else mins.repeat_interleave(n)
        draw = lambda lp: torch.multinomial(lp.exp(), 1, generator=generator).squeeze(1)  # noqa: E731
        flat = _run_rows(model, enc, lens, draw, forbid_unk, fast, mins)
    return [flat[b * n : (b + 1) * n] for b in range(src.shape[0])]


def _rank_scores(
    scores: torch.Tensor, lengths: torch.Tensor, length_norm: bool | float
) -> torch.Tensor:
    if length_norm is False or length_norm is None:
        return scores
    alpha = 1.0 if length_norm is True else float(length_norm)
    return scores / lengths.double() ** alpha


def beam_search(
    model,
    batch_or_src,
    src_mask: torch.Tensor | None = None,
    beam_size: int = 10,
    max_len: MaxLen = None,
    length_norm: bool | float = False,
    forbid_unk: bool = False,
    n_best: int = 1,
    bf16: bool = False,
    fast: bool = True,
    min_len: MaxLen | str = None,
) -> list[list[Hypothesis]]:
    """Batched beam search: ``[sentence][rank]``, at most ``n_best`` Hypotheses per sentence, best
    first.

    ``bf16``: run the model under bf16 autocast (weights stay fp32; log-probabilities and scores
    are computed in fp32/fp64 from the bf16 logits). Faster on CPUs with bf16 matrix units; the
    scores differ from fp32 search by the rounding of the model's products
    (:func:`rnnlib.fast.precision.bf16_error` measures it).
    """
    K = int(beam_size)
    if K < 1 or not 1 <= n_best <= K:
        raise ValueError(
            "beam_search: need beam_size >= 1 and 1 <= n_best <= beam_size, "
            f"got {beam_size}, {n_best}"
        )
    prune_early = length_norm is False or length_norm is None
    with _inference(model, bf16, fast) as model:
        src, src_mask = _sources(model, batch_or_src, src_mask)
        B, dev = src.shape[0], src.device
        max_lens = _max_lens(max_len, src_mask)
        min_lens = _min_lens(min_len, src_mask)
        enc = model.encode(src, src_mask).repeat_interleave(K)
        state = model.init_state(enc)
        prev = torch.full((B * K,), BOS, dtype=torch.long, device=dev)
        slots = torch.arange(K, device=dev)
        act = torch.arange(B, device=dev)  # the sentences still searched, in row order
        ninf = float("-inf")
        live = torch.full((B, K), ninf, dtype=torch.float64, device=dev)  # live hypotheses' scores
        live[:, 0] = 0.0
        fin = _Finished(B, K, dev)
        hist = []  # per step: (act, word (A, K), parent (A, K), alpha (A, K, S) | None)
        for t in range(int(max_lens.max()) + 1):
            A = act.shape[0]
            logits, state, alpha = model.step(prev, state, enc)
            lp = _log_probs(
                logits,
                forbid_unk,
                (t >= max_lens[act]).repeat_interleave(K),
                fast,
                None if min_lens is None else (t < min_lens[act]).repeat_interleave(K),
            )
            # the K best expansions of a sentence are among the K best words of each live parent
            word_lp, word_id = lp.topk(min(K, lp.shape[1]), dim=1)  # (A*K, K')
            Kw = word_lp.shape[1]
            cand = (live.unsqueeze(2) + word_lp.view(A, K, Kw).double()).view(A, K * Kw)
            top, idx = cand.topk(K, dim=1)
            parent = idx // Kw
            word = word_id.view(A, K * Kw).gather(1, idx)
            valid = (slots.unsqueeze(0) < (K - fin.count[act]).unsqueeze(1)) & torch.isfinite(top)
            ends = valid & (word == EOS)
            if bool(ends.any()):
                fin.add(act, ends, top, parent, t, length_norm)
            live = torch.where(valid & ~ends, top, ninf)
            if prune_early:  # scores only fall: a sentence whose n-best are finished is done
                kth = fin.score[act].topk(n_best, dim=1).values[:, -1]
                live = live.masked_fill((kth >= live.max(1).values).unsqueeze(1), ninf)
            hist.append((act, word, parent, alpha.view(A, K, -1) if alpha is not None else None))
            searching = torch.isfinite(live).any(1)
            if not bool(searching.any()):
                break
            rows = torch.arange(A, device=dev).unsqueeze(1) * K + parent
            # a finished sentence (all its scores -inf) stays in the batch, inert, until an
            # eighth of the batch is finished: copying the encoder outputs costs about a step
            if 8 * int((~searching).sum()) >= A:
                keep = searching.nonzero().squeeze(1)
                act, live, word, rows = act[keep], live[keep], word[keep], rows[keep]
                enc = enc.index_select((keep.unsqueeze(1) * K + slots).view(-1))
            state = state.index_select(0, rows.view(-1))
            prev = word.reshape(-1)
        return _collect(src_mask, fin, hist, n_best)


class _Finished:
    """Finished hypotheses of every sentence: at most ``K`` each (each takes one beam slot)."""

    def __init__(self, B: int, K: int, dev) -> None:
        self.count = torch.zeros(B, dtype=torch.long, device=dev)
        self.score = torch.full((B, K), float("-inf"), dtype=torch.float64, device=dev)
        self.rank = torch.full((B, K), float("-inf"), dtype=torch.float64, device=dev)
        self.step = torch.zeros((B, K), dtype=torch.long, device=dev)
        self.parent = torch.zeros((B, K), dtype=torch.long, device=dev)

    def add(self, act, ends, top, parent, t, length_norm) -> None:
        a, j = ends.nonzero(as_tuple=True)
        b = act[a]
        pos = self.count[b] + (ends.long().cumsum(1) - 1)[a, j]
        self.score[b, pos] = top[a, j]
        self.rank[b, pos] = _rank_scores(top[a, j], torch.full_like(b, t + 1), length_norm)
        self.step[b, pos] = t
        self.parent[b, pos] = parent[a, j]
        self.count.index_add_(0, act, ends.sum(1))


def _collect(src_mask, fin: _Finished, hist, n_best) -> list[list[Hypothesis]]:
    """Backtrack the ``n_best`` finished hypotheses of each sentence through the step histories."""
    B = src_mask.shape[0]
    steps = []  # per step: row of each sentence (or -1), words, parents, alphas (numpy)
    for act, word, parent, alpha in hist:
        row = np.full(B, -1)
        row[act.cpu().numpy()] = np.arange(act.shape[0])
        steps.append(
            (
                row,
                word.cpu().numpy(),
                parent.cpu().numpy(),
                alpha.float().cpu().numpy() if alpha is not None else None,
            )
        )
    lengths = src_mask.sum(1).cpu().tolist()
    count, score, rank = fin.count.cpu().tolist(), fin.score.cpu().numpy(), fin.rank.cpu().numpy()
    fin_step, fin_parent = fin.step.cpu().numpy(), fin.parent.cpu().numpy()
    out = []
    for b in range(B):
        order = sorted(range(count[b]), key=lambda i: -rank[b, i])[:n_best]
        hyps = []
        for i in order:
            t, slot = int(fin_step[b, i]), int(fin_parent[b, i])
            row, _, _, alpha = steps[t]
            toks, att = [], ([alpha[row[b], slot, : lengths[b]]] if alpha is not None else None)
            for s in range(t - 1, -1, -1):
                row, words, parents, alpha = steps[s]
                toks.append(int(words[row[b], slot]))
                slot = int(parents[row[b], slot])
                if att is not None:
                    att.append(alpha[row[b], slot, : lengths[b]])
            hyps.append(
                Hypothesis(
                    toks[::-1], float(score[b, i]), np.stack(att[::-1]) if att is not None else None
                )
            )
        out.append(hyps)
    return out


def score(
    model,
    batch_or_src,
    src_mask: torch.Tensor | None = None,
    tgt: torch.Tensor | Sequence[Sequence[int]] | None = None,
    fast: bool = True,
) -> torch.Tensor:
    """Teacher-forced ``log p(y | x)`` (EOS included) of each pair: ``(B,) float64``.

    ``tgt``: the target sentences without BOS/EOS, as lists of ids or a ``(B, T)`` tensor
    right-padded with PAD; with a :class:`~rnnlib.batch.Batch` the batch's own targets are used.
    """
    with _inference(model, fast=fast) as model:
        if isinstance(batch_or_src, Batch) and tgt is None:
            tgt_in, tgt_out, tgt_mask = (
                batch_or_src.tgt_in,
                batch_or_src.tgt_out,
                batch_or_src.tgt_mask,
            )
        else:
            if tgt is None:
                raise ValueError("score: tgt is required")
            if isinstance(tgt, torch.Tensor):
                tgt = [row[row != PAD].tolist() for row in tgt]
            tgt_in, _ = pad(tgt, prefix=BOS)
            tgt_out, tgt_mask = pad(tgt, suffix=EOS)
        src, src_mask = _sources(model, batch_or_src, src_mask)
        dev = src.device
        tgt_in, tgt_out, tgt_mask = tgt_in.to(dev), tgt_out.to(dev), tgt_mask.to(dev)
        lp = torch.log_softmax(model(src, src_mask, tgt_in).float(), -1)
        tok = lp.gather(2, tgt_out.unsqueeze(2)).squeeze(2).double()
        return (tok * tgt_mask).sum(1)
