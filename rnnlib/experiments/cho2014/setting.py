"""The chapter's setting: its parameters as one typed object (:class:`Params`), its corpus,
the bootstrap size of its claims' intervals."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ...cache import ArtifactCache


@dataclass(frozen=True)
class Params:
    """The ``cho2014`` chapter's parameters, exactly its parameters cell (the corpus block
    included): the same names, types and defaults; each parameter's meaning and range is its
    comment there. The chapter reads them as ``P = ch.typed(Params)``."""

    profile: str = "cpu"
    seed: int = 1
    corpus: str = "bible"
    corpus_dir: str | None = None
    corpus_layout: str = "pair"
    src_lang: str = "en"
    tgt_lang: str = "fr"
    tokenizer: str = "moses"
    en_version: str = "4"
    fr_version: str = "l"
    src_vocab: int = 15000
    tgt_vocab: int = 15000
    max_len: int | None = None
    length_guard: int | None = 1000
    lowercase: bool = False
    max_train: int | None = None
    max_eval: int | None = None
    max_phrase_len: int = 7
    table_limit: int | None = None
    lm_order: int = 5
    stack_size: int = 50
    ttable_limit: int = 10
    distortion_limit: int = 6
    tune_nbest: int = 100
    mert_iterations: int = 6
    tune_sentences: int | None = 300
    mert_seeds: int = 3
    mert_restarts: int = 2
    mert_start: str = "baseline"
    systems_at_once: int = 1
    mert_default_seeds: int = 3
    eflomal_rel_iterations: float = 1.0
    alignment_replicates: int = 1
    cached_spread: bool = True
    per_word_row: bool = True
    eval_nbest: int = 50
    rescore_mode: str = "lists"
    rescore_iterations: int = 2
    cslm_order: int = 7
    cslm_emb: int = 128
    cslm_hidden1: int = 512
    cslm_hidden2: int = 256
    cslm_updates: int = 2000
    cslm_batch: int = 128
    cslm_lr: float = 0.003
    cslm_eval_every: int = 500
    cslm_dev_share: float = 0.001
    search_sentences: int = 2
    model_preset: str = "cpu-cho2014"
    rnn_sample: int | None = None
    rnn_dev_pairs: int = 2000
    rnn_updates: int = 3000
    rnn_eval_every: int = 500
    rnn_optimizer: str = "adadelta"
    rnn_lr: float = 1.0
    rnn_clip: float | None = None
    rnn_check_optimiser: bool = True
    rnn_check_updates: int | None = None
    tanh_ahead: bool = False
    threads: int = 2
    device: str = "auto"
    scatter_points: int = 5000
    min_source_words: int = 4
    frequent_count: int = 20
    rare_count: int = 5
    phrases_per_group: int = 5
    long_sources: int = 200
    n_samples: int = 50

    def as_dict(self) -> dict[str, Any]:
        """The parameters by name, for the book's helpers that read a chapter's parameters as a
        mapping (:func:`rnnlib.book.corpus_params.corpus_config`,
        :func:`rnnlib.experiments.baseline.baseline_inputs`)."""
        return dataclasses.asdict(self)


def as_params(params: Params | Mapping[str, Any]) -> Params:
    """``params`` as :class:`Params`: itself, or the mapping of the chapter's parameters that
    :func:`cho2014_params` returns (another chapter reading this one's scorer)."""
    return params if isinstance(params, Params) else Params(**params)


def cho2014_params(root: Path, profile: str) -> dict[str, Any]:
    """The ``cho2014`` chapter's parameters under ``profile``: its defaults, the profile and the
    command-line overrides of the ``rnnlib run`` or ``rnnlib build`` this process runs under
    (:func:`rnnlib.book.params.run_overrides`), as that chapter resolves them; a chapter that
    reads its phrase scorer passes them to :func:`phrase_scorer` (and prepares the corpus from
    them) so that both chapters read one network."""
    from ...book.execute import resolve_all
    from ...book.params import run_overrides

    _, resolved = resolve_all(Path(root), profile, run_overrides(), only=["cho2014"])
    return dict(resolved["cho2014"])


def cho2014_corpus(cache: ArtifactCache, params: Params | Mapping[str, Any]):
    """The corpus the ``cho2014`` chapter prepares for its ``params`` (its corpus block): the
    text and shortlists its phrase scorer was trained on."""
    from ...book.corpus_params import corpus_config
    from ...corpus.dataset import prepare_corpus

    return prepare_corpus(corpus_config(as_params(params).as_dict()), cache)


#: bootstrap resamples of the chapter's claims' intervals
N_BOOT = 1000
