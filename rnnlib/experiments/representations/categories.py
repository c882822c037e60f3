"""Categories of words and phrases read from the corpus by declared rules (Cho et al. 2014,
§4.4, Figs. 4--7: the colours of the maps and the classes of the purity measure).

No tagger is installed, so the categories are rules over the corpus and short English word
lists:

* :func:`proper_names` -- words written with a capital inside sentences, ``person`` or
  ``place`` by the words before them (``in Egypt``, ``land of Canaan``);
* :func:`word_category` -- one of :data:`WORD_CATEGORIES` (number, time, person, place,
  pronoun, preposition, determiner) or ``None``;
* :func:`word_tag` -- a part-of-speech-like tag (``NUM``, ``NAME``, ``PRON``, ``PREP``, ``DET``,
  ``CONJ``, ``PUNCT``, ``WORD``);
* :func:`phrase_class` -- a phrase's semantic class (time, place, person, number) and
  :func:`phrase_pattern` -- its syntactic pattern (the tags of its first two words);
* :func:`class_words`, :func:`pattern_words`, :func:`word_key` -- the words that *define* a
  phrase's class, its pattern, a word's category: the purity measure does not count a neighbour
  that shares one of them (it would be a hit for any representation that sees the word);
* :data:`CUE_WORDS` -- the words that tell places from people (the context-count baseline leaves
  them out).

Deviations
----------
- A's categories are read off the maps by eye; ours are rules over the corpus and short English
  word lists, not a tagger (none is installed): names are words written with a capital inside
  sentences, and person and place names are told apart by the English words before them.
- On another source language, on lowercased text or on a small sample a category can be
  (nearly) empty (the chapter then leaves it out of the measure and says so).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred hundreds "
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
#: every word the place rule of :func:`proper_names` reads before a name
CUE_WORDS = PLACE_CUES | PLACE_OF_CUES | {"of"}
#: the categories of :func:`word_category`, in the order figures and tables list them
WORD_CATEGORIES = ("number", "time", "person", "place", "pronoun", "preposition", "determiner")


#: a name is a place when at least this share of its occurrences follow a place cue
PLACE_SHARE = 0.25


def proper_names(
    sentences: Iterable[Sequence[str]], min_count: int = 3, place_share: float = PLACE_SHARE
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


def word_key(word: str) -> frozenset[str]:
    """The word defining a word's category: the word itself, lowercased (*Day* and *day*)."""
    return frozenset([word.lower()])


def class_words(phrase: Sequence[str], names: dict[str, str]) -> frozenset[str]:
    """The words of ``phrase`` that set its :func:`phrase_class` (its time words for *time*, its
    place names for *place*, ...; lowercased, names as written); empty for an unlabelled
    phrase."""
    cls = phrase_class(phrase, names)
    if cls is None:
        return frozenset()
    return frozenset(
        w if w in names else w.lower() for w in phrase if word_category(w, names) == cls
    )


def pattern_words(phrase: Sequence[str], length: int = 2) -> frozenset[str]:
    """The words whose tags make the :func:`phrase_pattern`: the first ``length``, lowercased."""
    return frozenset(w.lower() for w in phrase[:length])
