"""The chapter's setting: its parameters as one typed object, its corpus, the bootstrap size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...cache import ArtifactCache


def cho2014_params(root: Path, profile: str) -> dict[str, Any]:
    """The ``cho2014`` chapter's parameters under ``profile``: its defaults, the profile and the
    command-line overrides of the ``rnnlib run`` or ``rnnlib build`` this process runs under
    (:func:`rnnlib.book.params.run_overrides`), as that chapter resolves them; a chapter that
    reads its phrase scorer passes them to :func:`phrase_scorer` (and prepares the corpus from
    them) so that both chapters read one network."""
    from ...book.execute import resolve_all
    from ...book.params import run_overrides

    _, params = resolve_all(Path(root), profile, run_overrides(), only=["cho2014"])
    return dict(params["cho2014"])


def cho2014_corpus(cache: ArtifactCache, params: dict[str, Any]):
    """The corpus the ``cho2014`` chapter prepares for its ``params`` (its corpus block): the
    text and shortlists its phrase scorer was trained on."""
    from ...book.corpus_params import corpus_config
    from ...corpus.dataset import prepare_corpus

    return prepare_corpus(corpus_config(params), cache)


# -- Figure 3 -----------------------------------------------------------------------------------
#: bootstrap resamples of the chapter's claims' intervals
N_BOOT = 1000
