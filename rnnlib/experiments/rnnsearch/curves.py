"""The training curves of the five models, and the chosen optimiser against the paper's
Adadelta (dev NLL against minutes of training)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...book.style import HEIGHT, WIDTH, system_colors
from ...cache import Artifact
from ..training_runs import run_logs
from .setting import NAMES, SHOWN, RNNsearchExperiment
from .training import Runs


def _curves(runs: Runs) -> dict[str, pd.DataFrame]:
    """The five models' logs in long form: ``train`` (the training NLL per token, a running
    mean of one window for every model), ``eval`` (dev NLL per token), ``bleu`` (dev BLEU)."""
    window = max(1, min(max(len(log["train"]) for log in runs.logs.values()) // 20, 200))
    parts: dict[str, list[pd.DataFrame]] = {"train": [], "eval": [], "bleu": []}
    for name in NAMES:
        log = runs.logs[name]
        smooth = log["train"]["train_nll_token"].rolling(window, min_periods=1).mean()
        train = pd.DataFrame({"update": log["train"]["update"], "train_nll_token": smooth})
        for kind, frame in (("train", train), ("eval", log["eval"]), ("bleu", log["bleu"])):
            parts[kind].append(frame.assign(model=SHOWN[name]))
    return {kind: pd.concat(frames, ignore_index=True) for kind, frames in parts.items()}


def curves_figure(ex: RNNsearchExperiment, runs: Runs):
    """Training curves of the five models (seaborn): the training NLL per target token (a
    running mean over the updates), the dev NLL per token at every evaluation, and the dev BLEU
    of the parameters with the lowest dev NLL so far. Returns the figure."""
    data = _curves(runs)
    colours = {SHOWN[n]: c for n, c in system_colors(NAMES).items()}
    dashes = {SHOWN[n]: (4, 2) if n.endswith("-30") else "" for n in NAMES}
    fig, axes = plt.subplots(1, 3, figsize=(2 * WIDTH, HEIGHT))
    panels = (
        ("train", "train_nll_token", "train NLL per token (running mean)", False),
        ("eval", "dev_nll_token", "dev NLL per token", True),
        ("bleu", "dev_bleu", f"dev BLEU ({len(ex.dev_index)} sentences, greedy)", True),
    )
    for ax, (kind, column, label, points) in zip(axes, panels):
        if len(data[kind]):
            sns.lineplot(
                data=data[kind],
                x="update",
                y=column,
                hue="model",
                style="model",
                palette=colours,
                dashes=dashes,
                marker="o" if points else None,
                markersize=4,
                estimator=None,
                errorbar=None,
                legend="auto" if ax is axes[0] else False,
                ax=ax,
            )
        ax.set(xlabel="update", ylabel=label)
    axes[0].legend(title=None, fontsize=8)
    fig.tight_layout()
    return fig


def adadelta_numbers(runs: Runs) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 3 or 1)``: the minutes the Adadelta run trained (to its last
    evaluation), the dev NLL per token it reached then, and the chosen optimiser's after as many
    minutes (RNNsearch-50 and its continuation, interpolated); NaN without an Adadelta run."""
    if runs.adadelta is None:
        return dict.fromkeys(("rns-ada-minutes", "rns-ada-nll", "rns-ada-chosen-nll"), (np.nan, 3))
    chosen = runs.logs["RNNsearch-50*"]["eval"]
    ada = run_logs(runs.adadelta)["eval"]
    minutes, reached = ada["seconds"].iloc[-1] / 60, ada["dev_nll_token"].iloc[-1]
    same_time = np.interp(minutes, chosen["seconds"] / 60, chosen["dev_nll_token"])
    return {
        "rns-ada-minutes": (float(minutes), 1),
        "rns-ada-nll": (float(reached), 3),
        "rns-ada-chosen-nll": (float(same_time), 3),
    }


def adadelta_result(runs: Runs) -> str:
    """The Adadelta comparison's numbers in words for the prose (at most 80 characters), or that
    there is no Adadelta run to compare."""
    if runs.adadelta is None:
        return "no Adadelta run was made (`adadelta_updates` is 0, or Adadelta is chosen)"
    n = {k: v[0] for k, v in adadelta_numbers(runs).items()}
    return (
        f"after {n['rns-ada-minutes']:.1f} min Adadelta reaches {n['rns-ada-nll']:.3f} nats "
        f"a token, the chosen optimiser {n['rns-ada-chosen-nll']:.3f}"
    )


def adadelta_word(runs: Runs) -> str:
    """Whether the chosen optimiser's dev NLL is lower than Adadelta's after as many minutes
    (:func:`adadelta_numbers`), in words."""
    if runs.adadelta is None:
        return "not measured (no Adadelta run: `adadelta_updates` is 0, or Adadelta is chosen)"
    numbers = adadelta_numbers(runs)
    return "lower" if numbers["rns-ada-chosen-nll"][0] < numbers["rns-ada-nll"][0] else "not lower"


def optimiser_figure(ex: RNNsearchExperiment, runs: Runs) -> tuple[Any, list[Artifact]]:
    """Dev NLL per token against minutes of training: RNNsearch-50 and its continuation with
    the chapter's optimiser, and the same model with the paper's Adadelta (seaborn). Returns
    ``(figure, the runs drawn)``."""
    p = ex.P
    chosen = runs.logs["RNNsearch-50*"]["eval"]
    label = f"{p.optimizer} (lr {p.lr:g}), RNNsearch-50 and RNNsearch-50⋆ of this chapter"
    curves = [chosen.assign(optimiser=label)]
    compared = [runs.runs["RNNsearch-50*"]]
    if runs.adadelta is not None:
        curves.append(run_logs(runs.adadelta)["eval"].assign(optimiser="Adadelta (the paper's)"))
        compared.append(runs.adadelta)
    data = pd.concat(curves, ignore_index=True).assign(minutes=lambda d: d["seconds"] / 60)
    fig, ax = plt.subplots(figsize=(0.9 * WIDTH, HEIGHT))
    sns.lineplot(
        data=data,
        x="minutes",
        y="dev_nll_token",
        hue="optimiser",
        marker="o",
        markersize=4,
        estimator=None,
        errorbar=None,
        ax=ax,
    )
    ax.set(xlabel="minutes of training", ylabel="dev NLL per token")
    ax.legend(title=None)
    return fig, compared
