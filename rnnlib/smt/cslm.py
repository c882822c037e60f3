"""Paper A's neural language model (CSLM; Cho et al. 2014, Sec. 4.1.2; Schwenk 2007) inside the
phrase-based decoder.

A feed-forward n-gram model of the target language: the ``order - 1`` previous words, each
projected to ``R^emb`` and concatenated, go through rectified layers to a softmax over the
target shortlist:

    x = [E y_{t-n+1}; ...; E y_{t-1}]            (batch, (n-1) * emb)
    h_1 = max(0, W_1 x + b_1), h_2 = max(0, W_2 h_1 + b_2)
    p(y_t | y_{t-n+1..t-1}) = softmax(W_o h_2 + b_o)      (batch, V)

Paper A: 7-grams, ``emb`` 512 (a 3072-dimensional input), rectified layers of 1536 and 1024
units, weights uniform in [-0.01, 0.01], trained until the validation perplexity stops
improving, validation set 0.1% of the corpus. Words outside the shortlist are ``[UNK]``; the
first words of a sentence see ``[BOS]`` in the positions before it; the model also predicts
``[EOS]``.

* :class:`CSLM` -- the network; :func:`ngrams` -- the training n-grams of tokenized sentences;
* :func:`train_cslm` -- a small training loop (minibatches drawn at random, dev perplexity
  every ``eval_every`` updates, the best parameters kept);
* :class:`CSLMFeature` -- the model as a stateful feature of
  :class:`rnnlib.smt.decoder.Decoder` (a :class:`~rnnlib.smt.decoder.LanguageModelFeature`):
  its state is the tuple of the last ``order - 1`` word ids; n-gram scores are computed in
  batches (:meth:`CSLMFeature.prefetch`, one forward pass per batch over the distinct
  contexts) and cached, as paper A's decoder buffered n-grams for the GPU.

Every function here computes on the device of the model's parameters (the n-grams, numpy
arrays on the host, are moved there batch by batch; scores come back as Python floats).

Equations
---------
- A Sec. 4.1.2: 7-gram CSLM, 512-dimensional projections, two rectified layers (1536, 1024),
  softmax output (A Eq. 2); used "to score partial translations during the decoding process"
- A Eq. 9: its ``log p(e)`` is one more feature of the log-linear model, tuned by MERT

Deviations
----------
- Sizes are the profile's (``emb``, ``hidden``), smaller than the paper's.
- Trained on the target side of the bitext only (the paper: its target corpus, with the 712M
  words of news its n-gram LM used too), for a fixed budget of updates with Adam and the best
  dev perplexity kept (the paper: until the validation perplexity did not improve for 10
  epochs; it names no optimiser); dev = a seeded random share of the training n-grams.
- The phrase-alone estimate of the future cost scores a phrase after a context of ``[BOS]``
  (a sentence start), the only context the model was trained with when none is known.
- Batches are formed per expanded hypothesis (see :mod:`rnnlib.smt.decoder`), not in a
  buffer shared across hypotheses.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..specials import BOS, EOS
from .decoder import LanguageModelFeature


@dataclass
class CSLMConfig:
    """Sizes of the network (paper A: ``order=7, emb=512, hidden=(1536, 1024)``)."""

    vocab: int
    order: int = 7
    emb: int = 512
    hidden: tuple[int, ...] = (1536, 1024)
    init_scale: float = 0.01  # weights uniform in [-init_scale, init_scale]

    def __post_init__(self) -> None:
        self.hidden = tuple(int(h) for h in self.hidden)
        for name in ("vocab", "order", "emb"):
            if getattr(self, name) < (2 if name == "order" else 1):
                raise ValueError(f"CSLMConfig.{name} is too small: {getattr(self, name)}")
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(
                f"CSLMConfig.hidden must be one or more positive sizes, got {self.hidden}"
            )


class CSLM(nn.Module):
    """``forward(context (batch, order-1) int64) -> (batch, V)`` log-probabilities of the next
    word."""

    def __init__(self, config: CSLMConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab, config.emb)
        sizes = [(config.order - 1) * config.emb, *config.hidden]
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.out = nn.Linear(sizes[-1], config.vocab)
        for p in self.parameters():
            nn.init.uniform_(p, -config.init_scale, config.init_scale)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        x = self.embed(context).flatten(1)  # (batch, (order-1) * emb)
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return torch.log_softmax(self.out(x), dim=-1)


def ngrams(sentences: Sequence[Sequence[str]], vocab, order: int) -> np.ndarray:
    """Every ``order``-gram of ``[BOS]^(order-1) w_1 .. w_T [EOS]`` of each sentence, as ids of
    ``vocab`` (:class:`rnnlib.corpus.vocab.Vocab`): ``(N, order) int64``, the last column the
    predicted word."""
    rows = []
    pad = [BOS] * (order - 1)
    for s in sentences:
        ids = pad + vocab.encode(s).tolist() + [EOS]
        a = np.asarray(ids, dtype=np.int64)
        rows.append(np.lib.stride_tricks.sliding_window_view(a, order))
    return np.concatenate(rows) if rows else np.zeros((0, order), dtype=np.int64)


@torch.no_grad()
def perplexity(model: CSLM, grams: np.ndarray, batch_size: int = 2048) -> float:
    """``exp`` of the mean negative log-probability of the last word of each n-gram (on the
    model's device)."""
    model.eval()
    device = next(model.parameters()).device
    total = 0.0
    for k in range(0, len(grams), batch_size):
        g = torch.from_numpy(grams[k : k + batch_size]).to(device)
        total -= model(g[:, :-1]).gather(1, g[:, -1:]).sum().item()
    return math.exp(total / max(len(grams), 1))


def train_cslm(
    model: CSLM,
    train: np.ndarray,
    dev: np.ndarray,
    *,
    updates: int,
    batch_size: int = 128,
    lr: float = 1e-3,
    eval_every: int = 500,
    seed: int = 0,
    log=None,
) -> dict:
    """Train on n-grams drawn at random (``batch_size`` per update) with Adam for ``updates``
    updates; the dev perplexity every ``eval_every`` updates, and the model is left with the
    best parameters seen. Trains on the model's device (the draws are the same on any device).
    Returns ``{"history": [...], "best_dev_ppl", "seconds"}``."""
    if updates < 1 or batch_size < 1 or eval_every < 1:
        raise ValueError(
            f"train_cslm: updates, batch_size and eval_every must be >= 1, "
            f"got {updates}, {batch_size}, {eval_every}"
        )
    if not len(train) or not len(dev):
        raise ValueError(f"train_cslm: no n-grams (train {len(train)}, dev {len(dev)})")
    t0 = time.perf_counter()
    device = next(model.parameters()).device
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best = (perplexity(model, dev), {k: v.clone() for k, v in model.state_dict().items()})
    history = [{"update": 0, "dev_ppl": best[0]}]
    for u in range(1, updates + 1):
        model.train()
        g = torch.from_numpy(train[rng.integers(0, len(train), size=batch_size)]).to(device)
        loss = -model(g[:, :-1]).gather(1, g[:, -1:]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if u % eval_every == 0 or u == updates:
            ppl = perplexity(model, dev)
            history.append({"update": u, "dev_ppl": ppl, "train_loss": float(loss.detach())})
            if log:
                log(history[-1])
            if ppl < best[0]:
                best = (ppl, {k: v.clone() for k, v in model.state_dict().items()})
    model.load_state_dict(best[1])
    model.eval()
    return {"history": history, "best_dev_ppl": best[0], "seconds": time.perf_counter() - t0}


class CSLMFeature(LanguageModelFeature):
    """A :class:`CSLM` as a language-model feature of the decoder.

    State: the tuple of the last ``order - 1`` word ids (``[BOS]`` before the sentence);
    ``ln p(word | state)`` is cached per ``(state, word id)`` for the whole run (the model
    does not change). :meth:`prefetch` computes the missing scores of many phrases in batches
    of at most ``batch_size`` distinct contexts; :meth:`extend` computes what is still missing
    (one batch per call). ``queries``/``forwards`` count scored n-grams and forward passes.
    The contexts go to the model's device (``device``), the scores come back to the host.
    """

    batched = True

    def __init__(self, model: CSLM, vocab, name: str = "cslm", batch_size: int = 4096):
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.vocab = vocab
        self.name = name
        self.batch_size = batch_size
        self.n = model.config.order - 1
        self.cache: dict = {}
        self.ids: dict = {}
        self.queries = self.forwards = 0

    def _id(self, word: str) -> int:
        i = self.ids.get(word)
        if i is None:
            i = self.ids[word] = int(self.vocab[word])
        return i

    def begin(self):
        return (BOS,) * self.n

    def null(self):
        return (BOS,) * self.n

    def _walk(self, state, words, missing: dict) -> None:
        cache = self.cache
        for w in words:
            i = self._id(w)
            if (state, i) not in cache:
                missing.setdefault(state, set()).add(i)
            state = state[1:] + (i,)

    @torch.no_grad()
    def _score(self, missing: dict) -> None:
        """Fill the cache for ``{context: {word ids}}``: one forward pass per ``batch_size``
        contexts."""
        contexts = list(missing)
        for k in range(0, len(contexts), self.batch_size):
            chunk = contexts[k : k + self.batch_size]
            logp = (
                self.model(torch.tensor(chunk, dtype=torch.int64, device=self.device)).cpu().numpy()
            )
            self.forwards += 1
            for row, ctx in zip(logp, chunk):
                for i in missing[ctx]:
                    self.cache[ctx, i] = float(row[i])
                    self.queries += 1

    def prefetch(self, requests) -> None:
        missing: dict = {}
        for state, words in requests:
            self._walk(state, words, missing)
        if missing:
            self._score(missing)

    def extend(self, state, words) -> tuple:
        cache = self.cache
        lp, start = 0.0, state
        for w in words:
            i = self._id(w)
            v = cache.get((state, i))
            if v is None:  # score what is missing, then start again from the first word
                self.prefetch([(start, words)])
                return self.extend(start, words)
            lp += v
            state = state[1:] + (i,)
        return lp, state

    def end(self, state) -> float:
        v = self.cache.get((state, EOS))
        if v is None:
            self._score({state: {EOS}})
            v = self.cache[state, EOS]
        return v

    def sentence_logprob(self, words: Sequence[str]) -> float:
        """``ln p(words [EOS] | [BOS]...)``: the feature's value of a whole translation."""
        lp, state = self.extend(self.begin(), tuple(words))
        return lp + self.end(state)


__all__ = ["CSLM", "CSLMConfig", "CSLMFeature", "ngrams", "perplexity", "train_cslm"]
