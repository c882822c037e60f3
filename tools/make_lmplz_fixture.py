"""Rebuild the KenLM fixture of tests/test_lm_matches_lmplz.py (not run by the test suite).

Writes ``tests/data/lmplz/corpus.txt``: 400 short sentences of a toy English-like grammar,
drawn from ``random.Random(26)`` (no external text, so no licence to track), one sentence a
line, words separated by single spaces; then runs KenLM's ``lmplz`` on it for orders 3 and 5:

    lmplz -o 3 -S 100M -T <tmp> --text tests/data/lmplz/corpus.txt --arpa tests/data/lmplz/o3.arpa
    lmplz -o 5 -S 100M -T <tmp> --text tests/data/lmplz/corpus.txt --arpa tests/data/lmplz/o5.arpa

Only the order is set; every option that changes the model keeps lmplz's default, which is what
:mod:`rnnlib.smt.lm` implements: interpolated modified Kneser-Ney with three discounts per
order, unigrams interpolated with the uniform distribution (``--interpolate_unigrams 1``), no
pruning, no ``--discount_fallback`` (the corpus is large enough for every order's discounts to
be valid, so neither lmplz nor rnnlib falls back). ``-S`` (memory) and ``-T`` (temporary
files) do not change the output; rerunning the script rewrites the same bytes. One difference
the test allows: ``<s>``, never predicted, has the unigram log10 p 0 in lmplz's file and -99 in
rnnlib's (a placeholder in both; its back-off weights agree).

``lmplz`` was built once, outside the repository (``SRC`` a scratch folder, for example
``SRC=$(mktemp -d)``), from the kenlm 0.3.0 sources on PyPI::

    apt-get install cmake libboost-program-options-dev libboost-system-dev \\
        libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev
    pip download --no-deps --no-build-isolation --no-binary kenlm kenlm==0.3.0 -d "$SRC"
    cd "$SRC" && tar xzf kenlm-0.3.0.tar.gz && cd kenlm-0.3.0
    mkdir build && cd build && cmake .. -DCMAKE_BUILD_TYPE=Release && make -j2 lmplz

(``--no-binary :all:`` would also build pip's build dependencies, cmake included, from source.)

Usage: ``python tools/make_lmplz_fixture.py "$SRC"/kenlm-0.3.0/build/bin/lmplz``
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "lmplz"
ORDERS = (3, 5)
SENTENCES = 400

DET = ["the", "the", "the", "a", "a", "this", "that", "every", "no"]
ADJ = ["old", "small", "big", "red", "quiet", "young", "good", "dark", "green", "tired"]
NOUN = ["man", "woman", "child", "dog", "cat", "house", "river", "king", "bird", "tree", "city"]
NOUN += ["boat", "friend", "road", "horse", "garden", "teacher", "letter", "window", "song"]
VERB = ["sees", "likes", "finds", "hears", "follows", "builds", "watches", "knows", "calls"]
VERB += ["carries", "loves", "leaves"]
INTRANS = ["sleeps", "runs", "sings", "waits", "falls", "laughs", "speaks"]
PREP = ["in", "near", "by", "under", "behind", "with"]
ADV = ["today", "again", "slowly", "at night", "in the morning", "every day"]
# a long tail of rare words (names), so that every order's count-of-counts n1..n4 look like
# those of real text and the modified discounts are valid (without them, 71 word types, lmplz
# stops: "1-gram discount out of range for adjusted count 2")
_SYLLABLES = ["ka", "lo", "mi", "ran", "te", "su", "vel", "dor", "a", "ni", "bo", "sha"]
_names = random.Random(7)
NAME = sorted(
    {
        "".join(_names.choice(_SYLLABLES) for _ in range(2)).title()
        + _names.choice(["", "n", "s", "th", "ra"])
        for _ in range(400)
    }
)
FIXED = [  # repeated verbatim, so the higher orders have n-grams seen 2, 3, 4 times and more
    "the old man sees the river",
    "a child sleeps in the house",
    "the king calls the friend again",
    "the dog runs by the river every day",
]


def _pick(rng: random.Random, words: list[str]) -> str:
    # Zipf-like: the first words of a list are the frequent ones
    weights = [1.0 / (k + 1) for k in range(len(words))]
    return rng.choices(words, weights)[0]


def _noun_phrase(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return _pick(rng, NAME)
    words = [_pick(rng, DET)]
    if rng.random() < 0.4:
        words.append(_pick(rng, ADJ))
    words.append(_pick(rng, NOUN))
    return " ".join(words)


def sentence(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(FIXED)
    words = [_noun_phrase(rng)]
    if rng.random() < 0.6:
        words += [_pick(rng, VERB), _noun_phrase(rng)]
    else:
        words.append(_pick(rng, INTRANS))
    if rng.random() < 0.35:
        words += [_pick(rng, PREP), _noun_phrase(rng)]
    if rng.random() < 0.25:
        words.append(_pick(rng, ADV))
    return " ".join(words)


def corpus() -> list[str]:
    rng = random.Random(26)
    return [sentence(rng) for _ in range(SENTENCES)]


def main(lmplz: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    text = OUT / "corpus.txt"
    text.write_text("".join(s + "\n" for s in corpus()), encoding="utf-8")
    for order in ORDERS:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [lmplz, "-o", str(order), "-S", "100M", "-T", tmp]
            cmd += ["--text", str(text), "--arpa", str(OUT / f"o{order}.arpa")]
            print(" ".join(cmd), file=sys.stderr)
            subprocess.run(cmd, check=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("Usage: ")[-1].strip())
    main(sys.argv[1])
