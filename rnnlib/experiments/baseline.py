"""The phrase-based baseline as the chapters use it: one way from chapter parameters to the system.

The baseline chapter (``chapters/baseline.md``) builds the phrase-based system with
:func:`baseline_inputs` and :func:`rnnlib.smt.system.run`; a chapter that sets its
translations beside a network's (the "Moses" row of Bahdanau et al. 2015, Table 1) calls
:func:`baseline_system`, which asks the same pipeline with the parameters the profile gives the
baseline chapter. The pipeline's stages are artifacts of the cache, so after the baseline
chapter ran this is a lookup; otherwise it builds the system.

Deviations: none (this module only connects chapter parameters to :mod:`rnnlib.smt.system`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import config_subset, load_config
from ..smt.decoder import DecoderConfig
from ..smt.system import SMTConfig, SMTData, SMTResult, run

#: parameters of the corpus block that change the text of the corpus (not the shortlists)
CORPUS_TEXT_PARAMS = (
    "corpus",
    "corpus_dir",
    "corpus_layout",
    "tokenizer",
    "en_version",
    "fr_version",
    "max_len",
    "lowercase",
)


def _first(items, n):
    return list(items) if n is None else list(items)[:n]


def _tokens(lines):
    return [line.split() for line in lines]


def baseline_inputs(corpus, params: dict[str, Any]) -> tuple[SMTData, SMTConfig]:
    """The :class:`SMTData` and :class:`SMTConfig` for the baseline chapter's ``params``.

    ``corpus``: a prepared :class:`~rnnlib.corpus.dataset.Corpus`; ``params``: the baseline
    chapter's parameters: ``max_train`` and ``max_eval`` (the data subsets) and the fields of
    :class:`SMTConfig` and :class:`DecoderConfig`, which its parameters are named after.
    """
    max_train, max_eval = params["max_train"], params["max_eval"]
    data = SMTData(
        train_src=_first(_tokens(corpus.text("train", "src")), max_train),
        train_tgt=_first(_tokens(corpus.text("train", "tgt")), max_train),
        dev_src=_first(_tokens(corpus.text("dev", "src")), max_eval),
        dev_tgt=_first(_tokens(corpus.text("dev", "tgt")), max_eval),
        test_src=_first(_tokens(corpus.text("test", "src")), max_eval),
        dev_refs=[_first(r, max_eval) for r in corpus.references("dev", multi=True)],
        test_refs=[_first(r, max_eval) for r in corpus.references("test", multi=True)],
    )
    decoder = load_config(
        DecoderConfig, config_subset(DecoderConfig, params), "baseline DecoderConfig"
    )
    config = load_config(
        SMTConfig, {**config_subset(SMTConfig, params), "decoder": decoder}, "baseline SMTConfig"
    )
    return data, config


def baseline_params(
    root: Path, profile: str, corpus_params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The baseline chapter's parameters under ``profile``: its defaults, the profile and the
    command-line overrides of the ``rnnlib run`` or ``rnnlib build`` this process runs under
    (:func:`rnnlib.book.params.run_overrides`), as the baseline chapter resolves them, so that a
    chapter showing the phrase-based system shows the one the baseline chapter built.

    ``corpus_params``: the calling chapter's corpus parameters; those that change the corpus
    text (:data:`CORPUS_TEXT_PARAMS`) replace the baseline's, so both chapters translate the
    same sentences.
    """
    from ..book.params import run_overrides
    from ..book.execute import resolve_all

    _, params = resolve_all(Path(root), profile, run_overrides(), only=["baseline"])
    out = dict(params["baseline"])
    for name in CORPUS_TEXT_PARAMS:
        if corpus_params is not None and name in corpus_params:
            out[name] = corpus_params[name]
    return out


def baseline_system(corpus, params: dict[str, Any], cache) -> SMTResult:
    """The baseline built (or looked up in ``cache``) with the baseline chapter's ``params``;
    its test translations are ``result.evaluation.file("test.txt")`` (detokenized, one a line,
    the first ``params["max_eval"]`` test sentences)."""
    data, config = baseline_inputs(corpus, params)
    return run(
        data,
        config,
        cache,
        detokenize=lambda words: corpus.detokenize(list(words)),
        log=lambda m: None,
    )


__all__ = ["CORPUS_TEXT_PARAMS", "baseline_inputs", "baseline_params", "baseline_system"]
