"""Every choice of the recipe that is not the paper's, and its evidence on dev: the departures
table (:func:`departures`), the recipe runs (dropout and learning-rate schedule, chosen on
RNNsearch-30), the "-50" models' own dropout, RNNencdec's own rate and the cool-down at the end
of each run.

Deviations
----------
- B trains with Adadelta and no regularisation on 348M words. On the book's corpus the networks
  overfit within minutes; dropout on the maxout units and cutting the learning rate when the dev
  NLL stops improving are parameters (``dropout``, ``lr_decay``, ``lr_patience``) chosen by the
  recipe runs; the "-50" models may have a dropout of their own (``dropout_long``), chosen among
  ``dropout_runs_long`` on RNNsearch-50.
- B trains both architectures with the same Adadelta. Adam's rate chosen for RNNsearch (``lr``)
  may not suit RNNencdec, so RNNencdec may have its own (``lr_encdec``), kept only if it lowers
  the dev NLL of RNNencdec-30's delivered parameters against the same run at ``lr``
  (``encdec_lr_check``).
- B trains both architectures with one recipe. RNNencdec's dropout and schedule may be its own
  (``dropout_encdec``, ``lr_decay_encdec``; RNNsearch's when unset), to be chosen on
  RNNencdec-50, which underfits where RNNsearch-30 overfits, by the study of ``encdec_runs``;
  every choice is held to the spread rule of :mod:`.choices`, and the departures table shows
  each with its margin and the spread (:func:`.choices.departure_rows`).
- B's Adadelta has no schedule; a run here may end with a cool-down (``cooldown``: the rate falls
  linearly towards 0 over the last share of its budget, the "stable then decay" schedule of
  Hu et al. 2024 and Hägele et al. 2024), kept only if it lowers RNNsearch-50's dev NLL.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...cache import Artifact
from ...fast.precision import cpu_bf16_instructions
from ...train import TrainConfig, cooldown_start
from ..training_runs import run_logs
from .setting import RNNsearchExperiment
from .training import (
    Runs,
    decay_start_text,
    parse_dropouts,
    parse_recipe_runs,
    star_updates,
    updates_text,
)


def encdec_lr_evidence(ex: RNNsearchExperiment, runs: Runs) -> tuple[pd.DataFrame | None, str]:
    """RNNencdec-30 at its own rate (the chapter's run) against RNNsearch's (:attr:`Runs.
    encdec_check`), each over its whole budget, as a table and the rule's verdict in words
    (:func:`encdec_lr_table`); ``None`` and why where there is nothing to compare."""
    own = ex.lr_of("rnnencdec")
    if own == ex.P.lr:
        return None, "both architectures train at the same rate (`lr_encdec` is None or `lr`)"
    if runs.encdec_check is None:
        return None, "not compared on dev in this run (`encdec_lr_check` is off)"
    check = runs.encdec_check
    return encdec_lr_table(
        (own, runs.runs["RNNencdec-30"], runs.logs["RNNencdec-30"]),
        (ex.P.lr, check, run_logs(check)),
    )


def encdec_lr_numbers(ex: RNNsearchExperiment, table: pd.DataFrame | None) -> dict:
    """``glue name -> (value, digits)``: RNNencdec's own rate and RNNsearch's, and the lowest dev
    NLL per token of RNNencdec-30 at each over its whole budget (``table``: of
    :func:`encdec_lr_evidence`; NaN without one)."""
    nll = [np.nan, np.nan] if table is None else table["lowest dev NLL per token"].tolist()
    return {
        "rns-encdec-lr-own": (ex.lr_of("rnnencdec"), None),
        "rns-encdec-lr-other": (ex.P.lr, None),
        "rns-encdec-lr-own-nll": (nll[0], 3),
        "rns-encdec-lr-other-nll": (nll[1], 3),
    }


def pair_result(numbers: dict, names: tuple[str, str], what: tuple[str, str]) -> str:
    """Two dev NLLs per token of ``numbers`` (glue names ``names``) in words for the prose, each
    named by ``what`` (at most 80 characters), or, when either is missing (NaN: the evidence was
    not made), that there is nothing to compare."""
    a, b = (v[0] if isinstance(v, tuple) else v for v in (numbers[n] for n in names))
    if a != a or b != b:
        return "there is no such pair of runs to compare in this build"
    return f"{a:.3f} nats a token {what[0]} and {b:.3f} {what[1]}"


def cooldown_result(numbers: dict) -> str:
    """RNNsearch-50's dev NLL per token with the cool-down and without it (:func:`pair_result`
    of :func:`cooldown_numbers`)."""
    names = ("rns-cooldown-with", "rns-cooldown-without")
    return pair_result(numbers, names, ("with it", "without"))


def encdec_lr_result(numbers: dict) -> str:
    """RNNencdec-30's dev NLL per token at its own rate and at RNNsearch's (:func:`pair_result`
    of :func:`encdec_lr_numbers`)."""
    names = ("rns-encdec-lr-own-nll", "rns-encdec-lr-other-nll")
    return pair_result(numbers, names, ("at its own", "at RNNsearch's"))


def encdec_lr_glue(ex: RNNsearchExperiment, table: pd.DataFrame | None) -> dict:
    """Everything the chapter glues of RNNencdec's own rate: :func:`encdec_lr_numbers` and
    ``rns-encdec-lr-result`` (:func:`encdec_lr_result`)."""
    numbers = encdec_lr_numbers(ex, table)
    return {**numbers, "rns-encdec-lr-result": encdec_lr_result(numbers)}


def cooldown_glue(runs: Runs, table: pd.DataFrame | None) -> dict:
    """Everything the chapter glues of the cool-down's evidence: :func:`cooldown_numbers` and
    ``rns-cooldown-result`` (:func:`cooldown_result`)."""
    numbers = cooldown_numbers(runs, table)
    return {**numbers, "rns-cooldown-result": cooldown_result(numbers)}


def cooldown_numbers(runs: Runs, table: pd.DataFrame | None) -> dict:
    """``glue name -> (value, digits)``: the update after which RNNsearch-50's cool-down began
    (NaN without one), its last update, and its dev NLL per token there with the cool-down and
    without it (``table``: of :func:`cooldown_evidence`; NaN without one)."""
    search50 = runs.runs["RNNsearch-50"].extra
    nll = [np.nan, np.nan] if table is None else table["dev NLL per token"].tolist()
    return {
        "rns-cooldown-trunk": (search50.get("trunk_update", np.nan), None),
        "rns-cooldown-end": (int(search50["updates"]), None),
        "rns-cooldown-with": (nll[0], 3),
        "rns-cooldown-without": (nll[1], 3),
    }


def recipe_candidates(ex: RNNsearchExperiment, runs: Runs) -> pd.DataFrame:
    """The recipe runs (:attr:`Runs.recipes`: RNNsearch-30 with each candidate recipe, the same
    pairs, updates and seed) as a table (:func:`recipe_runs_table`), the lowest dev NLL marked."""
    chosen = (ex.P.dropout, ex.P.lr_decay)
    return recipe_runs_table({k: (a, run_logs(a)) for k, a in runs.recipes.items()}, chosen)[0]


def own_recipe(ex: RNNsearchExperiment) -> str:
    """The chapter's recipe as the table of :func:`recipe_candidates` names it."""
    return recipe_label(ex.P.dropout, ex.P.lr_decay)


def dropout_long_candidates(ex: RNNsearchExperiment, runs: Runs) -> pd.DataFrame:
    """The candidate dropouts of the "-50" models (:attr:`Runs.dropout_long`: RNNsearch-50 with
    each, the same pairs, updates, seed and schedule) as a table indexed by dropout, the lowest
    dev NLL per token of the delivered parameters marked."""
    decay = ex.P.lr_decay
    chosen = ex.dropout_of("RNNsearch-50")
    candidates = {(d, decay): (a, run_logs(a)) for d, a in runs.dropout_long.items()}
    table, _ = recipe_runs_table(candidates, (chosen, decay))
    # indexed by the candidates' own values (the table's are rounded)
    table = table.drop(columns=["dropout", "lr_decay"]).set_axis(list(runs.dropout_long))
    table.index.name = "dropout"
    return table


#: the column the dev rule of the recipe's candidates reads
DEV_RULE = "dev NLL per token (best)"


def candidate_numbers(table: pd.DataFrame, own, prefix: str) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 3)``: the dev NLL per token of the chapter's own candidate ``own``
    (a row of ``table``: :func:`recipe_candidates`, :func:`dropout_long_candidates`) and the
    lowest of the others (NaN without others), as ``<prefix>-own`` and ``<prefix>-other``."""
    others = table.drop(index=own)[DEV_RULE]
    return {
        f"{prefix}-own": (float(table.loc[own, DEV_RULE]), 3),
        f"{prefix}-other": (float(others.min()) if len(others) else np.nan, 3),
    }


def candidate_result(table: pd.DataFrame, own) -> str:
    """What the chapter's own candidate ``own`` reached against the others, in words for the
    prose (at most 80 characters): its dev NLL per token and the lowest of the others', or that
    it was the only candidate trained."""
    numbers = candidate_numbers(table, own, "x")
    if len(table) < 2:
        return "it was the only candidate trained: nothing to compare"
    own_nll, other = numbers["x-own"][0], numbers["x-other"][0]
    return f"it reaches {own_nll:.3f} nats a token, the best other candidate {other:.3f}"


def candidate_word(table: pd.DataFrame, own, what: str) -> str:
    """Where the measure (the lowest dev NLL per token) puts the chapter's own candidate ``own``
    (its ``what``: "recipe", ...), in words; whether another replaces it is the spread rule's
    (:func:`.choices.spread_rule`), not this ranking's."""
    if len(table) < 2:
        return f"had only the chapter's {what} to read: nothing was compared on dev here"
    if table.loc[own, "lowest dev NLL"] == "←":
        return f"is lowest for the chapter's {what}"
    return f"is lower for another candidate than for the chapter's {what}"


def candidate_glue(table: pd.DataFrame, own, prefix: str, what: str) -> dict:
    """Everything the chapter glues of a table of candidates (:func:`recipe_candidates`,
    :func:`dropout_long_candidates`) and the chapter's own ``own``: :func:`candidate_numbers`,
    ``<prefix>-text`` (:func:`candidate_word`, naming it ``what``) and ``<prefix>-result``
    (:func:`candidate_result`)."""
    return {
        **candidate_numbers(table, own, prefix),
        f"{prefix}-text": candidate_word(table, own, what),
        f"{prefix}-result": candidate_result(table, own),
    }


def cooldown_evidence(runs: Runs) -> tuple[pd.DataFrame | None, str]:
    """RNNsearch-50 at its last update with its cool-down and without it (RNNsearch-50⋆, branched
    where the cool-down began), and the dev rule's verdict in words (:func:`cooldown_table`);
    without a cool-down, ``None`` and why."""
    search50, star = runs.runs["RNNsearch-50"], runs.runs["RNNsearch-50*"]
    if search50.config["train"].get("lr_cooldown") is None:
        return None, "not compared: the runs end without a cool-down (`cooldown` is None)"
    return cooldown_table((search50, runs.logs["RNNsearch-50"]), (star, runs.logs["RNNsearch-50*"]))


def _precision(ex: RNNsearchExperiment) -> str:
    """The precision row of the recipe: bf16 or float32, and why when ``bf16`` was ``None``."""
    text = "bfloat16 autocast" if ex.bf16 else "float32"
    if ex.P.bf16 is not None:
        return text
    if ex.device.type == "cpu" and ex.bf16:
        return text + f" (bf16=None: the CPU has {', '.join(cpu_bf16_instructions())})"
    return text + f" (bf16=None: chosen for this {ex.device.type})"


def _chosen(ex: RNNsearchExperiment) -> str:
    """How a recipe row was chosen: compared on dev with ``recipe_runs`` (see the recipe
    section for whether the rule picked it), or not compared here."""
    if parse_recipe_runs(ex.P.recipe_runs):
        return " (compared on dev with the recipe runs)"
    return " (not compared on dev in this run: `recipe_runs` is empty)"


def _dropout_text(ex: RNNsearchExperiment) -> str:
    """The departures table's dropout: the "-30" models' (compared on dev with the recipe runs
    or not) and, where it differs, the "-50" models' (with ``dropout_runs_long`` or not)."""
    p = ex.P

    def on(d: float) -> str:
        return f"{d:g} on the maxout units" if d else "none"

    short = on(p.dropout) + _chosen(ex)
    long = ex.dropout_of("RNNsearch-50")
    candidates = parse_dropouts(p.dropout_runs_long, "dropout_runs_long")
    encdec = ""
    if p.dropout_encdec is not None:  # RNNencdec's own, both lengths
        encdec = f"; RNNencdec: {on(p.dropout_encdec)} (its own, `dropout_encdec`)"
    if long == p.dropout and not candidates:
        return short + encdec
    how = (
        "compared on dev with the runs of `dropout_runs_long`"
        if candidates
        else "not compared on dev in this run: `dropout_runs_long` is empty"
    )
    return f"-30 models: {short}; -50 models: {on(long)} ({how}){encdec}"


def _encdec_decay(ex: RNNsearchExperiment) -> str:
    """RNNencdec's own schedule where ``lr_decay_encdec`` sets one, for the schedule row."""
    if ex.P.lr_decay_encdec is None:
        return ""
    decay = ex.lr_decay_of("rnnencdec")
    own = "a constant rate" if decay is None else f"× {decay:g} when dev stalls"
    return f"; RNNencdec: {own} (its own, `lr_decay_encdec`)"


def _optimiser_text(ex: RNNsearchExperiment) -> str:
    """The departures table's optimiser: the chosen one, its rate, and RNNencdec's own rate
    (compared on dev with RNNsearch's or not)."""
    p = ex.P
    optimiser = p.optimizer + (f", lr {p.lr:g}" if p.optimizer != "adadelta" else "")
    if p.optimizer == "adam":  # TrainConfig.eps is Adadelta's, kept when Adam was chosen
        optimiser += ", eps 1e-6 (Adadelta's; Adam's own is 1e-8)"
    if ex.lr_of("rnnencdec") != p.lr:
        optimiser += f" (RNNencdec: {ex.lr_of('rnnencdec'):g}" + (
            ", compared on dev with RNNsearch's rate)"
            if p.encdec_lr_check
            else ", not compared on dev in this run: `encdec_lr_check` is off)"
        )
    return optimiser


def _data_rows(ex: RNNsearchExperiment) -> list[tuple[str, str, str, str]]:
    """The departures table's rows of the data and the model's sizes."""
    p = ex.P
    n_train = f"{len(ex.corpus.train):,} training pairs"
    if p.max_train is not None:
        n_train += f", the first {p.max_train:,}"
    return [
        (
            "corpus",
            "WMT'14 English→French, 348M words",
            f"{p.corpus}: {n_train}",
            "corpus, max_train",
        ),
        (
            "shortlists (source / target)",
            "30,000 / 30,000",
            f"{p.src_vocab:,} / {p.tgt_vocab:,}",
            "src_vocab, tgt_vocab",
        ),
        (
            "length filters",
            "30 / 50 words",
            f"{p.len_short} / {p.len_long} tokens, both sides",
            "len_short, len_long",
        ),
        (
            "hidden units n, alignment n'",
            "1000, 1000",
            f"{p.hidden}, {p.align}",
            "hidden, align",
        ),
        ("embedding m, maxout l", "620, 500", f"{p.emb}, {p.maxout}", "emb, maxout"),
    ]


def _training_rows(ex: RNNsearchExperiment) -> list[tuple[str, str, str, str]]:
    """The departures table's rows of training: dropout, the schedule, the optimiser, the
    lengths of the runs."""
    p = ex.P
    clip = "none" if p.clip_norm is None else f"L2 norm {p.clip_norm:g}"
    optimiser = _optimiser_text(ex)
    return [
        (
            "dropout",
            "none",
            _dropout_text(ex),
            "dropout, recipe_runs, dropout_long, dropout_runs_long, dropout_encdec",
        ),
        (
            "learning-rate schedule",
            "none (Adadelta's own step sizes)",
            (
                "constant"
                if p.lr_decay is None
                else f"× {p.lr_decay:g} after every {p.lr_patience} dev evaluation(s) in a "
                "row without a lower dev NLL" + decay_start_text(ex) + _chosen(ex)
            )
            + _encdec_decay(ex),
            "lr_decay, lr_patience, lr_decay_start, recipe_runs, lr_decay_encdec",
        ),
        (
            "cool-down at the end of a run",
            "none",
            "none"
            if p.cooldown is None
            else f"the rate falls linearly towards 0 over the last {p.cooldown:g} of each "
            "run's budget (kept if it lowers RNNsearch-50's dev NLL; the paper's Adadelta run "
            "has none)",
            "cooldown",
        ),
        (
            "optimiser",
            "Adadelta (ρ 0.95, ε 1e-6)",
            optimiser,
            "optimizer, lr, lr_encdec, encdec_lr_check",
        ),
        ("gradient clipping", "L2 norm 1", clip, "clip_norm"),
        ("minibatch", "80 pairs", f"{p.batch_size} pairs", "batch_size"),
        (
            "training length",
            "about 5 days each (2.9–8.5 × 10⁵ updates)",
            updates_text(ex).replace("The runs", "runs"),
            "updates_encdec, updates_search, updates_search_long, lr_min",
        ),
        (
            "RNNsearch-50⋆",
            "trained until dev stopped improving (6.7 × 10⁵ updates)",
            "RNNsearch-50 continued"
            + (" from where its cool-down began" if p.cooldown is not None else "")
            + f", at most {star_updates(p):,} updates, patience {p.star_patience}",
            "updates_star, star_patience",
        ),
    ]


def _evaluation_rows(ex: RNNsearchExperiment) -> list[tuple[str, str, str, str]]:
    """The departures table's rows of precision, search and the evaluated sets."""
    p = ex.P
    return [
        ("precision", "float32 (GPU)", _precision(ex), "bf16"),
        ("beam width", "not stated", f"{p.beam_size}", "beam_size"),
        (
            "minimum length of a translation",
            "not stated (the papers' code: len(source)/2, GroundHog's sampler)",
            "none"
            if ex.min_len is None
            else "len(source)/2 tokens before the end may be generated, every search",
            "min_len",
        ),
        (
            "dev set",
            "news-test-2012 + 2013",
            f"{len(ex.dev):,} sentences (dev BLEU curve: {len(ex.dev_index):,} of them, drawn with "
            "the seed)",
            "max_dev, dev_bleu_sentences",
        ),
        ("test set", "news-test-2014 (3,003 sentences)", f"{ex.n_test:,} sentences", "max_test"),
    ]


def departures(
    ex: RNNsearchExperiment, choices: list[tuple[str, str, str, str]] | None = None
) -> pd.DataFrame:
    """The paper's recipe (B §4 and Appendix B) beside this run's, a row per setting with the
    chapter parameters that set it; ``choices``: rows of each family's choices on dev, with
    their margins and spreads (:func:`.choices.departure_rows`), last."""
    rows = _data_rows(ex) + _training_rows(ex) + _evaluation_rows(ex) + list(choices or [])
    columns = ["setting", "Bahdanau et al. 2015", "this run", "parameters"]
    return pd.DataFrame(rows, columns=columns).set_index("setting")


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


COOLDOWN_COLUMNS = ["update", "dev NLL per token", "dev BLEU (greedy)"]


def cooldown_table(
    cooled: tuple[Artifact, dict[str, pd.DataFrame]],
    branch: tuple[Artifact, dict[str, pd.DataFrame]],
) -> tuple[pd.DataFrame | None, str]:
    """RNNsearch-50 (``cooled``: its run and logs) at its last update, with its cool-down,
    against the same run without it, and the rule's verdict in words.

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
        return None, "not compared: RNNsearch-50⋆ did not branch where the cool-down began"
    if b_start is not None and b_start < update:
        return None, "not compared: RNNsearch-50⋆'s own cool-down began before RNNsearch-50's end"
    rows = {}
    for label, run, lg in (
        ("with the cool-down (RNNsearch-50)", art, logs),
        ("without it (RNNsearch-50⋆ at the same update)", b_art, b_logs),
    ):
        ev = lg["eval"]
        at = ev[(ev["update"] == update) & ev["scheduled"].astype(bool)]
        if not len(at):
            who = "RNNsearch-50⋆" if run is b_art else "RNNsearch-50"
            return None, f"not compared: {who} has no scheduled dev evaluation there"
        rows[label] = {
            "update": update,
            "dev NLL per token": float(at["dev_nll_token"].iloc[0]),
            "dev BLEU (greedy)": _dev_bleu_exactly(lg["bleu"], update),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")[COOLDOWN_COLUMNS]
    table.index.name = f"RNNsearch-50, cool-down from update {int(trunk):,}"
    with_, without = table["dev NLL per token"].tolist()
    if with_ < without:
        text = "the cool-down lowers it: the rule keeps it"
    else:
        text = "**the cool-down does not lower it**: the rule does not keep it"
    return table.round({"dev NLL per token": 3, "dev BLEU (greedy)": 2}), text


ENCDEC_LR_COLUMNS = [
    "lr",
    "lowest dev NLL per token",
    "at update",
    "updates made",
    "budget",
    "stopped early",
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
    the rule's verdict in words. Each run is read as the recipe runs are: the dev NLL per
    token of its delivered parameters (its lowest evaluation, ``extra["best"]``), over its whole
    budget; a run the schedule stopped early (``lr_min``) delivered what it had, and the table
    says so. Rule (dev only): the rate with the lower one is kept."""
    rows = {}
    for label, (rate, art, logs), mine in (
        ("RNNencdec's own rate (`lr_encdec`)", own, "yes"),
        ("RNNsearch's rate (`lr`)", other, ""),
    ):
        best = art.extra["best"]
        at = int(best["update"])
        made, budget = int(art.extra["updates"]), int(art.config["train"]["max_updates"])
        cool = cooldown_start(TrainConfig.from_dict(art.config["train"]))
        stopped = "" if made >= budget else art.extra.get("stopped", "stopped")
        if stopped and cool is not None and made <= cool:
            stopped += ", before its cool-down"
        rows[label] = {
            "lr": rate,
            "lowest dev NLL per token": float(best["dev_nll_token"]),
            "at update": at,
            "updates made": made,
            "budget": budget,
            "stopped early": stopped,
            "dev BLEU (greedy) there": _dev_bleu_exactly(logs["bleu"], at),
            "the chapter's": mine,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")[ENCDEC_LR_COLUMNS]
    table.index.name = "RNNencdec-30, its whole budget at each rate"
    own_nll, other_nll = table["lowest dev NLL per token"].tolist()
    if own_nll < other_nll:
        text = "the rule keeps RNNencdec's own rate"
    else:
        text = "**the rule does not keep RNNencdec's own rate**: `lr_encdec` should be None"
    return table.round({"lowest dev NLL per token": 3, "dev BLEU (greedy) there": 2}), text
