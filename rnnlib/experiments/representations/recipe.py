"""Paper A's §4.4 and §2.3 set-up beside this run's, setting by setting, with the chapter's
parameters that change it (the chapter's "Differences from the paper").
"""

from __future__ import annotations


import pandas as pd

from ...book import papers
from ...presets import preset
from .labelled_points import LabelledPoints
from .setting import Params, PhraseScorer


def recipe_table(
    scorer: PhraseScorer, points: LabelledPoints, P: Params, abl_updates: int
) -> pd.DataFrame:
    """Paper A's §4.4 and §2.3 set-up beside this run's (index: setting; columns ``Cho et al.
    2014``, ``this run`` and the chapter ``parameters`` that set it): the network, the maps'
    words and phrases, t-SNE, how regions and categories were chosen, what is measured and the
    gating ablation's training (``abl_updates``: the updates it ran)."""
    mc = scorer.model_config
    pm, tc = preset("paper-cho2014"), scorer.train_config
    n_small = min(P.n_phrases_small, len(points.phrases))
    recipe = [
        ("network", f"RNN Encoder–Decoder, {pm.hidden} hidden units, Adadelta, about three days "
         "on the phrase table of WMT'14 English→French",
         f"the cho2014 chapter's phrase scorer: {mc.hidden} hidden units, {tc.optimizer}, "
         f"{int(scorer.artifact.extra['updates']):,} updates",
         "cho2014: model_preset, rnn_optimizer, rnn_updates"),
        ("Figs. 4 and 6: words mapped", f"the whole embedding matrix ({pm.src_vocab:,} words)",
         f"the {len(points.words):,} most frequent source words", "n_words"),
        ("Fig. 5: phrases mapped",
         f"{papers.A_FIG5_PHRASES:,} random phrases of {papers.A_MAP_MIN_WORDS} or more words",
         f"{len(points.phrases):,} random source phrases of {P.min_phrase_len} or more words",
         "n_phrases, min_phrase_len"),
        ("Fig. 7: phrases mapped", f"{papers.A_FIG7_PHRASES:,} of them",
         f"{n_small:,} of them, with their own t-SNE", "n_phrases_small"),
        ("t-SNE", "Barnes–Hut-SNE, settings not given",
         f"scikit-learn's Barnes–Hut t-SNE, perplexity {P.perplexity:g} (lower on maps of "
         f"few points), {P.tsne_iterations:,} iterations, PCA initialisation",
         "perplexity, tsne_iterations, tsne_seed"),
        ("enlarged regions", "chosen by hand",
         f"the densest group of {P.zoom_size} points of a category", "word_regions, "
         "phrase_regions, zoom_size"),
        ("categories", "read from the maps by eye",
         "rules over the corpus: English word lists, capital letters, place cues",
         "name_min_count, min_members"),
        ("what is measured", "nothing: the maps are read by eye",
         f"{P.neighbours}-nearest-neighbour class purity against chance, the untrained "
         "network and a bag of words; gate activity and memory; 95% bootstrap intervals",
         "neighbours, n_boot, gate_phrases, memory_lag"),
        ("§2.3: tanh units", "\"not able to get meaningful result\"; training not stated",
         f"the tanh network trained as the scorer for {abl_updates:,} updates, set against the "
         "gated one at the same count", "ablation_updates"),
    ]  # fmt: skip
    columns = ["setting", "Cho et al. 2014", "this run", "parameters"]
    return pd.DataFrame(recipe, columns=columns).set_index("setting")


def paper_numbers() -> dict:
    """Paper A's shortlist of source words and its hidden units, for the departures."""
    paper = preset("paper-cho2014")
    return {"rep-paper-vocab": paper.src_vocab, "rep-paper-hidden": paper.hidden}
