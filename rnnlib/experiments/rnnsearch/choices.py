"""The recipe's choices per model family and the rule that makes them, named before the runs: a
recipe that is not the paper's replaces the paper's only when its gain on the selection measure
(:data:`MEASURE`) exceeds the spread of two draws of one recipe (:func:`spread_rule`); without a
measured spread nothing is chosen. RNNsearch's choices are made on RNNsearch runs, RNNencdec's
on RNNencdec runs: the study of RNNencdec-50's dropout, rate and schedule (``encdec_runs``,
:func:`study_table`), whose spread comes from the draws it holds of one recipe (another seed of
a recipe, or the further seeds of the chapter's RNNencdec-50); each family's choice with its
margin and the spread (:func:`family_choices`) for the departures table; and the reader of a
study kept as a record in ``records/`` when it is too long for the chapter
(:func:`read_study_record`).

Deviations
----------
- B makes no choice on dev: one recipe (Adadelta, no dropout, no schedule) trains both
  architectures. Every departure here is a choice on dev, and this module says whether it
  passes the rule.
- The spread of two draws is their difference in the measure (for more draws, the largest
  difference: max − min), a noise floor read from the book's own seeds, not a test.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ...cache import Artifact
from ..training_runs import run_logs
from .recipe import (
    DEV_RULE,
    cooldown_evidence,
    cooldown_numbers,
    dropout_long_candidates,
    encdec_lr_evidence,
    own_recipe,
    recipe_candidates,
    recipe_label,
)
from .seeds import SeedRuns
from .setting import NAMES, RNNsearchExperiment, glue_key
from .training import (
    Runs,
    chapters_encdec_recipe,
    paper_encdec_recipe,
    parse_dropouts,
    parse_encdec_runs,
)

#: the selection measure of every choice, named before the runs
MEASURE = "dev NLL per token of the delivered parameters"
#: the four models trained from scratch, whose further seeds are draws of one recipe
FROM_SCRATCH = [n for n in NAMES if not n.endswith("*")]
#: the choices of the departures table, by row id: (family, what is chosen, its parameters)
CHOICES = {
    "search-recipe": ("RNNsearch", "dropout and schedule", "recipe_runs, seed_runs, seed_short"),
    "search-dropout-long": (
        "RNNsearch",
        "dropout of the -50 models",
        "dropout_long, dropout_runs_long, seed_runs",
    ),
    "search-cooldown": ("RNNsearch", "cool-down", "cooldown, seed_runs"),
    "encdec-lr": ("RNNencdec", "learning rate", "lr_encdec, encdec_lr_check, seed_runs"),
    "encdec-study": (
        "RNNencdec",
        "dropout, rate and schedule",
        "dropout_encdec, lr_decay_encdec, encdec_runs, seed_runs",
    ),
}
CHOICE_COLUMNS = [
    "family",
    "setting",
    "choice",
    "made on",
    "against",
    "margin",
    "spread",
    "spread of",
    "rule",
]


def spread_rule(gain: float, spread: float | None) -> tuple[bool, str]:
    """The rule: a recipe replaces the paper's (or the other it is compared with) only when its
    ``gain`` (the other's dev NLL per token minus its own) exceeds ``spread`` (the difference of
    two draws of one recipe, :func:`spread_of`). ``(chosen, words)``: not chosen without a
    measured spread (``None``/NaN) or without a gain to read (NaN), whatever the gain."""
    if gain is None or gain != gain:
        return False, "not chosen: not compared on dev"
    if spread is None or spread != spread:
        return False, "not chosen: no spread measured"
    if gain > spread:
        return True, f"chosen: it gains {gain:.3f}, above the spread {spread:.3f}"
    return False, f"not chosen: it gains {gain:.3f}, not above the spread {spread:.3f}"


def spread_of(values: Sequence[float]) -> float | None:
    """The spread of draws of one recipe (their values of the measure, NaN dropped): the largest
    difference between two of them (max − min); ``None`` with fewer than two."""
    kept = [float(v) for v in values if v == v]
    return max(kept) - min(kept) if len(kept) >= 2 else None


def best_nll(run: Artifact) -> float:
    """The measure of a run: the dev NLL per token of its delivered parameters."""
    return float(run.extra["best"]["dev_nll_token"])


def seed_draws(runs: Runs, sr: SeedRuns, recorded=None) -> dict[str, list[float]]:
    """``model -> the measure of each draw of its recipe``: the chapter's run of each model
    trained from scratch (:data:`FROM_SCRATCH`), then each further seed's run of it where the
    seed has one (:mod:`.seeds`: ``seed_runs``, ``seed_short``, ``cached_spread``), then each
    seed recorded apart whose record matches this code (``recorded``: a
    :class:`rnnlib.experiments.spread_book.RecordedSpread` of :mod:`.recorded`; ``rnnlib
    spread``), where its record holds the measure."""
    out = {name: [best_nll(runs.runs[name])] for name in FROM_SCRATCH}
    for arts in sr.further:
        for name in FROM_SCRATCH:
            if name in arts:
                out[name].append(best_nll(arts[name]))
    for records in recorded.records.values() if recorded is not None else ():
        for rec in records.matching:
            for name in FROM_SCRATCH:
                value = rec["headline"].get(f"{name}, dev NLL per token")
                if value is not None:
                    out[name].append(float(value))
    return out


def draw_numbers(runs: Runs) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 3)``: the measure of each model's run (:func:`best_nll`), the
    numbers a recorded seed replicates (:data:`rnnlib.book.spread_records.HEADLINES`)."""
    return {f"rns-devtok-{glue_key(n)}": (best_nll(runs.runs[n]), 3) for n in NAMES}


def family_spread(
    draws: dict[str, list[float]], models: Sequence[str], more: float | None = None
) -> tuple[float | None, str]:
    """The spread a choice made on ``models[0]`` reads, and whose it is: that model's draws
    (:func:`spread_of`), else the next of ``models`` (the family's other model) that has two;
    ``more`` (a spread measured elsewhere on ``models[0]``, e.g. in a study) counts with the
    first model's, the larger kept. ``(None, "no two draws of one recipe")`` without any."""
    for k, name in enumerate(models):
        spread = spread_of(draws.get(name, []))
        if k == 0 and more is not None:
            spread = more if spread is None else max(spread, more)
        if spread is not None:
            n = len(draws.get(name, []))
            return spread, f"{name}, {n} seed{'s' if n != 1 else ''}" + (
                " and the study" if k == 0 and more is not None else ""
            )
    return None, "no two draws of one recipe"


# -- the RNNencdec-50 study (encdec_runs) ----------------------------------------------------------
Recipe = tuple[float, float, float | None]


def study_label(recipe: Recipe) -> str:
    """A study recipe ``(dropout, lr, lr_decay)`` as the table names it."""
    dropout, lr, decay = recipe
    return f"{recipe_label(dropout, decay)}, lr {lr:g}"


def study_parameters(recipe: Recipe) -> str:
    """The chapter parameters that give RNNencdec the study recipe ``(dropout, lr, lr_decay)``
    (what a profile sets when the rule chooses it)."""
    dropout, lr, decay = recipe
    schedule = "1" if decay is None else f"{decay:g}"  # 1: a constant rate
    return f"dropout_encdec={dropout:g}, lr_encdec={lr:g}, lr_decay_encdec={schedule}"


def study_draws(ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns) -> dict[Recipe, dict]:
    """``(dropout, lr, lr_decay) -> {seed: RNNencdec-50 run}``: the study's runs
    (:attr:`Runs.encdec_study`) grouped by recipe, the further seeds' RNNencdec-50 joining the
    chapter's recipe (each a draw of it with another seed)."""
    out: dict[Recipe, dict] = {}
    for (dropout, lr, decay, seed), run in runs.encdec_study.items():
        out.setdefault((dropout, lr, decay), {})[seed] = run
    own = chapters_encdec_recipe(ex)[:3]
    for seed, arts in zip(sr.seeds[1:], sr.further):
        if "RNNencdec-50" in arts:
            out.setdefault(own, {})[seed] = arts["RNNencdec-50"]
    return out


def study_table(draws: dict[Recipe, dict], paper: Recipe, own: Recipe) -> pd.DataFrame:
    """The study as a table, a row per recipe (:func:`study_draws`): its draws (seeds), the
    measure of each and their mean, the update of the first draw's delivered parameters and
    its greedy dev BLEU there, the paper's and the chapter's recipe marked, and the parameters
    that set it (:func:`study_parameters`)."""
    rows = []
    for recipe, by_seed in draws.items():
        nll = [best_nll(run) for run in by_seed.values()]
        first = next(iter(by_seed.values()))
        at = int(first.extra["best"]["update"])
        bleu = run_logs(first)["bleu"]
        shown = bleu[bleu["update"] <= at]["dev_bleu"]
        rows.append(
            {
                "recipe": study_label(recipe),
                "seeds": ", ".join(str(s) for s in by_seed),
                "dev NLL per token": float(np.mean(nll)),
                "per draw": ", ".join(f"{v:.3f}" for v in nll),
                "spread of its draws": spread_of(nll),
                "best update (first draw)": at,
                "dev BLEU (greedy, there)": float(shown.iloc[-1]) if len(shown) else math.nan,
                "the paper's": "yes" if recipe == paper else "",
                "the chapter's": "yes" if recipe == own else "",
                "as parameters": study_parameters(recipe),
            }
        )
    return pd.DataFrame(rows).set_index("recipe").round(3)


def study_choice(table: pd.DataFrame, paper_label: str, spread: float | None) -> dict:
    """The rule on a study ``table`` (:func:`study_table`, or :func:`record_table`): the recipe
    with the lowest dev NLL per token other than the paper's (``paper_label``), its gain over
    the paper's and the rule's verdict (:func:`spread_rule`) against ``spread``, as ``{"best",
    "gain", "spread", "chosen", "rule"}`` (``best`` None and the gain NaN without a candidate
    beside the paper's recipe)."""
    nll = table["dev NLL per token"]
    others = nll.drop(index=paper_label, errors="ignore")
    if paper_label not in nll.index or not len(others):
        return {
            "best": None,
            "gain": math.nan,
            "spread": spread,
            "chosen": False,
            "rule": "not chosen: no study beside the paper's recipe",
        }
    best = str(others.idxmin())
    gain = float(nll[paper_label] - others.min())
    chosen, words = spread_rule(gain, spread)
    return {"best": best, "gain": gain, "spread": spread, "chosen": chosen, "rule": words}


def study_spread(table: pd.DataFrame) -> float | None:
    """The spread of the study: the largest of its recipes' spreads over their own draws
    (``None`` when no recipe has two)."""
    spreads = [float(s) for s in table["spread of its draws"] if s is not None and s == s]
    return max(spreads) if spreads else None


def encdec_study(ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns) -> tuple[pd.DataFrame, dict]:
    """The RNNencdec-50 study's table (:func:`study_table`) and the rule's choice
    (:func:`study_choice`, its spread :func:`study_spread`), with ``"source"``: whose runs.
    With ``encdec_record`` set and ``encdec_runs`` empty, the record's instead
    (:func:`read_study_record`, :func:`record_table`, its own spread)."""
    if ex.P.encdec_record.strip() and not parse_encdec_runs(ex.P.encdec_runs):
        record = read_study_record(ex.root / ex.P.encdec_record.strip())
        table = record_table(record)
        source = f"RNNencdec-50, record {ex.P.encdec_record.strip()} (commit {record.commit[:7]})"
        return table, {**study_choice(table, record.paper, record.spread), "source": source}
    paper, own = paper_encdec_recipe(ex)[:3], chapters_encdec_recipe(ex)[:3]
    table = study_table(study_draws(ex, runs, sr), paper, own)
    choice = study_choice(table, study_label(paper), study_spread(table))
    return table, {**choice, "source": "RNNencdec-50 (encdec_runs)"}


# -- each family's choice, for the departures table ------------------------------------------------
def _pair_margin(table: pd.DataFrame | None, column: str, own, other) -> float:
    """``table[column]`` at ``other`` minus at ``own`` (NaN without either row)."""
    if table is None or own not in table.index or other not in table.index or own == other:
        return math.nan
    return float(table.loc[other, column] - table.loc[own, column])


def _row(
    key: str,
    choice: str,
    made_on: str,
    against: str,
    margin: float,
    spread,
    departs: bool = True,
    why: str | None = None,
) -> dict:
    """A row of :func:`family_choices`, the rule applied to ``margin`` and ``spread`` (the
    :func:`family_spread` pair); ``departs`` False: the choice is the paper's, nothing chosen;
    ``why``: the rule's words where nothing was compared (in place of the rule's)."""
    family, setting, _ = CHOICES[key]
    value, whose = spread
    _, words = spread_rule(margin, value) if departs else (False, "the paper's: no departure")
    if departs and why is not None and margin != margin:
        words = why
    spread_value = math.nan if value is None else value
    values = [family, setting, choice, made_on, against, margin, spread_value, whose, words]
    return dict(zip(CHOICE_COLUMNS, values))


def best_candidate(recipes: pd.DataFrame | None, paper: str) -> str | None:
    """The recipe run (a row of :func:`.recipe.recipe_candidates`) with the lowest dev NLL per
    token other than the paper's recipe ``paper``: the one the rule reads against the paper's
    when the chapter trains the paper's own (``None`` without another)."""
    if recipes is None or not len(recipes):
        return None
    others = recipes[DEV_RULE].drop(index=paper, errors="ignore")
    return str(others.idxmin()) if len(others) else None


def family_choices(
    ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns, recorded=None
) -> pd.DataFrame:
    """Each family's choices (:data:`CHOICES`, index the row id): what was chosen, on which
    model's runs, against what, the margin (the other's dev NLL per token minus the choice's,
    as the chapter's evidence tables give it), the spread it reads (:func:`family_spread`) and
    the rule's verdict (:func:`spread_rule`). Where the chapter trains the paper's recipe, the
    RNNsearch row reads the best other recipe run against it (:func:`best_candidate`), as the
    RNNencdec study's row reads its best candidate: "chosen" there says the profile should
    take it. ``recorded``: the seeds recorded apart (:func:`seed_draws`)."""
    p, draws = ex.P, seed_draws(runs, sr, recorded)
    search, encdec = ("RNNsearch-30", "RNNsearch-50"), ("RNNencdec-30", "RNNencdec-50")
    paper = recipe_label(0.0, None)
    recipes = recipe_candidates(ex, runs)
    own = own_recipe(ex)
    shown = best_candidate(recipes, paper) if own == paper else own
    rows = {
        "search-recipe": _row(
            "search-recipe",
            shown or own,
            "RNNsearch-30 (recipe_runs)",
            paper,
            _pair_margin(recipes, DEV_RULE, shown, paper),
            family_spread(draws, search),
            shown is not None and shown != paper,
        )
    }
    long = ex.dropout_of("RNNsearch-50")
    asked = parse_dropouts(p.dropout_runs_long, "dropout_runs_long")
    longs = dropout_long_candidates(ex, runs) if asked else None
    rows["search-dropout-long"] = _row(
        "search-dropout-long",
        f"{long:g}",
        "RNNsearch-50 (dropout_runs_long)",
        "0",
        _pair_margin(longs, DEV_RULE, long, 0.0),
        family_spread(draws, search[::-1]),
        long != 0,
    )
    if long != 0 and p.dropout_long is None and not asked:  # RNNsearch's recipe, chosen above
        verdict = str(rows["search-recipe"]["rule"]).split(":")[0]
        rows["search-dropout-long"].update(
            {"made on": "RNNsearch-30, as RNNsearch's recipe", "rule": f"{verdict} (row above)"}
        )
    cooled = cooldown_numbers(runs, cooldown_evidence(runs)[0])
    gain = cooled["rns-cooldown-without"][0] - cooled["rns-cooldown-with"][0]
    rows["search-cooldown"] = _row(
        "search-cooldown",
        "none" if p.cooldown is None else f"{p.cooldown:g} of each budget",
        "RNNsearch-50 against RNNsearch-50⋆",
        "none",
        gain,
        family_spread(draws, search[::-1]),
        p.cooldown is not None,
    )
    rates, _ = encdec_lr_evidence(ex, runs)
    nll = [math.nan] * 2 if rates is None else rates["lowest dev NLL per token"].tolist()
    rows["encdec-lr"] = _row(
        "encdec-lr",
        f"{ex.lr_of('rnnencdec'):g}",
        "RNNencdec-30 (encdec_lr_check)",
        f"RNNsearch's, {p.lr:g}",
        nll[1] - nll[0],
        family_spread(draws, encdec),
        ex.lr_of("rnnencdec") != p.lr,
    )
    table, choice = encdec_study(ex, runs, sr)
    own, paper = chapters_encdec_recipe(ex)[:3], paper_encdec_recipe(ex)[:3]
    rows["encdec-study"] = _row(
        "encdec-study",
        choice["best"] or study_label(own),
        choice["source"],
        study_label(paper),
        choice["gain"],
        family_spread(draws, encdec[::-1], choice["spread"]),
        len(table) > 1 or own != paper,
        choice["rule"],
    )
    if (
        not p.encdec_lr_check
        and ex.lr_of("rnnencdec") != p.lr
        and choice["best"] in study_names(own)
    ):
        # RNNencdec's rate came with the recipe the study chose (no rate check asked)
        verdict = "chosen" if choice["chosen"] else "not chosen"
        rows["encdec-lr"].update(
            {"made on": "RNNencdec-50, as the study's recipe", "rule": f"{verdict} (row below)"}
        )
    return pd.DataFrame.from_dict(rows, orient="index")[CHOICE_COLUMNS]


def study_names(recipe: Recipe) -> tuple[str, str]:
    """The names a study gives ``recipe`` ``(dropout, lr, lr_decay)``: the chapter's table's
    (:func:`study_label`) and a record's (:func:`study_entry`)."""
    return study_label(recipe), study_entry(recipe)


def choice_words(margin: float, spread: float, rule: str) -> str:
    """A choice in words for the prose (at most 80 characters): its margin and the spread, and
    whether the rule chose it (:func:`spread_rule`'s ``rule``); the rule's words alone where
    there is no margin."""
    if margin != margin:
        return rule
    verdict = rule.split(":")[0]
    if spread != spread:
        return f"a margin of {margin:.3f} nats a token, no spread measured: {verdict}"
    return f"a margin of {margin:.3f} nats a token, spread {spread:.3f}: {verdict}"


def choice_numbers(choices: pd.DataFrame) -> dict:
    """``glue name -> value``: each choice's margin and spread (NaN where not measured; nats a
    token, 3 digits) and the choice in words (``rns-choice-<id>``, :func:`choice_words`), from
    :func:`family_choices`."""
    out: dict = {}
    for key, row in choices.iterrows():
        margin, spread = float(row["margin"]), float(row["spread"])
        out[f"rns-choice-{key}-margin"] = (margin, 3)
        out[f"rns-choice-{key}-spread"] = (spread, 3)
        out[f"rns-choice-{key}"] = choice_words(margin, spread, str(row["rule"]))
    return out


def departure_rows(choices: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """The departures table's rows of the choices (:func:`family_choices`): each as "what, made
    on which runs: margin over what, the spread and whose, the rule's verdict"."""
    rows = []
    for key, r in choices.iterrows():
        spread = "none" if r["spread"] != r["spread"] else f"{r['spread']:.3f} ({r['spread of']})"
        if r["margin"] != r["margin"]:
            margin = f"no margin measured against {r['against']}"
        else:
            margin = f"dev NLL {r['margin']:.3f} nats a token below {r['against']}"
        text = f"{r['choice']}, on {r['made on']}: {margin}; spread {spread}: {r['rule']}"
        rows.append(
            (f"choice: {r['family']}'s {r['setting']}", "no choice on dev", text, CHOICES[key][2])
        )
    return rows


# -- a study kept as a record --------------------------------------------------------------------
RECORD_FIELDS = (
    "commit",
    "machine",
    "model",
    "measure",
    "paper",
    "candidates",
    "dev_nll",
    "spread",
)


@dataclass(frozen=True)
class StudyRecord:
    """A dev study kept in ``records/`` (a small JSON with :data:`RECORD_FIELDS`): the commit
    and machine that ran it, the model, the measure (:data:`MEASURE`), the paper's recipe and
    the candidates (``encdec_runs`` entries, ``"dropout/lr/lr_decay"``), the measure of each
    candidate's draws, and the spread of two draws of one recipe (``None``: not measured)."""

    commit: str
    machine: str
    model: str
    measure: str
    paper: str
    candidates: tuple[str, ...]
    dev_nll: dict[str, tuple[float, ...]]
    spread: float | None


def study_entry(recipe: Recipe) -> str:
    """A study recipe ``(dropout, lr, lr_decay)`` as an ``encdec_runs`` entry (a record's name)."""
    dropout, lr, decay = recipe
    return f"{dropout:g}/{lr:g}/{'none' if decay is None else f'{decay:g}'}"


def study_record(
    draws: dict[Recipe, dict], paper: Recipe, spread: float | None, commit: str, machine: str
) -> dict:
    """The study's runs (:func:`study_draws`) as a record for ``records/`` (the JSON
    :func:`read_study_record` reads): ``commit`` and ``machine`` that ran it, the paper's recipe,
    each recipe as an ``encdec_runs`` entry with the measure of each draw, and ``spread``."""
    dev_nll = {
        study_entry(r): [best_nll(run) for run in by_seed.values()] for r, by_seed in draws.items()
    }
    return {
        "what": "RNNencdec-50 with each recipe of encdec_runs, on dev (chapter rnnsearch)",
        "commit": commit,
        "machine": machine,
        "model": "RNNencdec-50",
        "measure": MEASURE,
        "paper": study_entry(paper),
        "candidates": list(dev_nll),
        "dev_nll": dev_nll,
        "seeds": {study_entry(r): list(by_seed) for r, by_seed in draws.items()},
        "spread": spread,
    }


def read_study_record(path: Path) -> StudyRecord:
    """The study record at ``path`` (:class:`StudyRecord`), checked: every field present, the
    measure :data:`MEASURE`, the paper's recipe among the candidates, each candidate with at
    least one finite dev NLL, the spread ``None`` or at least the spread of any candidate's own
    draws. A bad record is an error naming the file and what is wrong."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))

    def bad(what: str) -> ValueError:
        return ValueError(f"study record {path}: {what}")

    missing = [f for f in RECORD_FIELDS if f not in data]
    if missing:
        raise bad(f"missing {', '.join(missing)}")
    if data["measure"] != MEASURE:
        raise bad(f"measure {data['measure']!r} is not {MEASURE!r}")
    candidates = tuple(str(c) for c in data["candidates"])
    if data["paper"] not in candidates:
        raise bad(f"the paper's recipe {data['paper']!r} is not among the candidates")
    dev_nll = {}
    for c in candidates:
        values = tuple(float(v) for v in data["dev_nll"].get(c, []))
        if not values or not all(math.isfinite(v) for v in values):
            raise bad(f"candidate {c!r} has no finite dev NLL")
        dev_nll[c] = values
    spread = data["spread"]
    own = [s for s in (spread_of(v) for v in dev_nll.values()) if s is not None]
    if spread is not None and (not spread >= 0 or any(s > spread + 1e-9 for s in own)):
        raise bad(f"spread {spread!r} is negative or below a candidate's own draws")
    return StudyRecord(
        str(data["commit"]),
        str(data["machine"]),
        str(data["model"]),
        MEASURE,
        str(data["paper"]),
        candidates,
        dev_nll,
        spread,
    )


def record_table(record: StudyRecord) -> pd.DataFrame:
    """The record's candidates as :func:`study_choice` reads them: per candidate (index, as the
    record names it) its draws' dev NLL per token, their mean and spread, the paper's marked."""
    rows = [
        {
            "recipe": c,
            "dev NLL per token": float(np.mean(v)),
            "per draw": ", ".join(f"{x:.3f}" for x in v),
            "spread of its draws": spread_of(v),
            "the paper's": "yes" if c == record.paper else "",
        }
        for c, v in record.dev_nll.items()
    ]
    return pd.DataFrame(rows).set_index("recipe").round(3)
