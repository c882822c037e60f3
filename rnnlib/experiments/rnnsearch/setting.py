"""The experiment's setting: the models' names, the chapter's parameters as the experiment reads
them, the corpus, the device and precision, the evaluated test and dev sentences, and the model
and training configs every run is built from (:class:`RNNsearchExperiment`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

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


def timed_prefixes() -> str:
    """:data:`TIMED_NUMBERS` in words, for the chapter's prose."""
    return ", ".join(TIMED_NUMBERS)


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


@dataclass(frozen=True)
class Params:
    """The chapter's parameters, exactly its parameters cell (the corpus block of ``# include:
    corpus`` expanded; :func:`rnnlib.book.params.typed` checks the field set against the cell),
    with the same names, types and defaults. Each is documented in the cell; B's value is beside
    every departure there and in :func:`rnnlib.experiments.rnnsearch.recipe.departures`."""

    profile: str = "cpu"
    # the seeds: the chapter's, the further ones of the rebuild spread (seeds.py)
    seed: int = 1
    seed_runs: int = 1
    seed_short: bool = False
    cached_spread: bool = True
    start_runs: bool = False
    # the corpus (rnnlib.book.corpus_params; B's shortlists are 30,000)
    corpus: str = "bible"
    corpus_dir: str | None = None
    corpus_layout: str = "pair"
    src_lang: str = "en"
    tgt_lang: str = "fr"
    tokenizer: str = "moses"
    en_version: str = "4"
    fr_version: str = "l"
    src_vocab: int = 8000
    tgt_vocab: int = 8000
    max_len: int | None = None
    length_guard: int | None = 1000
    lowercase: bool = False
    max_train: int | None = None
    max_test: int | None = None
    max_dev: int | None = None
    len_short: int = 30
    len_long: int = 50
    # the model (ModelConfig)
    hidden: int = 256
    emb: int = 128
    maxout: int = 128
    align: int = 256
    dropout: float = 0.0
    # training (TrainConfig) and the recipe chosen on dev (recipe.py, budget.py)
    optimizer: str = "adam"
    lr: float = 0.001
    lr_encdec: float | None = None
    batch_size: int = 80
    lr_decay: float | None = None
    lr_patience: int = 1
    lr_decay_start: int | None = None
    lr_min: float | None = None
    cooldown: float | None = None
    recipe_runs: str = ""
    dropout_long: float | None = None
    dropout_runs_long: str = ""
    encdec_lr_check: bool = False
    dropout_encdec: float | None = None
    lr_decay_encdec: float | None = None
    encdec_runs: str = ""
    encdec_record: str = ""
    clip_norm: float | None = 1.0
    updates_encdec: int | None = None
    updates_search: int = 1600
    updates_search_long: int | None = None
    updates_star: int = 3200
    star_patience: int | None = 3
    eval_every: int = 200
    dev_bleu_sentences: int = 200
    adadelta_updates: int = 400
    bf16: bool | None = False
    device: str = "auto"
    threads: int | None = 2
    train_workers: int = 1
    # decoding and the items
    beam_size: int = 10
    min_len: str = "groundhog"
    decode_batch: int = 32
    bucket_width: int = 10
    bucket_last: int = 60
    n_boot: int = 1000
    timing_seconds: float = 30.0
    align_sentence: int | None = None
    align_text: str | None = None
    n_long: int = 3
    baseline: bool = True


@dataclass
class RNNsearchExperiment:
    """The chapter's setting: its parameters ``P`` (:class:`Params`), the prepared corpus, the
    artifact cache, the book's root, the device and precision, and the evaluated sentences (the
    first ``n_test`` of test, the first ``max_dev`` of dev)."""

    P: Params
    corpus: Corpus
    cache: ArtifactCache
    root: Path
    device: torch.device
    bf16: bool
    n_test: int
    dev: ParallelArrays  # the dev pairs of the dev NLL
    dev_index: np.ndarray  # (n,) the dev sentences of the dev BLEU curve

    @classmethod
    def start(cls, P: Params, cache: ArtifactCache, root: Path) -> "RNNsearchExperiment":
        """Set torch's threads, resolve the device and bf16, prepare the corpus (cached in
        ``cache``) and choose the evaluated test and dev sentences, from the parameters ``P``."""
        if P.len_short > P.len_long:
            raise ValueError(
                f"parameter 'len_short' = {P.len_short} is larger than 'len_long' = {P.len_long}"
            )
        if P.threads is not None:
            torch.set_num_threads(P.threads)
        device = resolve_device(P.device)
        # bf16=None: only where the hardware has it (emulated bf16 is slower than fp32)
        bf16 = resolve_bf16(P.bf16, device)
        # the corpus block's parameters are CorpusConfig's fields by name (corpus_params)
        corpus = prepare_corpus(corpus_config(asdict(P)), cache)
        n_test = len(corpus.test) if P.max_test is None else min(P.max_test, len(corpus.test))
        dev = corpus.dev
        if P.max_dev is not None:
            dev = dev.select(np.arange(min(P.max_dev, len(dev))))
        # the dev BLEU curve's sentences: drawn with the seed (the first ones are all from one book)
        n_bleu = min(P.dev_bleu_sentences, len(dev))
        rng = np.random.default_rng(P.seed)
        dev_index = np.sort(rng.choice(len(dev), size=n_bleu, replace=False))
        return cls(P, corpus, cache, root, device, bf16, n_test, dev, dev_index)

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
        return None if self.P.min_len == "none" else self.P.min_len

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
        the vocabularies' sizes from the corpus, ``overrides`` by field name on top."""
        P = self.P
        fields = dict(
            arch=arch,
            src_vocab=len(self.corpus.src_vocab),
            tgt_vocab=len(self.corpus.tgt_vocab),
            emb=P.emb,
            hidden=P.hidden,
            maxout=P.maxout,
            align=P.align,
            dropout=P.dropout,
        )
        return ModelConfig(**{**fields, **overrides})

    def dropout_of(self, name: str) -> float:
        """The dropout on the maxout units of a run of model ``name`` (its continuations and
        further seeds alike): ``dropout_encdec`` for the RNNencdec models where it is set, else
        ``dropout_long`` for the "-50" models (:data:`LONG`) where it is set, else ``dropout``."""
        if name.startswith("RNNencdec") and self.P.dropout_encdec is not None:
            return self.P.dropout_encdec
        if name.rstrip("*") in LONG and self.P.dropout_long is not None:
            return self.P.dropout_long
        return self.P.dropout

    def lr_of(self, arch: str) -> float:
        """The learning rate of a run of ``arch`` (``rnnsearch`` or ``rnnencdec``): ``lr_encdec``
        for RNNencdec where it is set, else ``lr``."""
        if arch == "rnnencdec" and self.P.lr_encdec is not None:
            return self.P.lr_encdec
        return self.P.lr

    def lr_decay_of(self, arch: str) -> float | None:
        """The schedule's factor of a run of ``arch`` (``None``: a constant rate): for RNNencdec
        ``lr_decay_encdec`` where it is set (1: a constant rate), else ``lr_decay``."""
        own = self.P.lr_decay_encdec
        if arch == "rnnencdec" and own is not None:
            if not 0 < own <= 1:
                raise ValueError(f"parameter 'lr_decay_encdec' must be in (0, 1] or None: {own!r}")
            return None if own == 1 else float(own)
        return self.P.lr_decay

    def train_config(self, updates: int, arch: str = "rnnsearch", **overrides) -> TrainConfig:
        """The training config of a run of ``arch`` of ``updates`` updates (the resolved device:
        "auto" would key CPU and GPU runs alike), at the architecture's learning rate
        (:meth:`lr_of`) and schedule (:meth:`lr_decay_of`), with the cool-down the ``cooldown``
        parameter gives its budget (:func:`cooldown_updates`), ``overrides`` by field name on
        top."""
        P = self.P
        n = cooldown_updates(P.cooldown, updates, P.eval_every)
        cooldown = {} if n is None else {"lr_cooldown": n, "lr_cooldown_end": updates}
        fields = dict(
            optimizer=P.optimizer,
            lr=self.lr_of(arch),
            clip_norm=P.clip_norm,
            batch_size=P.batch_size,
            max_updates=updates,
            eval_every=P.eval_every,
            eval_batch_size=max(80, P.batch_size),
            checkpoint_every=None,
            lr_decay=self.lr_decay_of(arch),
            lr_patience=P.lr_patience,
            lr_decay_start=P.lr_decay_start,
            lr_min=P.lr_min,
            seed=P.seed,
            bf16=self.bf16,
            device=self.device.type,
        )
        return TrainConfig(**{**fields, **cooldown, **overrides})

    def to_words(self, ids) -> list[str]:
        """Target-side token ids -> words."""
        return self.corpus.tgt_vocab.decode(ids)

    def dev_bleu(self, model: torch.nn.Module) -> float:
        """Dev BLEU of ``model`` (greedy search on the fixed dev subset ``dev_index``)."""
        sources = [self.dev.src[i] for i in self.dev_index]
        refs = self.corpus.references("dev")[0]
        hyps = translate(
            model, sources, beam_size=1, batch_size=self.P.decode_batch, **self.search_options()
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
