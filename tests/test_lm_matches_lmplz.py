"""The LM estimator (rnnlib.smt.lm) gives what KenLM's ``lmplz`` gives: on a small fixed corpus,
the same n-grams, log10 probabilities and back-off weights (to 1e-5) as the ARPA files lmplz
wrote (``tests/data/lmplz``; rebuilt, with the exact lmplz command, by
``tools/make_lmplz_fixture.py``, which the tests never run)."""

from pathlib import Path

import numpy as np
import pytest

from rnnlib.smt.lm import FALLBACK_DISCOUNTS, train_arpa

DATA = Path(__file__).resolve().parent / "data" / "lmplz"
TOL = 1e-5


def read_arpa(path: Path) -> dict[int, dict[str, tuple[float, float]]]:
    """``{order: {n-gram: (log10 p, log10 back-off)}}`` of an ARPA file (back-off 0 where the
    line has none), checking the counts of its header."""
    header: dict[int, int] = {}
    grams: dict[int, dict[str, tuple[float, float]]] = {}
    order = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line == "\\data\\" or line == "\\end\\":
            continue
        if line.startswith("ngram "):
            n, count = line[len("ngram ") :].split("=")
            header[int(n)] = int(count)
        elif line.startswith("\\") and line.endswith("-grams:"):
            order = int(line[1 : -len("-grams:")])
            grams[order] = {}
        else:
            fields = line.split("\t")
            assert len(fields) in (2, 3), f"{path}: {line!r}"
            assert fields[1] not in grams[order], f"{path}: {fields[1]!r} twice"
            backoff = float(fields[2]) if len(fields) == 3 else 0.0
            grams[order][fields[1]] = (float(fields[0]), backoff)
    assert {n: len(g) for n, g in grams.items()} == header, path
    return grams


def sentences() -> list[list[str]]:
    return [line.split() for line in (DATA / "corpus.txt").read_text(encoding="utf-8").splitlines()]


def test_the_fixture_is_small_and_what_the_script_describes():
    lines = (DATA / "corpus.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 400 and all(line and line == " ".join(line.split()) for line in lines)
    for order in (3, 5):
        assert (DATA / f"o{order}.arpa").stat().st_size < 300_000


@pytest.mark.parametrize("order", [3, 5])
def test_same_ngrams_probabilities_and_backoffs_as_lmplz(tmp_path, order):
    theirs = read_arpa(DATA / f"o{order}.arpa")
    model = train_arpa(sentences(), tmp_path / "ours.arpa", order)
    # no order falls back to the fixed discounts: lmplz ran without --discount_fallback
    assert all(d != FALLBACK_DISCOUNTS for d in model.discounts)
    ours = read_arpa(tmp_path / "ours.arpa")
    assert sorted(ours) == sorted(theirs) == list(range(1, order + 1))
    for n in range(1, order + 1):
        assert ours[n].keys() == theirs[n].keys(), f"the {n}-grams differ"
        keys = sorted(theirs[n])
        # <s> is never predicted: its unigram log10 p is a placeholder (-99 here, 0 in lmplz)
        if n == 1:
            assert ours[1]["<s>"][0] == -99 and theirs[1]["<s>"][0] == 0
            keys.remove("<s>")
            assert ours[1]["<s>"][1] == pytest.approx(theirs[1]["<s>"][1], abs=TOL)
        for i, what in ((0, "log10 p"), (1, "log10 back-off")):
            a = np.array([ours[n][k][i] for k in keys])
            b = np.array([theirs[n][k][i] for k in keys])
            worst = int(np.argmax(np.abs(a - b)))
            assert abs(a[worst] - b[worst]) <= TOL, (
                f"{n}-gram {keys[worst]!r}: {what} {a[worst]} here, {b[worst]} in lmplz"
            )
