"""The evidence for the update budgets and the learning-rate schedule, on dev: how the schedule
cut each run's rate, whether RNNsearch-30 and RNNsearch-50 had stopped improving before their
budgets ended, whether RNNencdec reaches the BLEU floor on dev within its budget, and each
seed's "-50" pair trained again with the schedule from the first evaluation (the evidence for
``lr_decay_start``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...cache import Artifact, NotCached
from ...train import TrainConfig
from ...verdicts import BLEU_FLOOR
from ..run_pool import Job, build_side_by_side
from ..training_runs import run_logs
from .seeds import SEED_PAIR, SeedRuns
from .setting import NAMES, RNNsearchExperiment, glue_key, shown
from .training import Runs, run_specs, train_model


def schedule_table(runs: Runs) -> pd.DataFrame:
    """How the learning-rate schedule acted on each run, from its evaluation log (index
    ``model``): how many times the rate was cut, the update of the evaluation that first
    reported a cut, the rate of the last evaluation, and the update at which a last cut below
    ``lr_min`` ended the run (after its last evaluation; none when it did not)."""
    rows = []
    for name in NAMES:
        ev = runs.logs[name]["eval"]
        if "lr" not in ev or not len(ev):
            continue
        rates, updates = ev["lr"].to_numpy(), ev["update"].to_numpy()
        cut = rates[1:] < rates[:-1]
        extra = runs.runs[name].extra
        stopped = extra["updates"] if extra.get("stopped") == "lr_min" else None
        rows.append(
            {
                "model": shown(name),
                "rate cuts": int(cut.sum()),
                "first reported at update": int(updates[1:][cut][0]) if cut.any() else None,
                "last rate": float(rates[-1]),
                "ended below lr_min at update": runs.runs[name].extra["updates"]
                if stopped
                else None,
            }
        )
    columns = ["model", "rate cuts", "first reported at update", "last rate"]
    table = pd.DataFrame(rows, columns=columns + ["ended below lr_min at update"])
    for col in ("first reported at update", "ended below lr_min at update"):
        table[col] = table[col].astype("Int64")
    return table.set_index("model")


def schedule_text(ex: RNNsearchExperiment, runs: Runs) -> str:
    """Which runs' rates the schedule cut, in words: how many of the models
    (:func:`schedule_table`), or none, the rate being constant."""
    if ex.P.lr_decay is None:
        but = " but for the cool-down" if ex.P.cooldown else ""
        return f"no model: the rate stayed constant{but} (`lr_decay` is None)"
    table = schedule_table(runs)
    return f"{int((table['rate cuts'] > 0).sum())} of the {len(table)} models"


#: the models whose dev BLEU during training says whether more training would lift them
FLOOR_MODELS = ("RNNencdec-30", "RNNencdec-50", "RNNsearch-50")


def floor_numbers(runs: Runs) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 2)``: the highest greedy dev BLEU of any evaluation during training
    (the curves' dev subset) of RNNencdec-30, RNNencdec-50 and RNNsearch-50 (NaN without a dev
    BLEU curve), and the floor :data:`rnnlib.verdicts.BLEU_FLOOR`."""
    out = {}
    for name in FLOOR_MODELS:
        bleu = runs.logs[name]["bleu"]
        top = float(bleu["dev_bleu"].max()) if len(bleu) else np.nan
        out[f"rns-floor-{glue_key(name)}"] = (top, 2)
    return out


def floor_evidence_text(runs: Runs) -> str:
    """Whether the RNNencdec models reached the BLEU floor on dev during training, in words: the
    dev evidence for claims that read RNNencdec being not measurable at this scale."""
    if not any(len(runs.logs[n]["bleu"]) for n in FLOOR_MODELS):
        return "no run measured its dev BLEU during training (`dev_bleu_sentences` is 0)"
    encdec = [runs.logs[n]["bleu"]["dev_bleu"].max() for n in ("RNNencdec-30", "RNNencdec-50")]
    below = [n for n, b in zip(("RNNencdec-30", "RNNencdec-50"), encdec) if b < BLEU_FLOOR]
    if not below:
        return "both RNNencdec models reached the floor on dev"
    return f"**{' and '.join(below)} never reached the floor on dev**"


def budget_numbers(runs: Runs) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)``, the dev evidence for RNNsearch's update budgets: per
    RNNsearch run (-30, -50) its budget, the update of its lowest dev NLL per token, that NLL
    and the one of its last evaluation; RNNsearch-50's last update and the lowest dev NLL of
    RNNsearch-50⋆ after it (NaN without an evaluation there)."""
    out: dict[str, tuple[float, int | None]] = {}
    for name in ("RNNsearch-30", "RNNsearch-50"):
        ev, key = runs.logs[name]["eval"], glue_key(name)
        best = ev.loc[ev["dev_nll_token"].idxmin()]
        out[f"rns-lowest-at-{key}"] = (int(best["update"]), None)
        out[f"rns-lowest-{key}"] = (float(best["dev_nll_token"]), 3)
        out[f"rns-last-{key}"] = (float(ev["dev_nll_token"].iloc[-1]), 3)
    end50 = int(runs.runs["RNNsearch-50"].extra["updates"])
    star = runs.logs["RNNsearch-50*"]["eval"]
    beyond = star.loc[star["update"] > end50, "dev_nll_token"]
    out["rns-end-rnnsearch-50"] = (end50, None)
    out["rns-star-beyond"] = (float(beyond.min()) if len(beyond) else np.nan, 3)
    return out


def budget_evidence_text(runs: Runs) -> str:
    """Whether RNNsearch-50⋆, continuing RNNsearch-50, found a lower dev NLL *after*
    RNNsearch-50's last update, in words: then RNNsearch-50 was still learning when its budget
    ended (a lower one before it, where RNNsearch-50⋆ is RNNsearch-50 without the cool-down, is
    the cool-down's evidence instead)."""
    end50 = int(runs.runs["RNNsearch-50"].extra["updates"])
    own50 = runs.logs["RNNsearch-50"]["eval"]["dev_nll_token"].min()
    star = runs.logs["RNNsearch-50*"]["eval"]
    beyond = star.loc[star["update"] > end50, "dev_nll_token"]
    if not len(beyond):
        return "RNNsearch-50⋆ made no evaluation beyond RNNsearch-50's last update"
    if beyond.min() < own50:
        return "RNNsearch-50 was still learning when its budget ended"
    return "RNNsearch-50's budget was long enough"


def _first_cut(art: Artifact) -> int | None:
    """The update of the evaluation after which a run's rate was first cut (``None``: never;
    :func:`schedule_text` names the next evaluation, the first that reports the lower rate)."""
    ev = run_logs(art)["eval"]
    if "lr" not in ev or len(ev) < 2:
        return None
    rates, updates = ev["lr"].to_numpy(), ev["update"].to_numpy()
    cut = np.flatnonzero(rates[1:] < rates[:-1])
    return int(updates[cut[0]]) if len(cut) else None


def start_summary(numbers: dict) -> str:
    """The schedule-start evidence's numbers (:func:`schedule_start_evidence`'s) for the prose:
    a Markdown table of each model's mean difference and its seeds' sd, or, with no seed read,
    that nothing was measured (at most 80 characters)."""
    seeds = numbers["rns-start-seeds"][0]
    if not seeds:
        return "not measured: no run with the schedule from the first evaluation"

    def cell(name: str) -> str:
        value = numbers[name][0]
        return "—" if value != value else f"{value:+.3f}"

    rows = [
        f"| {model} | {cell(f'rns-start-diff-{glue_key(model)}')} | "
        f"{cell(f'rns-start-sd-{glue_key(model)}').lstrip('+')} |"
        for model in SEED_PAIR
    ]
    return (
        f"| model | chapter's schedule − from the first evaluation (mean of {seeds} seeds) | "
        "sd of the seeds' dev NLLs, chapter's schedule |\n|---|---|---|\n" + "\n".join(rows)
    )


def schedule_start_evidence(
    ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns
) -> tuple[pd.DataFrame, str, list[Artifact], dict]:
    """The evidence for ``lr_decay_start``: each model of the "-50" pair, for every seed the
    chapter reads, trained again with the schedule acting from the first evaluation
    (``lr_decay_start`` None), beside the chapter's run of that seed. Those runs are built when
    ``start_runs`` is set (the ``spread`` profile) and otherwise read from the cache where such a
    build left them, none computed. Returns the table (index ``(model, seed)``: the update after
    which each schedule first cut the rate, and the best dev NLL per token of each), the rule's
    verdict per model in words (the lower mean dev NLL over the seeds, dev only), the runs the
    table reads (the chapter's included), and ``glue name -> (value, digits)``: per model the
    mean over the seeds of the chapter's schedule − from the first evaluation
    (``rns-start-diff-<model>``), the sd of the seeds' dev NLLs with the chapter's schedule
    (``rns-start-sd-<model>``, NaN with one seed) and the seeds read (``rns-start-seeds``)."""
    p = ex.P
    start = p.lr_decay_start
    late_label = f"from update {start:,}" if start else "as set"
    columns = [
        "rate first cut after update, from the first evaluation",
        f"rate first cut after update, {late_label}",
        "dev NLL per token, from the first evaluation",
        f"dev NLL per token, {late_label}",
    ]
    empty = pd.DataFrame(columns=["model", "seed", *columns]).set_index(["model", "seed"])
    numbers: dict[str, tuple[float, int | None]] = {"rns-start-seeds": (0, None)}
    for name in SEED_PAIR:
        numbers[f"rns-start-diff-{glue_key(name)}"] = (np.nan, 3)
        numbers[f"rns-start-sd-{glue_key(name)}"] = (np.nan, 3)
    if p.lr_decay is None:
        return empty, "not measured: the rate is constant (`lr_decay` is None)", [], numbers
    if not start:
        return empty, "not measured: the schedule acts from the first evaluation", [], numbers
    rows, read = _start_rows(ex, runs, sr, columns)
    if not rows:
        why = "not measured: no such run was made or found in the cache (`start_runs`)"
        return empty, why, [], numbers
    table = pd.DataFrame(rows).set_index(["model", "seed"])
    for col in columns[:2]:
        table[col] = table[col].astype("Int64")  # an update, or none
    early, late = columns[2], columns[3]
    verdicts = []
    for model, group in table.groupby(level="model", sort=False):
        diff = group[late] - group[early]
        sd = group[late].std(ddof=1) if len(group) > 1 else np.nan
        numbers[f"rns-start-diff-{glue_key(model)}"] = (float(diff.mean()), 3)
        numbers[f"rns-start-sd-{glue_key(model)}"] = (float(sd), 3)
        numbers["rns-start-seeds"] = (len(group), None)
        pick = "the chapter's" if diff.mean() <= 0 else "**from the first**"
        verdicts.append(f"{model}: {pick}")
    return table.round(3), "; ".join(verdicts), read, numbers


def _start_rows(
    ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns, columns: list[str]
) -> tuple[list[dict], list[Artifact]]:
    """The rows of :func:`schedule_start_evidence` (``columns``: its table's), per seed and
    model of the "-50" pair whose run with the schedule from the first evaluation was built
    here (``start_runs``) or is in the cache, and the runs they read."""
    p, specs, rows, read = ex.P, run_specs(ex), [], []

    def from_first(name: str, seed: int) -> TrainConfig:
        arch, _, updates = specs[name]
        return ex.train_config(updates, arch, seed=seed, lr_decay_start=None)

    if p.start_runs:
        jobs = [
            Job(f"{name} seed {seed}", lambda n=name, s=seed: train_model(ex, n, from_first(n, s)))
            for name in SEED_PAIR
            for seed in sr.seeds
        ]
        build_side_by_side(ex.cache, jobs, p.train_workers, ex.device)
    for k, seed in enumerate(sr.seeds):
        for name in SEED_PAIR:
            mine = runs.runs[name] if k == 0 else sr.further[k - 1][name]
            config = from_first(name, seed)
            try:
                if p.start_runs:
                    other = train_model(ex, name, config)
                else:
                    with ex.cache.lookup_only():
                        other = train_model(ex, name, config)
            except NotCached:
                continue
            read += [other, mine]
            values = (
                _first_cut(other),
                _first_cut(mine),
                other.extra["best"]["dev_nll_token"],
                mine.extra["best"]["dev_nll_token"],
            )
            rows.append({"model": shown(name), "seed": seed, **dict(zip(columns, values))})
    return rows, read
