"""Extra phrase-pair features for the log-linear model (paper A, Sec. 5.1 and footnote 3).

Paper A adds to each phrase pair of the baseline's table (i) the RNN Encoder-Decoder's
``log p(target phrase | source phrase)`` and (ii) a "word penalty" counting the words
unknown to the neural networks, then re-tunes all weights with MERT. A
:class:`FeatureTable` holds such values keyed by ``(source words, target words)``; the
decoder (:class:`rnnlib.smt.decoder.Decoder`, argument ``extra``) appends them to the phrase
features, so MERT tunes one more weight per feature name.

A table has no default value unless one is given explicitly: looking up a pair it lacks raises
``KeyError`` naming the pair, so no option of the decoder carries a value nobody computed. Build
a table over every pair the decoder can use, pass-through copies of unknown words included
(:func:`rnnlib.smt.system.decoding_pairs`, :func:`rnnlib.smt.rnn_scorer.decoder_pairs`).

Unknown words (Moses' ``UnknownWordPenalty``): a source word the phrase table lacks is copied
to the output by an option whose phrase-table scores are 0 (as in Moses, where that option comes
from no phrase table) and whose ``Feature.UNKNOWN_WORD`` value is ``UNKNOWN_WORD_PENALTY`` =
-100 (Moses' floor of ``log 0``); its weight, 1, is fixed: MERT does not tune it
(``FIXED_WEIGHTS``), as Moses marks the feature ``tuneable=false``. A copy is thus used only
where no phrase covers the word, and MERT cannot learn to reward copying.

Layout of the decoder's feature and weight vectors: the base features at the positions named
by :class:`Feature` (names in ``BASE_FEATURES``), then the extra features from position
``EXTRA`` on, table by table in the order the tables were given.

Storage: JSON lines, one pair per line: ``{"src": "...", "tgt": "...", "values": [...]}``
after a first line ``{"names": [...], "default": [...]}``.

Paper A's CSLM is not a phrase-pair feature: it enters the decoder as a stateful language
model (:mod:`rnnlib.smt.cslm`, ``Decoder(lms=...)``).

Deviations
----------
* None here: Moses gives an unknown word's copy the same fixed -100 (see above).
"""

from __future__ import annotations

import json
from enum import IntEnum
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .phrases import FEATURES as TABLE_SCORES

Pair = tuple[tuple[str, ...], tuple[str, ...]]


class Feature(IntEnum):
    """Positions of the base features in the decoder's feature and weight vectors (natural logs)."""

    P_T_GIVEN_S = 0  # log p(t|s), the phrase table's direct translation probability
    P_S_GIVEN_T = 1  # log p(s|t), the inverse one
    LEX_T_GIVEN_S = 2  # log lex(t|s), direct lexical weight
    LEX_S_GIVEN_T = 3  # log lex(s|t), inverse lexical weight
    PHRASE_PENALTY = 4  # +1 per phrase
    WORD_PENALTY = 5  # -1 per target word (as in Moses)
    DISTORTION = 6  # -|start_k - end_{k-1}|, summed over the phrases
    LM = 7  # n-gram LM log p(e), with <s> and </s>
    UNKNOWN_WORD = (
        8  # UNKNOWN_WORD_PENALTY per copied unknown source word (Moses' UnknownWordPenalty)
    )


# Moses: the copy of an unknown word scores FloorScore(log 0) = -100 on its UnknownWordPenalty
# feature
UNKNOWN_WORD_PENALTY = -100.0
# weights that MERT leaves as they are (Moses: tuneable=false), by position
FIXED_WEIGHTS = {Feature.UNKNOWN_WORD: 1.0}


# the four phrase-table scores, in the column order of rnnlib.smt.phrases.FEATURES
TM_FEATURES = (
    Feature.P_T_GIVEN_S,
    Feature.P_S_GIVEN_T,
    Feature.LEX_T_GIVEN_S,
    Feature.LEX_S_GIVEN_T,
)
# the features that depend on the phrase pair alone, in the order a translation option stores them
PHRASE_FEATURES = TM_FEATURES + (Feature.PHRASE_PENALTY, Feature.WORD_PENALTY, Feature.UNKNOWN_WORD)
EXTRA = len(Feature)  # position of the first extra (FeatureTable) feature
# names (as in weights.json): "log " + the table's score name, else the member's name in lower case
BASE_FEATURES = tuple(
    "log " + TABLE_SCORES[TM_FEATURES.index(f)] if f in TM_FEATURES else f.name.lower()
    for f in Feature
)


class FeatureTable:
    """``names``: feature names; ``table``: ``{(src words, tgt words): values tuple}``;
    ``default``: values of pairs not in the table, or ``None`` (the default): such a lookup is an
    error."""

    def __init__(
        self,
        names: Sequence[str],
        table: dict[Pair, Sequence[float]],
        default: Sequence[float] | None = None,
    ):
        self.names = list(names)
        self.default = None if default is None else tuple(float(x) for x in default)
        if self.default is not None and len(self.default) != len(self.names):
            raise ValueError(
                f"FeatureTable: default has {len(self.default)} values for names {self.names}"
            )
        self.table: dict[Pair, tuple[float, ...]] = {}
        for (s, t), v in table.items():
            v = tuple(float(x) for x in v)
            if len(v) != len(self.names):
                raise ValueError(
                    f"FeatureTable: pair {' '.join(s)!r} ||| {' '.join(t)!r} has {len(v)} "
                    f"values for names {self.names}"
                )
            self.table[(tuple(s), tuple(t))] = v

    def __len__(self) -> int:
        return len(self.table)

    def lookup(self, src: Sequence[str], tgt: Sequence[str]) -> tuple[float, ...]:
        v = self.table.get((tuple(src), tuple(tgt)), self.default)
        if v is None:
            raise KeyError(
                f"feature {self.names}: the pair {' '.join(src)!r} ||| {' '.join(tgt)!r} "
                "has no value (build the table over every pair the decoder can use, copies of "
                "unknown words included)"
            )
        return v

    def save(self, path: Path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            default = None if self.default is None else list(self.default)
            f.write(json.dumps({"names": self.names, "default": default}) + "\n")
            for (s, t), v in self.table.items():
                f.write(
                    json.dumps(
                        {"src": " ".join(s), "tgt": " ".join(t), "values": list(v)},
                        ensure_ascii=False,
                    )
                    + "\n"
                )

    @classmethod
    def load(cls, path: Path) -> "FeatureTable":
        with open(path, encoding="utf-8") as f:
            head = json.loads(f.readline())
            table = {}
            for n, line in enumerate(f, start=2):
                try:
                    row = json.loads(line)
                    table[(tuple(row["src"].split()), tuple(row["tgt"].split()))] = row["values"]
                except (ValueError, KeyError) as err:
                    raise ValueError(f"{path}:{n}: bad feature line ({err})") from None
        return cls(head["names"], table, head["default"])


def scored_table(
    pairs: Iterable[Pair],
    scorer: Callable[[list[Pair]], Sequence[float]],
    name: str = "rnn",
    batch: int = 512,
) -> FeatureTable:
    """One feature from ``scorer``, called on batches of pairs and returning one value each
    (for paper A's RNN Encoder-Decoder: ``log p(tgt | src)``); no default."""
    pairs = list(pairs)
    table = {}
    for k in range(0, len(pairs), batch):
        chunk = pairs[k : k + batch]
        values = list(scorer(chunk))
        if len(values) != len(chunk):
            raise ValueError(
                f"scored_table: scorer returned {len(values)} values for {len(chunk)} pairs"
            )
        for p, v in zip(chunk, values):
            table[p] = (float(v),)
    return FeatureTable([name], table)


def unknown_word_table(
    pairs: Iterable[Pair], shortlist: set[str], side: str = "tgt", name: str = "unk_words"
) -> FeatureTable:
    """Paper A's word penalty (footnote 3): the number of words of the pair outside the
    networks' shortlist, on the target side (``side="tgt"``), source side or ``"both"``.
    ``pairs`` must hold every pair the decoder can use, copies of unknown words included: the
    table has no default."""
    if side not in ("src", "tgt", "both"):
        raise ValueError(f"unknown_word_table: side must be 'src', 'tgt' or 'both', got {side!r}")
    table = {}
    for s, t in pairs:
        n = 0
        if side in ("src", "both"):
            n += sum(w not in shortlist for w in s)
        if side in ("tgt", "both"):
            n += sum(w not in shortlist for w in t)
        table[(tuple(s), tuple(t))] = (float(n),)
    return FeatureTable([name], table)


__all__ = [
    "BASE_FEATURES",
    "EXTRA",
    "FIXED_WEIGHTS",
    "Feature",
    "FeatureTable",
    "PHRASE_FEATURES",
    "TM_FEATURES",
    "UNKNOWN_WORD_PENALTY",
    "scored_table",
    "unknown_word_table",
]
