"""The training runs and their schedule: the five models of B Table 1 (RNNencdec-30/50,
RNNsearch-30/50 and RNNsearch-50⋆, RNNsearch-50 continued with early stopping on dev), the
Adadelta run, the recipe runs, the candidate dropouts of the "-50" models, the check of
RNNencdec's own rate and the study of RNNencdec-50's recipe (``encdec_runs``), each an
``rnnsearch/run`` artifact and a job of
:func:`rnnlib.experiments.run_pool.build_side_by_side`.

Deviations
----------
- B gives each model the same time; a run here is keyed by its update count, so that the cache
  key does not depend on the machine's speed: the paper's ratio of update rates stands in for
  "the same time" (:func:`equal_time_updates`), and Table 2 shows the minutes each run took.
  Across the two lengths each has a budget of its own (``updates_search``,
  ``updates_search_long``), chosen on dev (:mod:`.budget`).
- RNNsearch-50⋆ is RNNsearch-50 *continued* (B: "trained much longer"); with a cool-down it
  branches where RNNsearch-50's cool-down began.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ...batch import BATCH_FORMAT
from ...book import papers
from ...cache import Artifact
from ...train import TrainConfig
from ..run_pool import Job, build_side_by_side
from ..training_runs import length_filter, load_model, run_logs, train_run
from .setting import NAMES, SHOWN, Params, RNNsearchExperiment, glue_key


@dataclass
class Runs:
    """The trained models: ``runs`` (name -> training artifact, :data:`NAMES`), their ``logs``
    (:func:`rnnlib.experiments.training_runs.run_logs`), the Adadelta run (or ``None``)."""

    runs: dict[str, Artifact]
    logs: dict[str, dict[str, pd.DataFrame]]
    arch: dict[str, str]
    adadelta: Artifact | None = None
    #: ``(dropout, lr_decay) -> RNNsearch-30 run`` of every recipe candidate (the chapter's own
    #: recipe is the RNNsearch-30 run itself), :func:`.recipe.recipe_runs_table`
    recipes: dict[tuple[float, float | None], Artifact] = field(default_factory=dict)
    #: ``dropout -> RNNsearch-50 run`` of every candidate dropout of the "-50" models (the
    #: chapter's own is RNNsearch-50 itself), ``dropout_runs_long``
    dropout_long: dict[float, Artifact] = field(default_factory=dict)
    #: RNNencdec-30 trained at RNNsearch's rate over its whole budget, the evidence for
    #: ``lr_encdec`` (:func:`encdec_lr_evidence`); ``None`` when not trained
    encdec_check: Artifact | None = None
    #: ``(dropout, lr, lr_decay, seed) -> RNNencdec-50 run`` of the RNNencdec study
    #: (``encdec_runs``, :func:`study_recipes`): the chapter's RNNencdec-50 under its own recipe,
    #: and each candidate, the paper's recipe among them when there is a study
    encdec_study: dict[tuple[float, float, float | None, int], Artifact] = field(
        default_factory=dict
    )

    def model(self, ex: RNNsearchExperiment, name: str) -> torch.nn.Module:
        """The delivered parameters of model ``name``, on the experiment's device."""
        return load_model(self.runs[name], ex.model_config(self.arch[name])).to(ex.device)


def star_is_search50(runs: Runs) -> bool:
    """Whether RNNsearch-50⋆ delivers the parameters of RNNsearch-50: the continued run's lowest
    dev NLL is still the one at RNNsearch-50's best update, and both deliver the parameters of
    their lowest dev NLL. Then a comparison of the two compares a model with itself: no evidence
    for or against a claim (no self-comparison)."""
    return same_best(runs.runs)


def same_best(runs: dict) -> bool:
    """:func:`star_is_search50` on ``name -> run`` (the chapter's runs or a further seed's). A
    continuation that branched where RNNsearch-50's cool-down began shares its history only up
    to there: an equal best update after it is another model's."""
    best = {n: runs[n].extra["best"]["update"] for n in ("RNNsearch-50", "RNNsearch-50*")}
    star = runs["RNNsearch-50*"]
    if star.extra.get("branch") == "trunk":
        trunk = runs["RNNsearch-50"].extra["trunk_update"]
        return best["RNNsearch-50"] == best["RNNsearch-50*"] and best["RNNsearch-50*"] <= trunk
    return best["RNNsearch-50"] == best["RNNsearch-50*"]


#: the verdict of a claim that would compare RNNsearch-50⋆ with itself
SELF_COMPARISON = (
    "RNNsearch-50⋆ delivered the same parameters as RNNsearch-50 (its continuation found no "
    "lower dev NLL), so the claim would compare a model with itself"
)


def run_specs(ex: RNNsearchExperiment) -> dict[str, tuple[str, int, int]]:
    """``name -> (arch, max_len, updates)`` of the four models trained from scratch: RNNsearch-30
    ``updates_search`` updates, RNNsearch-50 ``updates_search_long`` (``updates_search`` when
    None), RNNencdec as many as the paper's equal time gives beside the RNNsearch of its length
    (:func:`equal_time_updates`)."""
    p = ex.P
    search = p.updates_search
    long = search_long_updates(p)
    return {
        "RNNencdec-30": (
            "rnnencdec",
            p.len_short,
            equal_time_updates(search, p.updates_encdec, "short"),
        ),
        "RNNsearch-30": ("rnnsearch", p.len_short, search),
        "RNNencdec-50": (
            "rnnencdec",
            p.len_long,
            equal_time_updates(long, p.updates_encdec, "long"),
        ),
        "RNNsearch-50": ("rnnsearch", p.len_long, long),
    }


def search_long_updates(p: Params) -> int:
    """RNNsearch-50's updates: ``updates_search_long``, or ``updates_search`` when it is None."""
    long = p.updates_search_long
    return p.updates_search if long is None else int(long)


def star_updates(p: Params) -> int:
    """RNNsearch-50⋆'s limit of updates in all: ``updates_star``, at least RNNsearch-50's."""
    return max(p.updates_star, search_long_updates(p))


def updates_text(ex: RNNsearchExperiment) -> str:
    """How the runs' update counts were set: equal time (the paper's ratio of update rates) or
    fixed counts, with each model's updates."""
    specs = run_specs(ex)
    counts = ", ".join(f"{SHOWN[n]} {u:,}" for n, (_, _, u) in specs.items())
    stop = ""
    if ex.P.lr_min is not None and ex.P.lr_decay is not None:
        stop = (
            f"; these are budgets: a run stops sooner once the schedule has cut its rate below "
            f"`lr_min` = {ex.P.lr_min:g} (Table 2 gives the updates each run made)"
        )
    own = ""
    short, long = specs["RNNsearch-30"][2], specs["RNNsearch-50"][2]
    if short != long:
        paper = (
            papers.B_TABLE2["RNNsearch-30"]["updates"] / papers.B_TABLE2["RNNsearch-50"]["updates"]
        )
        own = (
            f"; the two lengths have budgets of their own, chosen on dev (`updates_search`, "
            f"`updates_search_long`): RNNsearch-30 made {short / long:.2f} times RNNsearch-50's "
            f"updates, against {paper:.2f} in the paper's Table 2"
        )
    if ex.P.updates_encdec is None:
        return (
            "The runs were given the paper's ratio of updates at equal time: RNNencdec made as "
            "many more updates than RNNsearch of the same length as in B Table 2, where every "
            f"model trained about {paper_hours():.0f} hours ({counts} updates){own}{stop}"
        )
    return f"The runs trained for fixed update counts, not equal time ({counts} updates){own}{stop}"


def budget_numbers(ex: RNNsearchExperiment) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)``: each model's update budget (:func:`run_specs`), the
    ratio of RNNsearch-30's to RNNsearch-50's and the paper's (B Table 2), and the paper's mean
    hours of training (:func:`paper_hours`)."""
    specs = run_specs(ex)
    b2 = papers.B_TABLE2
    short, long = specs["RNNsearch-30"][2], specs["RNNsearch-50"][2]
    paper = b2["RNNsearch-30"]["updates"] / b2["RNNsearch-50"]["updates"]
    return {
        **{f"rns-budget-{glue_key(n)}": (u, None) for n, (_, _, u) in specs.items()},
        "rns-budget-ratio": (short / long, 2),
        "rns-paper-budget-ratio": (paper, 2),
        "rns-paper-hours": (paper_hours(), 0),
    }


def updates_word(ex: RNNsearchExperiment) -> str:
    """How RNNencdec's update counts were set, in words: the paper's equal time or fixed counts
    (``updates_encdec``)."""
    if ex.P.updates_encdec is None:
        return "the paper's ratio of updates at equal time"
    return "fixed update counts, not equal time"


def train_model(
    ex: RNNsearchExperiment,
    name: str,
    train: TrainConfig | None = None,
    model_overrides: dict | None = None,
    **kw,
) -> Artifact:
    """One training run (``rnnsearch/run``) of model ``name`` on its length-filtered pairs
    (``model_overrides``: model config fields that differ from the parameters')."""
    arch, max_len, updates = run_specs(ex)[name]
    p, corpus = ex.P, ex.corpus
    train_all = corpus.train
    if p.max_train is not None:
        train_all = train_all.select(np.arange(min(p.max_train, len(train_all))))
    pairs = train_all.select(length_filter(train_all, max_len))
    config = {
        "corpus_max_len": max_len,
        "max_train": p.max_train,
        "max_dev": p.max_dev,
        "batch_format": BATCH_FORMAT,
        "dev_bleu": ex.dev_bleu_config,
    }
    dev_bleu = ex.dev_bleu if ex.dev_bleu_config else None
    train = train or ex.train_config(updates, arch)
    model = ex.model_config(arch, **{"dropout": ex.dropout_of(name), **(model_overrides or {})})
    return train_run(
        ex.cache,
        "rnnsearch/run",
        config,
        model,
        train,
        pairs,
        ex.dev,
        dev_bleu,
        data=corpus.checksum,
        **kw,
    )


def train_star(ex: RNNsearchExperiment, search50: Artifact, seed: int | None = None) -> Artifact:
    """RNNsearch-50⋆: the run ``search50`` of RNNsearch-50 (trained with ``seed``, default the
    chapter's, and ``keep_state``) continued to ``updates_star`` updates in all (at least
    RNNsearch-50's), stopping after
    ``star_patience`` dev evaluations without a lower dev NLL."""
    p = ex.P
    seeded = {} if seed is None else {"seed": seed}
    star = ex.train_config(star_updates(p), patience=p.star_patience, **seeded)
    # with a cool-down, from where RNNsearch-50's began (its updates up to RNNsearch-50's end are
    # then RNNsearch-50 without it: cooldown_evidence)
    branch = "trunk" if "trunk_update" in search50.extra else "end"
    return train_model(ex, "RNNsearch-50", star, parent=search50, branch=branch)


def train_runs(ex: RNNsearchExperiment) -> Runs:
    """The five models of B Table 1 (trained now where the cache lacks them): the four "-30"
    and "-50" models, then RNNsearch-50⋆, RNNsearch-50 continued to ``updates_star`` updates (at
    least RNNsearch-50's)
    with early stopping on dev, then (unless the chosen optimiser is Adadelta) RNNsearch-50
    trained ``adadelta_updates`` updates with the paper's Adadelta, the recipe runs
    (``recipe_runs``), RNNsearch-50 with each candidate dropout of the "-50" models
    (``dropout_runs_long``) and the check of RNNencdec's own rate (``encdec_lr_check``). With
    ``train_workers`` above 1 the missing runs are first trained that many at a time, each on one
    thread (:func:`training_jobs`)."""
    p = ex.P
    jobs = training_jobs(ex)
    build_side_by_side(ex.cache, jobs, p.train_workers, ex.device)
    built = {job.name: job.build() for job in jobs}  # read from the cache (or trained here)
    specs = run_specs(ex)
    runs = {name: built[name] for name in specs}
    runs["RNNsearch-50*"] = built["RNNsearch-50*"]
    recipes = {(p.dropout, p.lr_decay): runs["RNNsearch-30"]}
    for dropout, decay in parse_recipe_runs(p.recipe_runs):
        if (dropout, decay) not in recipes:
            recipes[(dropout, decay)] = built[recipe_job_name(dropout, decay)]
    dropout_long = {ex.dropout_of("RNNsearch-50"): runs["RNNsearch-50"]}
    for dropout in parse_dropouts(p.dropout_runs_long, "dropout_runs_long"):
        if dropout not in dropout_long:
            dropout_long[dropout] = built[dropout_job_name(dropout)]
    study = {chapters_encdec_recipe(ex): runs["RNNencdec-50"]}
    for key in study_recipes(ex):
        study.setdefault(key, built.get(study_job_name(key)))
    logs = {name: run_logs(art) for name, art in runs.items()}
    arch = {name: specs[name.rstrip("*")][0] for name in NAMES}
    return Runs(
        runs,
        logs,
        arch,
        adadelta=built.get("Adadelta"),
        recipes=recipes,
        dropout_long=dropout_long,
        encdec_check=built.get("encdec check"),
        encdec_study=study,
    )


def training_jobs(ex: RNNsearchExperiment) -> list[Job]:
    """Every training run of :func:`train_runs` as a job of
    :func:`rnnlib.experiments.run_pool.build_side_by_side`, the longest chain first: RNNsearch-50
    and RNNsearch-50⋆ (which continues it), RNNencdec-50, then ``dropout-50 <dropout>`` per
    candidate dropout of the "-50" models and ``recipe <dropout>/<lr_decay>`` per recipe run where
    the parameters ask for them, RNNencdec-30 and RNNsearch-30, then ``encdec check``
    (:func:`_encdec_check`) and ``Adadelta`` where asked for."""
    p = ex.P

    def own(name: str) -> Job:
        return Job(name, lambda: train_model(ex, name, keep_state=(name == "RNNsearch-50")))

    search50 = own("RNNsearch-50")
    star = Job("RNNsearch-50*", lambda: train_star(ex, search50.build()), after=(search50.name,))
    # a free worker takes the first job it may: the longer runs first, so that neither worker is
    # left alone with a long one at the end (the cpu profile's build of 2026-11-28 trained the
    # recipe run for 1,110 s, the -30 pair for 1,062 and 1,012 s, the check 742, Adadelta 301)
    jobs = [search50, star, own("RNNencdec-50")]
    for key in study_recipes(ex):  # as long as RNNencdec-50 each
        if key != chapters_encdec_recipe(ex):
            jobs.append(Job(study_job_name(key), lambda key=key: train_study_run(ex, key)))
    for dropout in dict.fromkeys(parse_dropouts(p.dropout_runs_long, "dropout_runs_long")):
        if dropout != ex.dropout_of("RNNsearch-50"):
            jobs.append(
                Job(
                    dropout_job_name(dropout),
                    # its state kept as RNNsearch-50's (not in the key): it is the chapter's
                    # RNNsearch-50 once dropout_long follows the rule, with a trunk for its ⋆
                    lambda dropout=dropout: train_model(
                        ex, "RNNsearch-50", None, {"dropout": dropout}, keep_state=True
                    ),
                )
            )
    seen = {(p.dropout, p.lr_decay)}
    for dropout, decay in parse_recipe_runs(p.recipe_runs):
        if (dropout, decay) not in seen:
            seen.add((dropout, decay))
            other = ex.train_config(p.updates_search, lr_decay=decay)
            jobs.append(
                Job(
                    recipe_job_name(dropout, decay),
                    lambda other=other, dropout=dropout: train_model(
                        ex, "RNNsearch-30", other, {"dropout": dropout}
                    ),
                )
            )
    jobs += [own("RNNencdec-30"), own("RNNsearch-30")]
    if _encdec_check_wanted(ex):
        jobs.append(Job("encdec check", lambda: _encdec_check(ex)))
    if p.adadelta_updates and p.optimizer != "adadelta":
        ada = ex.train_config(
            p.adadelta_updates,
            optimizer="adadelta",
            lr=1.0,
            lr_decay=None,
            lr_cooldown=None,  # the paper's Adadelta, no schedule
            lr_cooldown_end=None,
        )
        jobs.append(Job("Adadelta", lambda: train_model(ex, "RNNsearch-50", ada)))
    return jobs


def recipe_job_name(dropout: float, decay: float | None) -> str:
    """The job name of the recipe run ``(dropout, lr_decay)`` (:func:`training_jobs`)."""
    return f"recipe {dropout!r}/{decay!r}"


def dropout_job_name(dropout: float) -> str:
    """The job name of the run of RNNsearch-50 with the candidate ``dropout``
    (:func:`training_jobs`)."""
    return f"dropout-50 {dropout!r}"


def chapters_encdec_recipe(ex: RNNsearchExperiment) -> tuple[float, float, float | None, int]:
    """The chapter's RNNencdec-50 as a recipe of the study: ``(dropout, lr, lr_decay, seed)``."""
    return (
        ex.dropout_of("RNNencdec-50"),
        ex.lr_of("rnnencdec"),
        ex.lr_decay_of("rnnencdec"),
        ex.P.seed,
    )


def paper_encdec_recipe(ex: RNNsearchExperiment) -> tuple[float, float, float | None, int]:
    """The paper's recipe in the study's terms: no dropout, a constant rate, RNNsearch's rate
    ``lr`` (B trains both architectures with the same optimiser), the chapter's seed."""
    return (0.0, ex.P.lr, None, ex.P.seed)


def study_recipes(ex: RNNsearchExperiment) -> list[tuple[float, float, float | None, int]]:
    """The recipes of the RNNencdec study, ``(dropout, lr, lr_decay, seed)`` each, in order and
    once: the paper's (:func:`paper_encdec_recipe`) first, then ``encdec_runs``'s entries
    (:func:`parse_encdec_runs`; an entry without a seed has the chapter's); ``[]`` without a
    study (``encdec_runs`` empty)."""
    entries = parse_encdec_runs(ex.P.encdec_runs)
    if not entries:
        return []
    keys = [paper_encdec_recipe(ex)]
    keys += [(d, lr, decay, ex.P.seed if seed is None else seed) for d, lr, decay, seed in entries]
    return list(dict.fromkeys(keys))


def study_job_name(key: tuple[float, float, float | None, int]) -> str:
    """The job name of the RNNencdec study's run ``(dropout, lr, lr_decay, seed)``."""
    dropout, lr, decay, seed = key
    return f"encdec-50 {dropout!r}/{lr!r}/{decay!r} seed {seed}"


def train_study_run(ex: RNNsearchExperiment, key: tuple[float, float, float | None, int]):
    """RNNencdec-50 with the study's recipe ``key`` (``(dropout, lr, lr_decay, seed)``), as the
    chapter's RNNencdec-50 in every other respect (its pairs, budget, cool-down, evaluations).
    Trained from the start: a continuation may change only the limits and the cool-down
    (:data:`rnnlib.train.RESUMABLE_CHANGES`), not the dropout, rate or schedule."""
    dropout, lr, decay, seed = key
    arch, _, budget = run_specs(ex)["RNNencdec-50"]
    train = ex.train_config(budget, arch, lr=lr, lr_decay=decay, seed=seed)
    return train_model(ex, "RNNencdec-50", train, {"dropout": dropout})


def _encdec_check_wanted(ex: RNNsearchExperiment) -> bool:
    """Whether the check behind ``lr_encdec`` is trained: ``encdec_lr_check`` is on and RNNencdec
    has a rate of its own."""
    return bool(ex.P.encdec_lr_check) and ex.lr_of("rnnencdec") != ex.P.lr


def _encdec_check(ex: RNNsearchExperiment) -> Artifact | None:
    """RNNencdec-30 trained at RNNsearch's rate ``lr``, as the chapter's RNNencdec-30 in every
    other respect (its pairs, seed, minibatches, whole budget, schedule and cool-down): the
    evidence for ``lr_encdec``; ``None`` when :func:`_encdec_check_wanted` says no."""
    if not _encdec_check_wanted(ex):
        return None
    arch, _, budget = run_specs(ex)["RNNencdec-30"]
    return train_model(ex, "RNNencdec-30", ex.train_config(budget, arch, lr=ex.P.lr))


def star_start(runs: Runs) -> tuple[int, float]:
    """Where RNNsearch-50⋆'s own training began, ``(update, training seconds then)``: the end of
    RNNsearch-50, or where RNNsearch-50's cool-down began when RNNsearch-50⋆ branched there."""
    search50, star = runs.runs["RNNsearch-50"], runs.runs["RNNsearch-50*"]
    if star.extra.get("branch") != "trunk":
        return int(search50.extra["updates"]), float(search50.extra["seconds"])
    update = int(search50.extra["trunk_update"])
    log = runs.logs["RNNsearch-50"]["train"]
    return update, float(log.loc[log["update"] == update, "seconds"].iloc[0])


def star_own_seconds(runs: Runs) -> float:
    """RNNsearch-50⋆'s own training seconds (its logs count those it shares with RNNsearch-50)."""
    return float(runs.runs["RNNsearch-50*"].extra["seconds"]) - star_start(runs)[1]


def decay_start_text(ex: RNNsearchExperiment) -> str:
    """``", from update 1,000 on"`` when ``lr_decay_start`` holds the schedule back, else ``""``."""
    start = ex.P.lr_decay_start
    return f", from update {start:,} on" if start else ""


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


def parse_encdec_runs(text: str | None) -> list[tuple[float, float, float | None, int | None]]:
    """The ``encdec_runs`` parameter, ``"dropout/lr/lr_decay[/seed], ..."`` (``lr_decay``
    ``none`` for a constant rate; ``""`` or ``None``: no study) -> ``[(dropout, lr, lr_decay,
    seed or None)]``. A bad entry is an error naming the parameter and the entry."""
    out: list[tuple[float, float, float | None, int | None]] = []
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        parts = [x.strip() for x in entry.split("/")]
        try:
            if len(parts) not in (3, 4):
                raise ValueError
            dropout, lr = float(parts[0]), float(parts[1])
            decay = None if parts[2].lower() == "none" else float(parts[2])
            seed = int(parts[3]) if len(parts) == 4 else None
        except ValueError:
            raise ValueError(
                f"parameter 'encdec_runs': entry {entry!r} is not 'dropout/lr/lr_decay' or "
                "'dropout/lr/lr_decay/seed' (for example '0/0.003/none' or '0/0.003/none/2')"
            ) from None
        if not 0 <= dropout < 1 or not lr > 0 or (decay is not None and not 0 < decay < 1):
            raise ValueError(
                f"parameter 'encdec_runs': entry {entry!r} needs dropout in [0, 1), lr above 0 "
                "and lr_decay in (0, 1) or none"
            )
        out.append((dropout, lr, decay, seed))
    return out
