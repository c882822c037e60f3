"""What the RNN Encoder--Decoder learned: word embeddings, phrase codes and gates (Cho et al. 2014,
§2.3, §4.4, Figs. 4--7).

* categories from the data, by declared rules (no tagger): :func:`proper_names` (person or
  place), :func:`word_category` (number, time, person, place, pronoun, preposition, determiner),
  :func:`word_tag` (a part-of-speech-like tag) and, for phrases, :func:`phrase_class` (semantic)
  and :func:`phrase_pattern` (the tags of the first two words);
* :func:`knn_purity` -- the share of a point's ``k`` nearest neighbours (cosine) that carry its
  class, averaged over the labelled points (:func:`knn_same`: per point); :func:`chance_purity`
  is its value for neighbours drawn at random (:func:`chance_same`: per point);
  :func:`bag_of_words` and :func:`context_counts` are the baselines the codes are set against;
  :func:`purity_measure` takes one measure for every representation at once and never raises
  for want of labelled points: a category with too few points is left out and named, and a
  measure that cannot be taken says why (:func:`unmeasurable_reason`);
* :func:`bootstrap_mean` -- a mean (a purity difference over the labelled points, a dev NLL
  difference over held-out pairs) with its 95% bootstrap interval; :func:`bootstrap_spearman`
  -- a rank correlation over hidden units with its interval (the claims' evidence,
  :mod:`rnnlib.book.claims`);
* :func:`tsne_artifact` -- a 2-D Barnes--Hut t-SNE (scikit-learn) as a cache artifact, keyed by
  the perplexity, iterations, seed and a checksum of the vectors, so that what a figure shows
  (:func:`dense_region`, :func:`map_figure`) can change without recomputing it
  (:func:`map_perplexity` lowers the perplexity for a map of few points, :func:`note_figure`
  stands in for a map with too few points to draw);
* :func:`phrase_codes` -- ``c`` of A §2.2 for a list of phrases, through ``model.encode``;
* :func:`encoder_gates`, :func:`gate_activity`, :func:`perturbation_memory` -- the encoder's
  reset and update gates over phrases (A Eqs. 5--6) and how long each unit remembers;
* :func:`most_frequent_sample` -- the most frequent of ``n`` samples for a source phrase (A
  Table 3), to set the scorer beside its tanh-unit ablation (A §2.3,
  :func:`rnnlib.experiments.cho2014.scorer_variant`).

The network looked into is the ``cho2014`` chapter's phrase scorer
(:func:`rnnlib.experiments.cho2014.phrase_scorer`), the one whose score enters the phrase-based system.

Shapes are batch-first: ``src (B, S) int64``, ``mask (B, S) bool``, gates ``(B, S, n)``.

Equations
---------
- A Eq. 5: r = sigmoid(W_r x + U_r h<t-1>); A Eq. 6: z = sigmoid(W_z x + U_z h<t-1>)
- A Eq. 7: h<t> = z h<t-1> + (1 - z) h~<t> (z near 1 keeps the old state)
- A App. A: c = tanh(V h<N>), the phrase code plotted in Figs. 5 and 7; e(x) the word embedding of Figs. 4 and 6

Deviations
----------
- Which gate value counts as "active" is ours: A says that short-memory units have reset gates
  that are "frequently active" and long-memory units update gates that are "mostly active". We
  read an active reset gate as one that drops the previous state (``r < 0.5``, A: "when the reset
  gate is close to 0, the hidden state is forced to ignore the previous hidden state") and an
  active update gate as one that keeps it (``z > 0.5`` in A's Eq. 7).
- A unit's memory is ours too (A measures none): the share of a change in the first word of a
  phrase that is still in the unit's state ``lag`` words later (:func:`perturbation_memory`).
- The categories are rules over the corpus and short English word lists, not a tagger (none is
  installed); names are words written with a capital inside sentences, and person and place
  names are told apart by the English words before them. On another source language, on
  lowercased text or on a small sample a category can be (nearly) empty: the chapter leaves a
  word category or semantic class of fewer than ``min_members`` points out of the measure
  (:func:`purity_measure`), and a measure with nothing left to compare is not measurable.
- A's t-SNE settings are not printed: perplexity, iterations and seed are parameters.
- A judges the maps by eye; the chapter judges each clustering claim by the purity difference
  between the trained representation and the strongest of four baselines (chance, random
  vectors, the untrained network, a bag of words), with a bootstrap interval over the labelled
  points in which each point's neighbours stay as computed.
- A §2.3 says only that plain tanh units gave no meaningful results, not how long they were
  trained: the chapter trains them as long as the scorer (``ablation_updates``) and tests the
  measurable half of the claim, a higher dev NLL per held-out pair.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import torch

from ..cache import Artifact, ArtifactCache

# -- categories ---------------------------------------------------------------------------------
NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds "
    "thousand thousands million first second third fourth fifth sixth seventh eighth ninth tenth "
    "eleventh twelfth twentieth thirtieth fortieth fiftieth hundredth thousandth half".split()
)
TIME_WORDS = frozenset(
    "day days year years month months week weeks hour hours night nights morning mornings evening "
    "evenings today tomorrow yesterday time times season seasons age ages generation generations "
    "moment minute minutes noon midnight dawn sabbath sabbaths forever daily yearly monthly "
    "january february april june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday".split()
)  # not "may", "march" (verbs) nor "now", "when"
PRONOUNS = frozenset(
    "i me my mine you your yours he him his she her hers it its we us our ours they them "
    "their theirs myself yourself himself herself itself ourselves yourselves themselves "
    "who whom whose thee thou thy thine ye".split()
)
PREPOSITIONS = frozenset(
    "of in to from with by for on at into unto upon over under before after against among "
    "through out about above below between beside beyond toward towards within without "
    "across along around behind near off onto throughout".split()
)
DETERMINERS = frozenset(
    "the a an this that these those all every each some any no another other such".split()
)
CONJUNCTIONS = frozenset("and but or nor so yet because if though although whether than".split())
#: words before a proper name that make it a place (``in Egypt``, ``from Jerusalem``) ...
PLACE_CUES = frozenset("in from into at toward towards near through within".split())
#: ... and words before ``of`` that do (``land of Canaan``, ``king of Babylon``)
PLACE_OF_CUES = frozenset(
    "land lands king kings city cities out wilderness garden river border borders towns "
    "mountains mountain plains plain region country sea".split()
)
#: the categories of :func:`word_category`, in the order figures and tables list them
WORD_CATEGORIES = ("number", "time", "person", "place", "pronoun", "preposition", "determiner")


def proper_names(
    sentences: Iterable[Sequence[str]], min_count: int = 3, place_share: float = 0.25
) -> dict[str, str]:
    """``{word: "person" | "place"}`` for the words written with a capital letter everywhere
    except (possibly) at the start of a sentence, seen at least ``min_count`` times inside
    sentences. A name is a place when at least ``place_share`` of its occurrences follow a word
    of :data:`PLACE_CUES` (``in``, ``from``, ``into``, ...) or ``of`` after a word of
    :data:`PLACE_OF_CUES` (``land of``, ``king of``, ...), else a person.

    ``sentences``: tokenized, cased sentences (the corpus' training source side).
    """
    inside, lower, cued = Counter(), Counter(), Counter()
    for s in sentences:
        for i, w in enumerate(s):
            if not w[:1].isalpha():
                continue
            if w[0].islower():
                lower[w.lower()] += 1
            elif i > 0 and s[i - 1] not in {".", "!", "?", '"', ":", ";", "'", "“", "‘"}:
                inside[w] += 1
                before = s[i - 1].lower()
                if (
                    before in PLACE_CUES
                    or before == "of"
                    and i > 1
                    and s[i - 2].lower() in PLACE_OF_CUES
                ):
                    cued[w] += 1
    names = {}
    for w, n in inside.items():
        if (
            n < min_count
            or lower[w.lower()] > 0
            or w.isupper()
            and len(w) > 1
            or w.lower() in PRONOUNS
        ):
            continue
        names[w] = "place" if cued[w] >= place_share * n else "person"
    return names


def word_category(word: str, names: dict[str, str]) -> str | None:
    """The category of ``word`` (one of :data:`WORD_CATEGORIES`) or ``None`` (unlabelled)."""
    w = word.lower()
    if word in names:
        return names[word]
    if w in NUMBER_WORDS or word.replace(",", "").replace(".", "").isdigit():
        return "number"
    if w in TIME_WORDS:
        return "time"
    for cat, words in (
        ("pronoun", PRONOUNS),
        ("preposition", PREPOSITIONS),
        ("determiner", DETERMINERS),
    ):
        if w in words:
            return cat
    return None


def word_tag(word: str, names: dict[str, str]) -> str:
    """A part-of-speech-like tag: ``NUM``, ``NAME``, ``PRON``, ``PREP``, ``DET``, ``CONJ``,
    ``PUNCT`` or ``WORD`` (every other word)."""
    w = word.lower()
    if not any(ch.isalnum() for ch in word):
        return "PUNCT"
    if word in names:
        return "NAME"
    if w in NUMBER_WORDS or word.replace(",", "").isdigit():
        return "NUM"
    for tag, words in (
        ("PRON", PRONOUNS),
        ("PREP", PREPOSITIONS),
        ("DET", DETERMINERS),
        ("CONJ", CONJUNCTIONS),
    ):
        if w in words:
            return tag
    return "WORD"


def phrase_class(phrase: Sequence[str], names: dict[str, str]) -> str | None:
    """The semantic class of a phrase: ``time`` if it holds a time word (``for seven days``),
    else ``place`` or ``person`` if it holds such a name, else ``number`` if it holds a number;
    ``None`` otherwise. A phrase with both a place and a person name is left unlabelled."""
    cats = {word_category(w, names) for w in phrase}
    if "time" in cats:
        return "time"
    if "place" in cats and "person" in cats:
        return None
    for c in ("place", "person", "number"):
        if c in cats:
            return c
    return None


def phrase_pattern(phrase: Sequence[str], names: dict[str, str], length: int = 2) -> str:
    """The syntactic pattern of a phrase: the :func:`word_tag` of its first ``length`` words
    (``"PREP DET"`` for *in the land of*)."""
    return " ".join(word_tag(w, names) for w in phrase[:length])


# -- purity -----------------------------------------------------------------------------------------
def _labelled(labels: Sequence) -> np.ndarray:
    return np.array([lab is not None for lab in labels], dtype=bool)


def knn_same(X, labels: Sequence, k: int = 10) -> np.ndarray:
    """For each labelled row of ``X (N, d)`` (dense array or scipy sparse matrix), in order, the
    share of its ``k`` nearest labelled neighbours (cosine distance, the row itself excluded)
    that carry the same label: ``(L,) float64`` for the ``L`` labelled rows. ``labels``: ``N``
    labels, ``None`` for unlabelled rows (left out both as points and as neighbours)."""
    from sklearn.neighbors import NearestNeighbors

    if len(labels) != X.shape[0]:
        raise ValueError(f"knn_purity: {X.shape[0]} rows but {len(labels)} labels")
    keep = _labelled(labels)
    y = np.array([str(lab) for lab in labels], dtype=object)[keep]
    if len(y) <= k:
        raise ValueError(f"knn_purity: {len(y)} labelled points, need more than k={k}")
    Xl = X[keep]
    nn = NearestNeighbors(n_neighbors=k + 1, metric="cosine", algorithm="brute").fit(Xl)
    _, idx = nn.kneighbors(Xl)
    same = np.zeros(len(y))
    for i, row in enumerate(idx):
        row = [j for j in row if j != i][:k]
        same[i] = np.mean(y[row] == y[i])
    return same


def knn_purity(X, labels: Sequence, k: int = 10) -> float:
    """The nearest-neighbour class purity: the mean of :func:`knn_same` over the labelled rows."""
    return float(knn_same(X, labels, k).mean())


def chance_same(labels: Sequence) -> np.ndarray:
    """For each labelled point, in order, the expected share of same-label neighbours when they
    are drawn at random among the other labelled points, ``(n_c - 1) / (N - 1)`` for its label
    ``c``: ``(L,) float64`` (its mean is :func:`chance_purity`)."""
    y = [lab for lab in labels if lab is not None]
    if len(y) < 2:
        raise ValueError("chance_purity: fewer than two labelled points")
    counts = Counter(y)
    return np.array([(counts[lab] - 1) / (len(y) - 1) for lab in y], dtype=float)


def chance_purity(labels: Sequence) -> float:
    """The expected :func:`knn_purity` when the neighbours are drawn at random among the other
    labelled points: ``sum_c n_c (n_c - 1) / (N (N - 1))``."""
    return float(chance_same(labels).mean())


@dataclass
class Purity:
    """One purity measure (a column of the chapter's table) as :func:`purity_measure` took it.

    ``labels``: the labels measured, a left-out class's points set to ``None``; ``members``:
    the points of every class before leaving any out (the ``expected`` ones included, 0 when
    absent); ``left_out``: the classes with fewer than ``min_members`` points and their count;
    ``reason``: why nothing could be measured (``None`` when it was); ``same``: per
    representation, in the order given, then ``"chance"``, the per-point shares of
    :func:`knn_same` (:func:`chance_same`) over the labelled points (empty arrays when
    ``reason``)."""

    labels: list
    members: dict[str, int]
    left_out: dict[str, int]
    reason: str | None
    same: dict[str, np.ndarray]

    @property
    def measured(self) -> bool:
        return self.reason is None

    @property
    def points(self) -> int:
        """The labelled points measured."""
        return sum(lab is not None for lab in self.labels)

    def purity(self) -> dict[str, float]:
        """The mean share per representation (NaN for each when nothing was measured)."""
        return {
            name: float(v.mean()) if self.measured else float("nan")
            for name, v in self.same.items()
        }


def unmeasurable_reason(labels: Sequence, k: int) -> str | None:
    """Why the ``k``-nearest-neighbour purity of ``labels`` cannot be measured, or ``None``: no
    labelled point, a single class (every neighbour shares it), no class with two points (no
    point can have a neighbour of its own class), or no more than ``k`` labelled points."""
    counts = Counter(lab for lab in labels if lab is not None)
    n = sum(counts.values())
    if n == 0:
        return "no point has a category"
    if len(counts) == 1:
        ((only, m),) = counts.items()
        return f"only one category is left ({only}, {m} points): every neighbour would share it"
    if max(counts.values()) < 2:
        return "no category has two points: no point can have a neighbour of its own category"
    if n <= k:
        return f"only {n} labelled points, fewer than the {k} neighbours of each plus itself"
    return None


def purity_measure(
    labels: Sequence,
    representations: dict,
    k: int = 10,
    min_members: int = 2,
    expected: Sequence[str] = (),
) -> Purity:
    """The nearest-neighbour class purity of ``labels`` (``N`` labels, ``None``: unlabelled) in
    each of ``representations`` (name -> ``(N, d)`` array or sparse matrix), plus chance, as a
    :class:`Purity`. It never raises for want of labelled points:

    * a class with fewer than ``min_members`` points (``expected`` names classes that count as
      present with 0 points) is left out: its points become unlabelled, and ``left_out`` says so;
    * when what is left cannot be measured (:func:`unmeasurable_reason`), ``reason`` says why
      and nothing is computed.

    With every class at ``min_members`` or more, the shares are those of :func:`knn_same` and
    :func:`chance_same` on ``labels`` as given."""
    if min_members < 1:
        raise ValueError(f"purity_measure: min_members must be >= 1, got {min_members}")
    counts = Counter(lab for lab in labels if lab is not None)
    members = {c: counts.get(c, 0) for c in expected}
    members.update({c: n for c, n in counts.items() if c not in members})
    left_out = {c: n for c, n in members.items() if n < min_members}
    kept = [None if lab is None or lab in left_out else lab for lab in labels]
    reason = unmeasurable_reason(kept, k)
    if reason is None:
        same = {name: knn_same(X, kept, k) for name, X in representations.items()}
        same["chance"] = chance_same(kept)
    else:
        same = {name: np.zeros(0) for name in [*representations, "chance"]}
    return Purity(kept, members, left_out, reason, same)


def bag_of_words(phrases: Sequence[Sequence[str]]):
    """Phrases as word-count vectors: a scipy CSR matrix ``(N, V)`` (the bag-of-words baseline)."""
    from scipy.sparse import csr_matrix

    index: dict[str, int] = {}
    rows, cols = [], []
    for i, p in enumerate(phrases):
        for w in p:
            rows.append(i)
            cols.append(index.setdefault(w, len(index)))
    return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(phrases), max(1, len(index))))


def context_counts(
    words: Sequence[str], sentences: Iterable[Sequence[str]], window: int = 2, contexts: int = 2000
):
    """Words as counts of the ``contexts`` most frequent words within ``window`` positions of
    them in ``sentences``: a CSR matrix ``(len(words), contexts)`` -- the bag-of-words baseline
    for single words (a word's one-hot vector has no neighbours)."""
    from scipy.sparse import csr_matrix

    sentences = list(sentences)
    freq = Counter(w for s in sentences for w in s)
    ctx = {w: j for j, (w, _) in enumerate(freq.most_common(contexts))}
    row_of = {w: i for i, w in enumerate(words)}
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for s in sentences:
        for i, w in enumerate(s):
            r = row_of.get(w)
            if r is None:
                continue
            for j in range(max(0, i - window), min(len(s), i + window + 1)):
                if j != i and s[j] in ctx:
                    counts[(r, ctx[s[j]])] += 1
    if counts:
        (r, c), v = zip(*counts.keys()), list(counts.values())
    else:
        r, c, v = (), (), []
    return csr_matrix((v, (r, c)), shape=(len(words), max(1, len(ctx))), dtype=float)


# -- t-SNE as an artifact -----------------------------------------------------------------------
def array_checksum(X: np.ndarray) -> str:
    """sha256 of an array's shape, dtype and bytes."""
    X = np.ascontiguousarray(X)
    h = hashlib.sha256(f"{X.shape}{X.dtype}".encode())
    h.update(X.tobytes())
    return h.hexdigest()


def tsne_artifact(
    cache: ArtifactCache,
    kind: str,
    X: np.ndarray,
    perplexity: float = 30.0,
    iterations: int = 1000,
    seed: int = 0,
    config: dict | None = None,
) -> Artifact:
    """A 2-D Barnes--Hut t-SNE of ``X (N, d)`` (scikit-learn, PCA initialisation) as the
    artifact ``kind``: ``coords.npy (N, 2) float32``. Its key holds ``perplexity``,
    ``iterations``, ``seed``, ``config`` (what ``X`` is, e.g. the model's key) and the checksum
    of ``X``; reading it back (:func:`tsne_coords`) never recomputes."""
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or len(X) < 5:
        raise ValueError(f"tsne_artifact: X must be (N >= 5, d), got {X.shape}")
    if not 0 < perplexity < len(X):
        raise ValueError(
            f"tsne_artifact: perplexity={perplexity} must be in (0, {len(X)}) for {len(X)} points"
        )
    full = {
        **(config or {}),
        "perplexity": float(perplexity),
        "iterations": int(iterations),
        "seed": int(seed),
        "method": "barnes_hut",
        "init": "pca",
        "points": int(len(X)),
    }

    def make(out: Path, work: Path) -> dict:
        import time
        from sklearn.manifold import TSNE

        t = time.perf_counter()
        tsne = TSNE(
            n_components=2,
            perplexity=perplexity,
            max_iter=iterations,
            random_state=seed,
            method="barnes_hut",
            init="pca",
            learning_rate="auto",
        )
        coords = tsne.fit_transform(X)
        np.save(out / "coords.npy", coords.astype(np.float32))
        return {"seconds": time.perf_counter() - t, "kl_divergence": float(tsne.kl_divergence_)}

    return cache.build(kind, full, make, data=array_checksum(X))


def tsne_coords(art: Artifact) -> np.ndarray:
    """``(N, 2) float32``: the coordinates of a :func:`tsne_artifact`."""
    return np.load(art.file("coords.npy"))


#: the fewest points :func:`tsne_artifact` maps
MIN_MAP_POINTS = 5


def map_perplexity(perplexity: float, points: int) -> float:
    """``perplexity``, lowered to ``(points - 1) / 3`` for a map of few points (t-SNE needs a
    perplexity well below the number of points; scikit-learn looks at ``3 * perplexity``
    neighbours)."""
    return min(float(perplexity), (points - 1) / 3)


def note_figure(text: str, figsize: tuple = (6, 1.6)):
    """A figure that only says ``text``: what stands in for a map that cannot be drawn, so the
    page says why instead of missing the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=10)
    ax.set_axis_off()
    return fig


# -- regions and figures ----------------------------------------------------------------------------
def dense_region(
    coords: np.ndarray, members: np.ndarray, size: int = 30, pad: float = 0.05
) -> tuple:
    """The box ``(x0, x1, y0, y1)`` around the densest group of ``members`` (a boolean mask over
    ``coords (N, 2)``): of every member's ``size`` nearest points on the map, the group with the
    largest share of members (ties: the tightest), padded by ``pad`` of its width and height."""
    members = np.asarray(members, dtype=bool)
    if not members.any():
        raise ValueError("dense_region: no point of the category is on the map")
    from sklearn.neighbors import NearestNeighbors

    size = min(size, len(coords))
    nn = NearestNeighbors(n_neighbors=size).fit(coords)
    dist, idx = nn.kneighbors(coords[members])
    share = members[idx].mean(1)
    best = np.lexsort((dist[:, -1], -share))[0]
    pts = coords[idx[best]]
    (x0, y0), (x1, y1) = pts.min(0), pts.max(0)
    dx, dy = (x1 - x0) * pad + 1e-6, (y1 - y0) * pad + 1e-6
    return (float(x0 - dx), float(x1 + dx), float(y0 - dy), float(y1 + dy))


def _colours(categories: Sequence[str | None], order: Sequence[str]) -> tuple[list, dict]:
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab10")
    palette = {c: cmap(i % 10) for i, c in enumerate(order)}
    return [
        palette.get(c, (0.75, 0.75, 0.75, 1.0)) if c is not None else (0.75, 0.75, 0.75, 1.0)
        for c in categories
    ], palette


def map_figure(
    coords: np.ndarray,
    texts: Sequence[str],
    categories: Sequence[str | None],
    order: Sequence[str],
    regions: Sequence[tuple[str, tuple]],
    max_labels: int = 40,
    title: str = "",
    point_size: float = 3.0,
):
    """The whole map and one enlarged panel per region (A Figs. 4--7).

    ``coords (N, 2)``; ``texts``: the label of each point (word or phrase); ``categories``: the
    colour class of each point (``None``: grey); ``order``: the classes in the legend;
    ``regions``: ``(name, (x0, x1, y0, y1))`` boxes, drawn on the whole map and enlarged with
    up to ``max_labels`` points labelled. One region gives a 1 x 2 figure (Fig. 4), more a 2 x 2.
    """
    import matplotlib.pyplot as plt

    colours, palette = _colours(categories, order)
    n = 1 + len(regions)
    rows, cols = (1, n) if n <= 2 else (2, 2) if n <= 4 else (int(np.ceil(n / 3)), 3)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 5.5 * rows), squeeze=False)
    axes = axes.ravel()
    ax = axes[0]
    ax.scatter(coords[:, 0], coords[:, 1], s=point_size, c=colours, linewidths=0)
    for k, (name, (x0, x1, y0, y1)) in enumerate(regions):
        ax.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.2, ec="black"))
        ax.annotate(str(k + 1), (x1, y1), fontsize=9, fontweight="bold")
    lo, hi = (
        np.percentile(coords, 0.5, axis=0),
        np.percentile(coords, 99.5, axis=0),
    )  # a few far outliers
    for _, (x0, x1, y0, y1) in regions:  # must not shrink the map
        lo, hi = np.minimum(lo, [x0, y0]), np.maximum(hi, [x1, y1])
    margin = (hi - lo) * 0.05 + 1e-6
    (
        ax.set_xlim(lo[0] - margin[0], hi[0] + margin[0]),
        ax.set_ylim(lo[1] - margin[1], hi[1] + margin[1]),
    )
    ax.set_title(title or f"all {len(coords)} points")
    handles = [plt.Line2D([], [], marker="o", ls="", color=palette[c], label=c) for c in order]
    ax.legend(handles=handles, fontsize=7, loc="best", markerscale=1.2)
    ax.set_xticks([]), ax.set_yticks([])
    for k, (name, (x0, x1, y0, y1)) in enumerate(regions):
        ax = axes[k + 1]
        inside = np.flatnonzero(
            (coords[:, 0] >= x0)
            & (coords[:, 0] <= x1)
            & (coords[:, 1] >= y0)
            & (coords[:, 1] <= y1)
        )
        ax.scatter(
            coords[inside, 0], coords[inside, 1], s=12, c=[colours[i] for i in inside], linewidths=0
        )
        shown = (
            inside[:max_labels]
            if len(inside) <= max_labels
            else inside[np.random.default_rng(k).choice(len(inside), max_labels, replace=False)]
        )
        for i in shown:
            ax.annotate(
                texts[i],
                coords[i],
                fontsize=6.5,
                color=colours[i] if categories[i] is not None else "0.35",
                xytext=(2, 2),
                textcoords="offset points",
            )
        ax.set_xlim(x0, x1), ax.set_ylim(y0, y1)
        ax.set_title(f"{k + 1}: {name} ({len(inside)} points, {len(shown)} labelled)", fontsize=9)
        ax.set_xticks([]), ax.set_yticks([])
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


# -- the model's codes and gates ------------------------------------------------------------------
def phrase_batches(
    vocab,
    phrases: Sequence[Sequence[str]],
    batch_size: int = 256,
    device: torch.device | str | None = None,
):
    """Yield ``(index (b,), src (b, S) int64, mask (b, S) bool)`` for ``phrases`` (word lists),
    each ending in ``EOS`` as the encoder reads it (:func:`rnnlib.batch.source_batch`), on
    ``device`` (``None``: the host)."""
    from ..batch import source_batch

    for k in range(0, len(phrases), batch_size):
        idx = np.arange(k, min(k + batch_size, len(phrases)))
        batch = source_batch([vocab.encode(phrases[i]) for i in idx])
        if device is not None:
            batch = batch.to(device)
        yield idx, batch.src, batch.src_mask


def _device(model: torch.nn.Module) -> torch.device:
    """Where ``model``'s parameters are: the functions below compute there and return host arrays."""
    return next(model.parameters()).device


@torch.no_grad()
def phrase_codes(
    model: torch.nn.Module, vocab, phrases: Sequence[Sequence[str]], batch_size: int = 256
) -> np.ndarray:
    """``c`` (A §2.2: ``c = tanh(V h<N>)``) of each phrase: ``(len(phrases), n) float32``
    (``(0, 0)`` for no phrase)."""
    out = None
    for idx, src, mask in phrase_batches(
        vocab, phrases, batch_size, _device(model)
    ):  # on the model's device
        c = model.encode(src, mask).context
        if c is None:
            raise ValueError(
                "phrase_codes: the model has no fixed summary c (an RNNsearch?); use an RNNencdec"
            )
        if out is None:
            out = np.zeros((len(phrases), c.shape[1]), dtype=np.float32)
        out[idx] = c.float().cpu().numpy()
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


@torch.no_grad()
def encoder_gates(encoder: torch.nn.Module, src: torch.Tensor, mask: torch.Tensor):
    """The reset gates ``r``, update gates ``z`` (A Eqs. 5--6) and states ``h`` of the encoder's
    GRU over ``src (B, S)``: three ``(B, S, n)`` tensors, zero past each length.

    ``encoder``: an :class:`rnnlib.encoders.RNNEncoder` (``embed``, ``rnn.cell`` with ``W_r``,
    ``U_r``, ``W_z``, ``U_z``, the names of A's Eqs. 5--6).
    """
    cell = encoder.rnn.cell
    x = encoder.embed(src)
    B, S, _ = x.shape
    h = x.new_zeros(B, cell.hidden_size)
    rs, zs, hs = [], [], []
    for t in range(S):
        r = torch.sigmoid(cell.W_r(x[:, t]) + cell.U_r(h))  # A Eq. 5
        z = torch.sigmoid(cell.W_z(x[:, t]) + cell.U_z(h))  # A Eq. 6
        h = cell(x[:, t], h)  # A Eqs. 7-8
        rs.append(r), zs.append(z), hs.append(h)
    m = mask.unsqueeze(-1).to(x.dtype)
    return torch.stack(rs, 1) * m, torch.stack(zs, 1) * m, torch.stack(hs, 1) * m


def gate_activity(
    model: torch.nn.Module,
    vocab,
    phrases: Sequence[Sequence[str]],
    batch_size: int = 256,
    threshold: float = 0.5,
) -> dict[str, np.ndarray]:
    """Per hidden unit ``(n,)``: ``reset_active``, the share of the steps over ``phrases`` at
    which ``r < threshold`` (the unit drops its previous state), ``update_active``, the share
    with ``z > threshold`` (it keeps its previous state, A's Eq. 7), and the mean gates
    ``r_mean``, ``z_mean``. Steps: every word and the ``EOS`` of every phrase."""
    r_low = z_high = r_sum = z_sum = None
    steps = 0
    for _, src, mask in phrase_batches(
        vocab, phrases, batch_size, _device(model)
    ):  # on the model's device
        r, z, _ = encoder_gates(model.encoder, src, mask)
        m = mask.unsqueeze(-1)
        add = [
            ((r < threshold) & m).sum((0, 1)),
            ((z > threshold) & m).sum((0, 1)),
            r.sum((0, 1)),
            z.sum((0, 1)),
        ]
        if r_low is None:
            r_low, z_high, r_sum, z_sum = (a.double() for a in add)
        else:
            r_low, z_high, r_sum, z_sum = (
                a + b.double() for a, b in zip((r_low, z_high, r_sum, z_sum), add)
            )
        steps += int(mask.sum())
    return {
        "reset_active": (r_low / steps).cpu().numpy(),
        "update_active": (z_high / steps).cpu().numpy(),
        "r_mean": (r_sum / steps).cpu().numpy(),
        "z_mean": (z_sum / steps).cpu().numpy(),
    }


@torch.no_grad()
def perturbation_memory(
    model: torch.nn.Module,
    vocab,
    phrases: Sequence[Sequence[str]],
    lag: int = 3,
    seed: int = 0,
    batch_size: int = 256,
) -> np.ndarray:
    """How long each hidden unit remembers, ``(n,)``: the first word of each phrase is replaced
    by a random word of the shortlist (seeded), and the unit's memory is
    ``sum |h'_j<1 + lag> - h_j<1 + lag>| / sum |h'_j<1> - h_j<1>|`` over the phrases (of more
    than ``lag`` words, ``EOS`` included): the share of the change it still carries ``lag``
    words later. 1 means nothing forgotten, 0 everything."""
    from ..specials import SPECIALS

    NUM_SPECIALS = len(SPECIALS)
    if lag < 1:
        raise ValueError(f"perturbation_memory: lag must be >= 1, got {lag}")
    long = [p for p in phrases if len(p) + 1 > lag]
    if not long:
        raise ValueError(f"perturbation_memory: no phrase has more than {lag} tokens")
    g = torch.Generator().manual_seed(
        seed
    )  # the replacements drawn on the host: the same on any device
    device = _device(model)
    first = last = None
    for _, src, mask in phrase_batches(vocab, long, batch_size):
        other = src.clone()
        repl = torch.randint(NUM_SPECIALS, len(vocab), (src.shape[0],), generator=g)
        same = repl == src[:, 0]
        repl[same] = NUM_SPECIALS + (repl[same] + 1 - NUM_SPECIALS) % (len(vocab) - NUM_SPECIALS)
        other[:, 0] = repl
        src, other, mask = src.to(device), other.to(device), mask.to(device)
        _, _, h = encoder_gates(model.encoder, src, mask)
        _, _, h2 = encoder_gates(model.encoder, other, mask)
        d = (h2 - h).abs()
        a, b = d[:, 0].sum(0).double(), d[:, lag].sum(0).double()
        first, last = (a, b) if first is None else (first + a, last + b)
    return (last / first.clamp_min(1e-12)).cpu().numpy()


def most_frequent_sample(
    model: torch.nn.Module,
    src_vocab,
    tgt_vocab,
    source: Sequence[str],
    n: int = 50,
    generator: torch.Generator | None = None,
) -> tuple[tuple[str, ...], int]:
    """The most frequent of ``n`` ancestral samples of the decoder for ``source`` (a word list),
    as A's Table 3 reads them (:func:`rnnlib.search.sample`), with how often it was drawn; ties
    go to the sample the model scores higher, then to the first drawn. ``generator``: on the
    model's device (:func:`rnnlib.search.sample` draws there)."""
    from ..batch import source_batch
    from ..search import sample

    hyps = sample(model, source_batch([src_vocab.encode(list(source))]), n=n, generator=generator)[
        0
    ]
    counts: dict[tuple[str, ...], int] = {}
    score: dict[tuple[str, ...], float] = {}
    for h in hyps:
        words = tuple(tgt_vocab.decode(h.tokens))
        counts[words] = counts.get(words, 0) + 1
        score.setdefault(words, h.score)
    best = max(counts, key=lambda w: (counts[w], score[w]))
    return best, counts[best]


__all__ = [
    "MIN_MAP_POINTS",
    "Purity",
    "WORD_CATEGORIES",
    "array_checksum",
    "bag_of_words",
    "chance_purity",
    "chance_same",
    "context_counts",
    "dense_region",
    "encoder_gates",
    "gate_activity",
    "knn_purity",
    "knn_same",
    "map_figure",
    "map_perplexity",
    "most_frequent_sample",
    "note_figure",
    "perturbation_memory",
    "phrase_batches",
    "phrase_class",
    "phrase_codes",
    "phrase_pattern",
    "proper_names",
    "purity_measure",
    "tsne_artifact",
    "tsne_coords",
    "unmeasurable_reason",
    "word_category",
    "word_tag",
]
