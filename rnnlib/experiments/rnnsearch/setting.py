"""The experiment's setting: the models' names, the chapter's parameters as the experiment reads
them, the corpus, the device and precision, the evaluated test and dev sentences, and the model
and training configs every run is built from (:class:`RNNsearchExperiment`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from ...bleu import corpus_bleu, no_unk_mask
from ...book.corpus_params import corpus_config
from ...cache import ArtifactCache, config_hash
from ...config import ModelConfig
from ...corpus.dataset import Corpus, prepare_corpus
from ...device import resolve_device
from ...fast.precision import resolve_bf16
from ...ragged import ParallelArrays
from ...train import TrainConfig
from ...translate import translate

#: the five models, in the order of the paper's Table 1
NAMES = ["RNNencdec-30", "RNNsearch-30", "RNNencdec-50", "RNNsearch-50", "RNNsearch-50*"]
#: the models trained on the long pairs (``len_long``), whose dropout is ``dropout_long`` where set
LONG = ("RNNencdec-50", "RNNsearch-50")
#: the names as printed (the paper's star)
SHOWN = {n: n.replace("*", "⋆") for n in NAMES}
#: what in the chapter's glued items measures time, C-B-T2-3's verdict included (a live timing,
#: whose length is a time budget): names starting with one of :data:`TIMED_NUMBERS` or ending in
#: ``-minutes``, and table columns naming a duration (:func:`timed_column`). The only items that
#: differ between two from-empty builds on one machine (the phrase-based row aside,
#: whose alignment eflomal samples without a seed; ``tests/test_determinism.py``)
TIMED_NUMBERS = (
    "rns-spu-",
    "rns-live-",
    "rns-time-ratio-",
    "rns-t2-claim3",
    "claim-C-B-T2-3",
    "rns-ada-",  # Adadelta against the chosen optimiser after as many minutes
)
TIMED_COLUMNS = ("hours", "seconds", "minutes")


def timed(name: str) -> bool:
    """Whether the glued item ``name`` measures time (:data:`TIMED_NUMBERS`)."""
    return name.startswith(TIMED_NUMBERS) or name.endswith("-minutes")


def timed_column(column: str) -> bool:
    """Whether a table column names a duration ("hours", "seconds per update", "minutes", ...)."""
    return any(word in str(column).split() for word in TIMED_COLUMNS)


#: the subsets of Table 1's columns
SUBSETS = {"all": "All", "no_unk": "No UNK"}


def shown(name: str) -> str:
    """A system's name as printed (RNNsearch-50⋆; ``phrase-based`` as it is)."""
    return SHOWN.get(name, name)


def glue_key(name: str) -> str:
    """A system's name in a glue name: ``RNNsearch-50*`` -> ``rnnsearch-50star``."""
    return name.lower().replace("*", "star")


@dataclass
class RNNsearchExperiment:
    """The chapter's setting: its parameters ``p`` (a dict), the prepared corpus, the artifact
    cache, the configs from the parameters (``config``: :meth:`rnnlib.book.chapter.Chapter.config`),
    the device and precision, and the evaluated sentences (the first ``n_test`` of test, the
    first ``max_dev`` of dev)."""

    p: dict[str, Any]
    corpus: Corpus
    cache: ArtifactCache
    config: Callable[..., Any]
    root: Path
    device: torch.device
    bf16: bool
    n_test: int
    dev: ParallelArrays  # the dev pairs of the dev NLL
    dev_index: np.ndarray  # (n,) the dev sentences of the dev BLEU curve

    @classmethod
    def start(cls, ch) -> "RNNsearchExperiment":
        """Set torch's threads, resolve the device and bf16, prepare the corpus (cached) and
        choose the evaluated test and dev sentences, from the chapter ``ch``'s parameters."""
        p = ch.params
        if p["len_short"] > p["len_long"]:
            raise ValueError(
                f"parameter 'len_short' = {p['len_short']} is larger than "
                f"'len_long' = {p['len_long']}"
            )
        if p["threads"] is not None:
            torch.set_num_threads(p["threads"])
        device = resolve_device(p["device"])
        # bf16=None: only where the hardware has it (emulated bf16 is slower than fp32)
        bf16 = resolve_bf16(p["bf16"], device)
        corpus = prepare_corpus(corpus_config(p), ch.cache)
        n_test = len(corpus.test) if p["max_test"] is None else min(p["max_test"], len(corpus.test))
        dev = corpus.dev
        if p["max_dev"] is not None:
            dev = dev.select(np.arange(min(p["max_dev"], len(dev))))
        # the dev BLEU curve's sentences: drawn with the seed (the first ones are all from one book)
        n_bleu = min(p["dev_bleu_sentences"], len(dev))
        rng = np.random.default_rng(p["seed"])
        dev_index = np.sort(rng.choice(len(dev), size=n_bleu, replace=False))
        return cls(p, corpus, ch.cache, ch.config, ch.root, device, bf16, n_test, dev, dev_index)

    # the evaluated test sentences: the first n_test
    @property
    def test(self) -> np.ndarray:
        """``(n_test,)``: indices of the evaluated test sentences."""
        return np.arange(self.n_test)

    @property
    def src_len(self) -> np.ndarray:
        """``(n_test,)``: source length (tokens) of each evaluated test sentence."""
        return self.corpus.test.src.lengths[: self.n_test]

    @cached_property
    def test_refs(self) -> list[str]:
        """The references of the evaluated test sentences (detokenized)."""
        refs = self.corpus.references("test")[0]
        return [refs[i] for i in self.test]

    @cached_property
    def known(self) -> np.ndarray:
        """``(n_test,)`` bool: B Table 1's "No UNK" subset (no unknown word in source or
        reference)."""
        test = self.corpus.test
        return no_unk_mask([test.src[i] for i in self.test], [test.tgt[i] for i in self.test])

    @property
    def min_len(self) -> str | None:
        """The search's minimum length (:data:`rnnlib.search.MIN_LENS`), ``None`` for none."""
        return None if self.p["min_len"] == "none" else self.p["min_len"]

    def search_options(self) -> dict:
        """Keyword arguments of every search of the chapter beyond the beam: the minimum length
        when there is one (absent otherwise, so that the keys of searches without it stay)."""
        return {} if self.min_len is None else {"min_len": self.min_len}

    @property
    def dev_bleu_config(self) -> dict | None:
        """How the dev BLEU curve is measured (part of a run's key); ``None``: no curve."""
        if not len(self.dev_index):
            return None
        return {
            "sentences": len(self.dev_index),
            "drawn": config_hash([int(i) for i in self.dev_index]),
            "beam_size": 1,
            **self.search_options(),
        }

    def model_config(self, arch: str, **overrides) -> ModelConfig:
        """The model config of ``arch`` (``rnnsearch`` or ``rnnencdec``) from the parameters,
        ``overrides`` by field name on top."""
        vocab = {"src_vocab": len(self.corpus.src_vocab), "tgt_vocab": len(self.corpus.tgt_vocab)}
        return self.config(ModelConfig, arch=arch, **vocab, **overrides)

    def dropout_of(self, name: str) -> float:
        """The dropout on the maxout units of a run of model ``name`` (its continuations and
        further seeds alike): ``dropout_long`` for the "-50" models (:data:`LONG`) where it is
        set, else ``dropout``."""
        if name.rstrip("*") in LONG and self.p.get("dropout_long") is not None:
            return self.p["dropout_long"]
        return self.p["dropout"]

    def lr_of(self, arch: str) -> float:
        """The learning rate of a run of ``arch`` (``rnnsearch`` or ``rnnencdec``): ``lr_encdec``
        for RNNencdec where it is set, else ``lr``."""
        if arch == "rnnencdec" and self.p.get("lr_encdec") is not None:
            return self.p["lr_encdec"]
        return self.p["lr"]

    def train_config(self, updates: int, arch: str = "rnnsearch", **overrides) -> TrainConfig:
        """The training config of a run of ``arch`` of ``updates`` updates (the resolved device:
        "auto" would key CPU and GPU runs alike), at the architecture's learning rate
        (:meth:`lr_of`), with the cool-down the ``cooldown`` parameter gives its budget
        (:func:`cooldown_updates`)."""
        batch = max(80, self.p["batch_size"])
        n = cooldown_updates(self.p.get("cooldown"), updates, self.p["eval_every"])
        cooldown = {} if n is None else {"lr_cooldown": n, "lr_cooldown_end": updates}
        return self.config(
            TrainConfig,
            max_updates=updates,
            checkpoint_every=None,
            eval_batch_size=batch,
            device=self.device.type,
            bf16=self.bf16,
            **{"lr": self.lr_of(arch), **cooldown, **overrides},
        )

    def to_words(self, ids) -> list[str]:
        """Target-side token ids -> words."""
        return self.corpus.tgt_vocab.decode(ids)

    def dev_bleu(self, model: torch.nn.Module) -> float:
        """Dev BLEU of ``model`` (greedy search on the fixed dev subset ``dev_index``)."""
        sources = [self.dev.src[i] for i in self.dev_index]
        refs = self.corpus.references("dev")[0]
        hyps = translate(
            model, sources, beam_size=1, batch_size=self.p["decode_batch"], **self.search_options()
        )
        out = [self.corpus.detokenize(self.to_words(h.tokens)) for h in hyps]
        return corpus_bleu(out, [refs[i] for i in self.dev_index]).score


def cooldown_updates(share: float | None, budget: int, every: int) -> int | None:
    """The updates of the cool-down that ends a run of ``budget`` updates: about ``share`` of it,
    beginning at a multiple of ``every`` (an evaluation, where the run keeps its state) before
    the end; ``None`` without a cool-down (``share`` None)."""
    if share is None:
        return None
    if not 0 < share < 1:
        raise ValueError(f"parameter 'cooldown' must be in (0, 1) or None, got {share!r}")
    start = every * round((1 - share) * budget / every)
    last = every * ((budget - 1) // every)  # the last evaluation before the end
    return budget - max(0, min(start, last))
