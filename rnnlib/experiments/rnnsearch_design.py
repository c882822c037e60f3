"""How the rnnsearch chapter's experiment is designed at a small scale (issue 24): equal training
time, the recipe chosen on dev, and the evidence for both.

* :func:`equal_time_updates` -- RNNencdec's updates from RNNsearch's, at the paper's ratio of
  update rates (B Table 2: every model trained about five days, so an RNNencdec, cheaper per
  update, made about twice the updates);
* :func:`parse_recipe_runs` -- the chapter's ``recipe_runs`` parameter: the alternatives to the
  chosen recipe (dropout, learning-rate schedule) trained as RNNsearch-30 on the same data;
* :func:`parse_dropouts` -- the chapter's ``dropout_runs_long`` parameter: the alternatives to
  the "-50" models' dropout, trained as RNNsearch-50 and tabulated by :func:`recipe_runs_table`;
* :func:`recipe_runs_table` -- the candidates side by side, with the rule that picks one (the
  lowest dev NLL, never a test number);
* :func:`encdec_lr_table` -- RNNencdec's own learning rate against RNNsearch's, on RNNencdec-30
  (the chapter's run against the same run at RNNsearch's rate, each over its whole budget);
* :func:`cooldown_updates` and :func:`cooldown_table` -- the cool-down at the end of each run's
  budget, and its evidence: RNNsearch-50 with it against the same run without it (RNNsearch-50⋆
  branched where the cool-down began and went on at the full rate), at the same update.

Deviations
----------
- B trains with Adadelta and no regularisation on 348M words. On the book's corpus (about 16
  thousand pairs of at most 30 tokens) the networks overfit within minutes; dropout on the maxout
  units and halving the learning rate when the dev NLL stops improving are parameters
  (``dropout``, ``lr_decay``, ``lr_patience``) chosen by the runs this module tabulates. The
  "-50" models train on more pairs, and longer ones, so they may have a dropout
  of their own (``dropout_long``), chosen among ``dropout_runs_long`` on RNNsearch-50.
- B gives each model the same time; a run here is keyed by its update count, so that the cache
  key does not depend on the machine's speed: the paper's ratio of update rates stands in for
  "the same time", and Table 2 shows the minutes each run took. Across the two lengths B's runs
  took the same time too, RNNsearch-30 making more updates than RNNsearch-50 (Table 2); here
  each length has a budget of its own (``updates_search``, ``updates_search_long``), chosen on
  dev: the ``cpu`` profile gives the -30 pair fewer updates, since it overfits its fewer,
  shorter pairs.
- B trains both architectures with the same Adadelta. On the ``cpu`` profile, Adam's rate chosen
  for RNNsearch (``lr``) may not suit RNNencdec (at 3e-3 its dev NLL rose between evaluations
  and fell again once the schedule had cut the rate), so RNNencdec may have its own
  (``lr_encdec``), kept only if it lowers the dev NLL of RNNencdec-30's delivered parameters
  against the same run trained at ``lr`` over the same budget (``encdec_lr_check``).
- B's Adadelta has no schedule; a run here may end with a cool-down (``cooldown``: the rate falls
  linearly towards 0 over the last share of its budget, the "stable then decay" schedule of
  Hu et al. 2024 and Hägele et al. 2024), kept only if it lowers RNNsearch-50's dev NLL.
"""

from __future__ import annotations

import math
import pandas as pd

from ..book import papers
from ..cache import Artifact
from ..train import TrainConfig, cooldown_start

#: the pairs of B Table 2 trained on the same sentences: (RNNencdec row, RNNsearch row)
PAIRS = {"short": ("RNNenc-30", "RNNsearch-30"), "long": ("RNNenc-50", "RNNsearch-50")}


def paper_rate_ratio(pair: str) -> float:
    """RNNencdec's updates per hour over RNNsearch's in B Table 2, for the ``"short"`` (-30) or
    ``"long"`` (-50) pair (about 1.9 and 2.1). Both models of a pair trained about the same
    hours (:func:`paper_hours`), so this is the ratio of their updates at equal time."""
    enc, search = (papers.B_TABLE2[name] for name in PAIRS[pair])
    return (enc["updates"] / enc["hours"]) / (search["updates"] / search["hours"])


def paper_hours() -> float:
    """The mean training hours of B Table 2's four models trained from scratch."""
    rows = [papers.B_TABLE2[n] for pair in PAIRS.values() for n in pair]
    return sum(r["hours"] for r in rows) / len(rows)


def equal_time_updates(updates_search: int, updates_encdec: int | None, pair: str) -> int:
    """RNNencdec's updates in the ``pair`` (``"short"``/``"long"``): ``updates_encdec`` when it
    is set, else ``updates_search`` times :func:`paper_rate_ratio` (rounded), which gives the
    two models the paper's equal time as far as their speeds relate as the paper's did."""
    if updates_encdec is not None:
        return int(updates_encdec)
    return int(round(updates_search * paper_rate_ratio(pair)))


def parse_recipe_runs(text: str | None) -> list[tuple[float, float | None]]:
    """The ``recipe_runs`` parameter, ``"dropout/lr_decay, ..."`` (``lr_decay`` ``none`` for a
    constant rate; ``""`` or ``None``: no alternatives) -> ``[(dropout, lr_decay)]``. A bad
    entry is an error naming the parameter and the entry."""
    out: list[tuple[float, float | None]] = []
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        parts = entry.split("/")
        try:
            if len(parts) != 2:
                raise ValueError
            dropout = float(parts[0])
            decay = None if parts[1].strip().lower() == "none" else float(parts[1])
        except ValueError:
            raise ValueError(
                f"parameter 'recipe_runs': entry {entry!r} is not 'dropout/lr_decay' "
                "(for example '0.3/0.5' or '0/none')"
            ) from None
        if not 0 <= dropout < 1 or (decay is not None and not 0 < decay < 1):
            raise ValueError(
                f"parameter 'recipe_runs': entry {entry!r} needs dropout in [0, 1) and "
                "lr_decay in (0, 1) or none"
            )
        out.append((dropout, decay))
    return out


def parse_dropouts(text: str | None, name: str) -> list[float]:
    """A parameter ``name`` of dropouts, ``"0.1, 0.3"`` (``""`` or ``None``: none) -> ``[0.1,
    0.3]``; a bad entry is an error naming the parameter and the entry."""
    out: list[float] = []
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        try:
            dropout = float(entry)
        except ValueError:
            raise ValueError(
                f"parameter {name!r}: entry {entry!r} is not a number (for example '0.1, 0.3')"
            ) from None
        if not 0 <= dropout < 1:
            raise ValueError(f"parameter {name!r}: entry {entry!r} needs a dropout in [0, 1)")
        out.append(dropout)
    return out


def recipe_label(dropout: float, decay: float | None) -> str:
    """How a recipe reads in the table: ``"dropout 0.3, rate × 0.5 when dev stalls"`` (a stall:
    ``lr_patience`` dev evaluations in a row without a lower dev NLL)."""
    drop = f"dropout {dropout:g}" if dropout else "no dropout"
    rate = "constant rate" if decay is None else f"rate × {decay:g} when dev stalls"
    return f"{drop}, {rate}"


def _dev_bleu_exactly(bleu: pd.DataFrame, update: int) -> float:
    """The dev BLEU measured at ``update`` (a run's BLEU log), NaN when none was."""
    rows = bleu[bleu["update"] == update]["dev_bleu"]
    return float(rows.iloc[0]) if len(rows) else math.nan


def _bleu_aside(what: str, a: float, b: float) -> str:
    """`` (greedy dev BLEU{what}, shown, not used: a against b)``, or ``""`` when neither was
    measured (no dev BLEU curve: ``dev_bleu_sentences`` 0)."""
    if math.isnan(a) and math.isnan(b):
        return ""
    return f" (greedy dev BLEU{what}, shown, not used: {a:.2f} against {b:.2f})"


def _dev_bleu_at(bleu: pd.DataFrame, update: int) -> float:
    rows = bleu[bleu["update"] <= update]
    return float(rows["dev_bleu"].iloc[-1]) if len(rows) else math.nan


def recipe_runs_table(
    candidates: dict[tuple[float, float | None], tuple[Artifact, dict[str, pd.DataFrame]]],
    chosen: tuple[float, float | None],
) -> tuple[pd.DataFrame, tuple[float, float | None]]:
    """The recipe candidates (``(dropout, lr_decay) -> (run, its logs)``, every one RNNsearch-30
    on the same pairs and updates) as a table, and the winner: the lowest dev NLL per token of
    the delivered parameters (dev only; its dev BLEU is shown, greedy, on the curve's dev
    subset). ``chosen`` is the chapter's own recipe, marked."""
    rows = []
    for (dropout, decay), (art, logs) in candidates.items():
        best = art.extra["best"]
        ev = logs["eval"]
        rows.append(
            {
                "recipe": recipe_label(dropout, decay),
                "dropout": dropout,
                "lr_decay": "none" if decay is None else f"{decay:g}",
                "best update": int(best["update"]),
                "dev NLL per token (best)": float(best["dev_nll_token"]),
                "dev NLL per token (last)": float(ev["dev_nll_token"].iloc[-1]),
                "dev BLEU (greedy, at best)": _dev_bleu_at(logs["bleu"], int(best["update"])),
                "the chapter's": "yes" if (dropout, decay) == chosen else "",
            }
        )
    table = pd.DataFrame(rows).set_index("recipe")
    winner_label = table["dev NLL per token (best)"].idxmin()
    winner = next(k for k in candidates if recipe_label(*k) == winner_label)
    table["lowest dev NLL"] = ["←" if label == winner_label else "" for label in table.index]
    return table.round(3), winner


def cooldown_updates(share: float | None, budget: int, every: int) -> int | None:
    """The updates of the cool-down that ends a run of ``budget`` updates: about ``share`` of it,
    beginning at a multiple of ``every`` (an evaluation, where the run keeps its state) before
    the end; ``None`` without a cool-down (``share`` None)."""
    if share is None:
        return None
    if not 0 < share < 1:
        raise ValueError(f"parameter 'cooldown' must be in (0, 1) or None, got {share!r}")
    start = every * round((1 - share) * budget / every)
    last = every * ((budget - 1) // every)  # the last evaluation before the end
    return budget - max(0, min(start, last))


COOLDOWN_COLUMNS = ["update", "dev NLL per token", "dev BLEU (greedy)"]


def cooldown_table(
    cooled: tuple[Artifact, dict[str, pd.DataFrame]],
    branch: tuple[Artifact, dict[str, pd.DataFrame]],
) -> tuple[pd.DataFrame | None, str]:
    """RNNsearch-50 (``cooled``: its run and logs) at its last update, with its cool-down,
    against the same run without it, and the rule's verdict as a sentence.

    The run without it is RNNsearch-50⋆ (``branch``) when it branched where RNNsearch-50's
    cool-down began (``trunk_update``) and its own cool-down began no earlier than
    RNNsearch-50's last update: up to that update it is RNNsearch-50 at the full rate. Rule
    (dev only): the cool-down is kept when it lowers the dev NLL per token at that update.
    ``(None, why)`` when the comparison cannot be made."""
    art, logs = cooled
    b_art, b_logs = branch
    update = int(art.extra["updates"])
    trunk = art.extra.get("trunk_update")
    b_start = cooldown_start(TrainConfig.from_dict(b_art.config["train"]))
    if trunk is None or b_art.config.get("branch") != "trunk":
        return None, (
            "RNNsearch-50⋆ did not branch where RNNsearch-50's cool-down began, so no run "
            "shows RNNsearch-50 without it"
        )
    if b_start is not None and b_start < update:
        return None, (
            f"RNNsearch-50⋆'s own cool-down began at update {b_start:,}, before RNNsearch-50's "
            f"last update ({update:,}), so it does not show RNNsearch-50 without its cool-down"
        )
    rows = {}
    for label, run, lg in (
        ("with the cool-down (RNNsearch-50)", art, logs),
        ("without it (RNNsearch-50⋆ at the same update)", b_art, b_logs),
    ):
        ev = lg["eval"]
        at = ev[(ev["update"] == update) & ev["scheduled"].astype(bool)]
        if not len(at):
            who = "RNNsearch-50⋆" if run is b_art else "RNNsearch-50"
            why = (
                "it stopped before"
                if int(run.extra["updates"]) < update
                else "it is not on the grid of evaluations, every `eval_every` updates"
            )
            return None, (
                f"{who} has no scheduled dev evaluation at update {update:,}, RNNsearch-50's "
                f"last ({why}), so the two cannot be compared there"
            )
        rows[label] = {
            "update": update,
            "dev NLL per token": float(at["dev_nll_token"].iloc[0]),
            "dev BLEU (greedy)": _dev_bleu_exactly(lg["bleu"], update),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")[COOLDOWN_COLUMNS]
    table.index.name = f"RNNsearch-50, cool-down from update {int(trunk):,}"
    with_, without = table["dev NLL per token"].tolist()
    bleu_with, bleu_without = table["dev BLEU (greedy)"].tolist()
    verb = "lowers" if with_ < without else "does not lower"
    text = (
        f"the cool-down over updates {int(trunk) + 1:,}-{update:,} {verb} RNNsearch-50's dev NLL "
        f"at update {update:,}: {with_:.3f} nats a token with it, {without:.3f} without"
        + _bleu_aside("", bleu_with, bleu_without)
    )
    if with_ >= without:
        text = f"**{text}**; the rule does not keep it, and the profile's `cooldown` should be None"
    else:
        text += "; the rule keeps it"
    return table.round({"dev NLL per token": 3, "dev BLEU (greedy)": 2}), text


ENCDEC_LR_COLUMNS = [
    "lr",
    "lowest dev NLL per token",
    "at update",
    "updates made",
    "dev BLEU (greedy) there",
    "the chapter's",
]


def encdec_lr_table(
    own: tuple[float, Artifact, dict[str, pd.DataFrame]],
    other: tuple[float, Artifact, dict[str, pd.DataFrame]],
) -> tuple[pd.DataFrame, str]:
    """RNNencdec-30 at its own learning rate (``own``: the rate, the chapter's run and its logs)
    against RNNsearch's (``other``: the rate, the check run and its logs), two runs that differ
    in the rate alone (the same pairs, seed, minibatches, budget, schedule and cool-down; the
    schedule may stop either before its cool-down, once its rate falls below ``lr_min``), and
    the rule's verdict as a sentence. Each run is read as the recipe runs are: the dev NLL per
    token of its delivered parameters (its lowest evaluation, ``extra["best"]``), over its whole
    budget; a run the schedule stopped early (``lr_min``) delivered what it had, and the
    sentence says so. Rule (dev only): the rate with the lower one is kept."""
    rows, stops = {}, []
    for label, (rate, art, logs), mine in (
        ("RNNencdec's own rate (`lr_encdec`)", own, "yes"),
        ("RNNsearch's rate (`lr`)", other, ""),
    ):
        best = art.extra["best"]
        at = int(best["update"])
        made, budget = int(art.extra["updates"]), int(art.config["train"]["max_updates"])
        if made < budget:
            why = art.extra.get("stopped", "stopped")
            cool = cooldown_start(TrainConfig.from_dict(art.config["train"]))
            before = (
                f", before its cool-down over updates {cool + 1:,}-{budget:,}"
                if cool is not None and made <= cool
                else ""
            )
            stops.append(
                f"at rate {rate:g} the run stopped at update {made:,} of {budget:,} ({why}{before})"
            )
        rows[label] = {
            "lr": rate,
            "lowest dev NLL per token": float(best["dev_nll_token"]),
            "at update": at,
            "updates made": made,
            "dev BLEU (greedy) there": _dev_bleu_exactly(logs["bleu"], at),
            "the chapter's": mine,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")[ENCDEC_LR_COLUMNS]
    table.index.name = "RNNencdec-30, its whole budget at each rate"
    (own_nll, other_nll), (own_bleu, other_bleu) = (
        table["lowest dev NLL per token"].tolist(),
        table["dev BLEU (greedy) there"].tolist(),
    )
    text = (
        f"over its whole budget RNNencdec-30 delivers a dev NLL of {own_nll:.3f} nats a token at "
        f"its own rate ({own[0]:g}) and {other_nll:.3f} at RNNsearch's ({other[0]:g})"
        + _bleu_aside(" there", own_bleu, other_bleu)
    )
    if stops:
        text += " (" + "; ".join(stops) + ")"
    if own_nll < other_nll:
        text += "; the rule keeps RNNencdec's own rate"
    else:
        text = (
            f"**{text}**; the rule does not keep RNNencdec's own rate, and the profile's "
            "`lr_encdec` should be None"
        )
    return table.round({"lowest dev NLL per token": 3, "dev BLEU (greedy) there": 2}), text


__all__ = [
    "COOLDOWN_COLUMNS",
    "ENCDEC_LR_COLUMNS",
    "encdec_lr_table",
    "PAIRS",
    "cooldown_table",
    "cooldown_updates",
    "paper_hours",
    "equal_time_updates",
    "paper_rate_ratio",
    "parse_dropouts",
    "parse_recipe_runs",
    "recipe_label",
    "recipe_runs_table",
]
