"""What MERT did for A Table 1's rows: each run's tuning BLEU, where MERT started, the two
readings of the feature, the tuned weights and the system's signature."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ...smt.system import (
    SMTResult,
)
from .rows import DEFAULTS_ROW, BaselineRow, extra_start, row_outputs
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


def start_text(P: Params, n_tune: int) -> str:
    """How MERT started the rows that add the RNN score, and how hard it searched (Markdown)."""
    how = (
        "from the Baseline's weights tuned with the same seed and the new weight at 0, as a "
        "careful Moses user would: the search begins where the Baseline's ended"
        if P.mert_start == "baseline"
        else f"from the decoder's defaults (Moses' weights, the new weight at {extra_start():g})"
    )
    return (
        f"MERT started the rows that add the RNN score {how}. Every row's MERT (the Baseline's "
        f"too) tunes on the first {n_tune:,} dev sentences, for at most "
        f"{P.mert_iterations} decodings, and each of its optimisations adds "
        f"{P.mert_restarts} random starting points."
    )


def per_word_text(rows: dict[str, dict[int, SMTResult]], base: BaselineRow) -> str:
    """The per-word reading of the feature against the Baseline and against the paper's reading,
    with :func:`clark`'s interval (Markdown); what the chapter says when the row is off."""
    if "+RNN per word" not in rows:
        return "not computed in this run (`per_word_row` is off)"
    refs = list(base.data.test_refs[0])
    out = row_outputs({k: rows[k] for k in ("Baseline", "+RNN", "+RNN per word")})
    parts = []
    for a, b in (("+RNN per word", "Baseline"), ("+RNN per word", "+RNN")):
        label, diff, low, high = clark(f"{a} − {b}", out[a]["test"], out[b]["test"], refs)
        parts.append(f"{label} on test {diff:+.2f} BLEU [{low:+.2f}, {high:+.2f}]")
    return "; ".join(parts) + " (95% intervals over the MERT seeds and test sentences)"


def best_tuning(runs: dict[int, SMTResult]) -> np.ndarray:
    """``(seeds,)``: each MERT run's best BLEU on the tuning set as MERT measured it (tokenised;
    :func:`tuning_table`'s "best")."""
    return np.array(
        [
            json.loads(r.tuned.file("weights.json").read_text())["best_dev_bleu"]
            for r in runs.values()
        ]
    )


def defaults_text(rows: dict[str, dict[int, SMTResult]], base: BaselineRow, n_tune: int) -> str:
    """The +RNN row tuned from the decoder's defaults (:data:`DEFAULTS_ROW`) against the Baseline,
    which MERT starts from the same defaults, and against the +RNN row, which starts from the
    Baseline's weights: each difference on the held-out dev sentences and on test with
    :func:`clark`'s interval, and each row's best tuning BLEU (Markdown); what the chapter says
    when the row is not built."""
    if DEFAULTS_ROW not in rows:
        return (
            "not built in this run (`mert_default_seeds` is 0, or `mert_start` is `defaults`, "
            "where the +RNN row itself starts from the defaults)"
        )
    names = ("Baseline", "+RNN", DEFAULTS_ROW)
    out = row_outputs({k: rows[k] for k in names})
    n_dev = len(out["Baseline"]["dev"][0])
    refs = {
        "held-out dev": list(base.data.dev_refs[0])[n_tune:n_dev],
        "test": list(base.data.test_refs[0]),
    }

    def hyps(name: str, split: str) -> list[list[str]]:
        if split == "test":
            return out[name]["test"]
        return [lines[n_tune:] for lines in out[name]["dev"]]

    parts = []
    for a, b in ((DEFAULTS_ROW, "Baseline"), ("+RNN", DEFAULTS_ROW)):
        found = []
        for split, ref in refs.items():
            if ref:
                _, diff, low, high = clark("", hyps(a, split), hyps(b, split), ref)
                found.append(f"{diff:+.2f} [{low:+.2f}, {high:+.2f}] on {split}")
        parts.append(f"{a} − {b}: " + ", ".join(found))
    tuning = ", ".join(f"{k} {best_tuning(rows[k]).mean():.2f}" for k in names)
    return (
        f"{'; '.join(parts)} (BLEU, 95% intervals over the MERT seeds and sentences; "
        f"{len(rows[DEFAULTS_ROW])} MERT run{'s' * (len(rows[DEFAULTS_ROW]) != 1)} from the "
        f"defaults). MERT's best BLEU on the tuning set, mean over the seeds: {tuning}"
    )


def rnn_weights(runs: dict[int, SMTResult]) -> pd.DataFrame:
    """The tuned log-linear weights of the +RNN row, one column per MERT seed (4 digits)."""
    weights = pd.DataFrame({f"seed {s}": pd.Series(r.weights) for s, r in runs.items()}).round(4)
    weights.index.name = "feature"
    return weights


def signature(base: BaselineRow) -> str:
    """The sacreBLEU signature of the scores of Table 1 (Markdown)."""
    return f"sacreBLEU signature: `{base.first_run.bleu['test']['single']['signature']}`"
