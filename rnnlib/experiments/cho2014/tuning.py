"""What MERT did for A Table 1's rows: each run's tuning BLEU, where MERT started, the two
readings of the feature, the tuned weights and the system's signature."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from ...smt.system import (
    SMTResult,
)
from .rows import (
    DEFAULTS_ROW,
    MERT_START_SD,
    TUNED_ON_ROW,
    BaselineRow,
    extra_start,
    row_outputs,
)
from .setting import Params
from .table_1 import clark


def tuning_table(rows: dict[str, dict[int, SMTResult]]) -> pd.DataFrame:
    """Each MERT run's BLEU on the tuning set as MERT measured it (tokenised, its own BLEU), at
    its first decoding (its starting weights) and at its best, index ``(row, seed)``. A run
    that starts from the Baseline's weights begins at the Baseline's tuning BLEU and keeps its
    best decoding, so it cannot end below its start: a search that found nothing shows a gain
    of 0, and a gain on the tuning set that is lost on the held-out dev sentences is
    overfitting."""
    out = []
    for name, runs in rows.items():
        for s, r in runs.items():
            saved = json.loads(r.tuned.file("weights.json").read_text())
            history = saved.get("history") or []
            if saved.get("best_dev_bleu") is None or not history:
                continue
            first = history[0]["dev_bleu"]
            out.append(
                {
                    "row": name,
                    "MERT seed": s,
                    "first decoding": first,
                    "best": saved["best_dev_bleu"],
                    "gain over the first": saved["best_dev_bleu"] - first,
                    "decodings": len(history),
                }
            )
    return pd.DataFrame(out).set_index(["row", "MERT seed"]).round(2)


def start_words(P: Params) -> str:
    """Where MERT started the rows that add the RNN score, in words for the prose."""
    if P.mert_start == "baseline":
        return "from the Baseline's weights of the same seed, the new weight at 0"
    return f"from the decoder's defaults (Moses' weights, the new weight at {extra_start():g})"


def start_numbers(P: Params) -> dict[str, Any]:
    """How hard every row's MERT searched: its dev decodings and random starting points; the
    spread of each seed's own start around the defaults (:data:`MERT_START_SD`)."""
    return {
        "cho-mert-iterations": P.mert_iterations,
        "cho-mert-restarts": P.mert_restarts,
        "cho-mert-start-sd": (MERT_START_SD, 2),
    }


def _gain(name: str, row: tuple) -> dict[str, Any]:
    """A difference of two rows with its interval (:func:`clark`'s ``(label, diff, low, high)``,
    NaN where it was not measured) under ``name``, ``name-low`` and ``name-high``."""
    _, diff, low, high = row
    return {name: (diff, 2), f"{name}-low": (low, 2), f"{name}-high": (high, 2)}


NOT_MEASURED = ("", np.nan, np.nan, np.nan)


def per_word_numbers(rows: dict[str, dict[int, SMTResult]], base: BaselineRow) -> dict[str, Any]:
    """The per-word reading of the feature against the Baseline and against the paper's reading
    on test, each with :func:`clark`'s interval (NaN when the row is off)."""
    found = {"base": NOT_MEASURED, "rnn": NOT_MEASURED}
    if "+RNN per word" in rows:
        refs = list(base.data.test_refs[0])
        out = row_outputs({k: rows[k] for k in ("Baseline", "+RNN", "+RNN per word")})
        for key, b in (("base", "Baseline"), ("rnn", "+RNN")):
            a = "+RNN per word"
            found[key] = clark(f"{a} − {b}", out[a]["test"], out[b]["test"], refs)
    return {**_gain("cho-per-word-base", found["base"]), **_gain("cho-per-word-rnn", found["rnn"])}


def per_word_words(rows: dict[str, dict[int, SMTResult]]) -> str:
    """Whether the per-word row was built, in words for the prose."""
    return "was built" if "+RNN per word" in rows else "was not built (`per_word_row` is off)"


def best_tuning(runs: dict[int, SMTResult]) -> np.ndarray:
    """``(seeds,)``: each MERT run's best BLEU on the tuning set as MERT measured it (tokenised;
    :func:`tuning_table`'s "best")."""
    return np.array(
        [
            json.loads(r.tuned.file("weights.json").read_text())["best_dev_bleu"]
            for r in runs.values()
        ]
    )


def _pair_gains(
    rows: dict[str, dict[int, SMTResult]],
    base: BaselineRow,
    n_tune: int,
    pairs: dict[str, tuple[str, str]],
    prefix: str,
) -> dict[str, Any]:
    """Each difference ``a − b`` of ``pairs`` (key -> ``(a, b)``) on the held-out dev sentences
    (those after the first ``n_tune``) and on test with :func:`clark`'s interval, glued as
    ``<prefix>-<key>-heldout…`` and ``…-test…``; NaN where a row was not built."""
    found = {(k, s): NOT_MEASURED for k in pairs for s in ("heldout", "test")}
    names = {n for ab in pairs.values() for n in ab}
    if names <= set(rows):
        out = row_outputs({k: rows[k] for k in names})
        n_dev = len(out[next(iter(names))]["dev"][0])
        refs = {"heldout": list(base.data.dev_refs[0])[n_tune:n_dev]}
        refs["test"] = list(base.data.test_refs[0])

        def hyps(name: str, split: str) -> list[list[str]]:
            if split == "test":
                return out[name]["test"]
            return [lines[n_tune:] for lines in out[name]["dev"]]

        for key, (a, b) in pairs.items():
            for split, ref in refs.items():
                if ref:
                    found[(key, split)] = clark("", hyps(a, split), hyps(b, split), ref)
    got: dict[str, Any] = {}
    for (key, split), row in found.items():
        got.update(_gain(f"{prefix}-{key}-{split}", row))
    return got


def effort_numbers(
    rows: dict[str, dict[int, SMTResult]], base: BaselineRow, n_tune: int
) -> dict[str, Any]:
    """Equal tuning effort (:data:`TUNED_ON_ROW`): +RNN against the Baseline tuned on as long
    without the RNN score (``cho-effort-rnn…``, what C-A-T1-1 reads) and the Baseline tuned on
    against the Baseline (``cho-effort-tuning…``, the extra tuning alone: its control), on the
    held-out dev sentences and on test with :func:`clark`'s interval (NaN where the row was not
    built); whether it was, in words (``cho-effort``)."""
    pairs = {"rnn": ("+RNN", TUNED_ON_ROW), "tuning": (TUNED_ON_ROW, "Baseline")}
    got = _pair_gains(rows, base, n_tune, pairs, "cho-effort")
    got["cho-effort"] = (
        "was built"
        if TUNED_ON_ROW in rows
        else "was not built (`mert_start` is `defaults`: no extra tuning to match)"
    )
    return got


def warm_start_numbers(
    rows: dict[str, dict[int, SMTResult]], base: BaselineRow, n_tune: int
) -> dict[str, Any]:
    """What the +RNN row's warm start from the Baseline's weights changes, for the prose: the
    row tuned from the defaults (:func:`defaults_numbers`, :func:`defaults_words` as
    ``cho-defaults``) and equal tuning effort (:func:`effort_numbers`)."""
    got = defaults_numbers(rows, base, n_tune)
    got["cho-defaults"] = defaults_words(rows)
    return {**got, **effort_numbers(rows, base, n_tune)}


def defaults_numbers(
    rows: dict[str, dict[int, SMTResult]], base: BaselineRow, n_tune: int
) -> dict[str, Any]:
    """The +RNN row tuned from the decoder's defaults (:data:`DEFAULTS_ROW`) against the
    Baseline, which MERT starts from the same defaults (``cho-defaults-cold…``), and the +RNN
    row, which starts from the Baseline's weights, against it (``cho-defaults-warm…``): each
    difference on the held-out dev sentences and on test with :func:`clark`'s interval; its
    MERT runs, and each row's best tuning BLEU (NaN where not measured)."""
    names = ("Baseline", "+RNN", DEFAULTS_ROW)
    pairs = {"cold": (DEFAULTS_ROW, "Baseline"), "warm": ("+RNN", DEFAULTS_ROW)}
    got = _pair_gains(rows, base, n_tune, pairs, "cho-defaults")
    got["cho-defaults-runs"] = len(rows.get(DEFAULTS_ROW, {}))
    for name, key in zip(names, ("baseline", "rnn", "defaults")):
        best = best_tuning(rows[name]).mean() if DEFAULTS_ROW in rows else np.nan
        got[f"cho-defaults-tuning-{key}"] = (best, 2)
    return got


def defaults_words(rows: dict[str, dict[int, SMTResult]]) -> str:
    """Whether the +RNN row tuned from the defaults was built, in words for the prose."""
    if DEFAULTS_ROW in rows:
        return "was built"
    return "was not built (`mert_default_seeds` is 0, or `mert_start` is `defaults`)"


def rnn_weights(runs: dict[int, SMTResult]) -> pd.DataFrame:
    """The tuned log-linear weights of the +RNN row, one column per MERT seed (4 digits)."""
    weights = pd.DataFrame({f"seed {s}": pd.Series(r.weights) for s, r in runs.items()}).round(4)
    weights.index.name = "feature"
    return weights


def signature(base: BaselineRow) -> str:
    """The sacreBLEU signature of the scores of Table 1 (Markdown code)."""
    return f"`{base.first_run.bleu['test']['single']['signature']}`"
