"""``rnnlib study encdec-50``: the study of RNNencdec-50's recipe, run alone and kept as a record
in ``records/study/`` that a profile reads through the rnnsearch chapter's ``encdec_record``.

The study trains RNNencdec-50 with each recipe of the chapter's ``encdec_runs``
beside the paper's (:func:`rnnlib.experiments.rnnsearch.training.study_recipes`), through the
chapter's own function (:func:`~rnnlib.experiments.rnnsearch.training.train_study_run`: the
same cache kind and keys as the chapter under the same profile, so a chapter run of the
``encdec-study`` profile and this command share every run), ``train_workers`` side by side.
It then writes what the chapter's rule reads (:func:`rnnlib.experiments.rnnsearch.choices.
study_record`): each recipe's dev NLL per token of its delivered parameters for each draw, and
the spread of two draws of one recipe; with each run's cache key and training seconds beside
them. A study is too long for every build (four RNNencdec-50 runs, about 4.5 core-hours in
float32 on a 2-core machine): the record is made once and cited.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .. import machine
from ..book.params import ParameterError
from ..cache import ArtifactCache, default_cache_root
from .spread_command import add_record_arguments, book_and_commit

#: where the study records go, from the book's root
FOLDER = Path("records") / "study"
STUDIES = ("encdec-50",)


def add_arguments(parser) -> None:
    parser.description = (
        "Train the study of RNNencdec-50's recipe (the rnnsearch chapter's encdec_runs under the "
        "profile, beside the paper's recipe) and write it as a record "
        "(records/study/<study>-<profile>-<time>.json) that the chapter reads through "
        "encdec_record: each recipe's dev NLL per token for each draw, the spread of two draws "
        "of one recipe, each run's cache key and time, the commit and the machine."
    )
    parser.add_argument("study", choices=STUDIES, help="encdec-50: RNNencdec-50's recipe")
    parser.add_argument(
        "--profile",
        default="encdec-study",
        help="the profile whose encdec_runs name the candidates (default encdec-study)",
    )
    add_record_arguments(parser, "records/study")


def check_study(P) -> None:
    """A :class:`~rnnlib.book.params.ParameterError` naming ``encdec_runs`` when the chapter's
    parameters ``P`` ask for no study (checked before the corpus is prepared)."""
    from .rnnsearch.training import parse_encdec_runs

    if not parse_encdec_runs(P.encdec_runs):
        raise ParameterError(
            "parameter 'encdec_runs' of chapter rnnsearch is empty under this profile: there is "
            "no study to run (the encdec-study profile names its candidates)"
        )


def study_runs(ex) -> dict:
    """``(dropout, lr, lr_decay, seed) -> RNNencdec-50 run`` of every recipe of the study of
    ``ex`` (an :class:`~rnnlib.experiments.rnnsearch.setting.RNNsearchExperiment`), the runs the
    cache lacks trained first, ``train_workers`` side by side. A profile without ``encdec_runs``
    is a :class:`~rnnlib.book.params.ParameterError` naming the parameter."""
    from .rnnsearch.training import study_job_name, study_recipes, train_study_run
    from .run_pool import Job, build_side_by_side

    check_study(ex.P)
    keys = study_recipes(ex)
    jobs = [Job(study_job_name(k), lambda k=k: train_study_run(ex, k)) for k in keys]
    build_side_by_side(ex.cache, jobs, ex.P.train_workers, ex.device)
    return {key: train_study_run(ex, key) for key in keys}  # cached now, or trained here


def make_study_record(ex, runs: dict, commit: str, machine_label: str) -> dict:
    """The record of the study ``runs`` (:func:`study_runs`) of ``ex``: what
    :func:`~rnnlib.experiments.rnnsearch.choices.study_record` writes, the spread being the
    largest difference between the draws of one recipe, with each run's cache key, training
    seconds and delivered update under ``"runs"``."""
    from .rnnsearch.choices import study_entry, study_record, study_spread, study_table
    from .rnnsearch.training import chapters_encdec_recipe, paper_encdec_recipe

    draws: dict = {}
    for (dropout, lr, decay, seed), run in runs.items():
        draws.setdefault((dropout, lr, decay), {})[seed] = run
    paper = paper_encdec_recipe(ex)[:3]
    table = study_table(draws, paper, chapters_encdec_recipe(ex)[:3])
    record = study_record(draws, paper, study_spread(table), commit, machine_label)
    record["runs"] = [
        {
            "recipe": study_entry(key[:3]),
            "seed": key[3],
            "key": run.key,
            "seconds": float(run.extra.get("seconds", float("nan"))),
            "delivered update": int(run.extra["best"]["update"]),
        }
        for key, run in runs.items()
    ]
    return record


def write_study_record(folder: Path, study: str, profile: str, record: dict) -> Path:
    """Write ``record`` as ``<folder>/<study>-<profile>-<UTC time>.json``; never over another."""
    when = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    path = Path(folder) / f"{study}-{profile}-{when}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise FileExistsError(f"{path} exists: a record is never overwritten")
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(args) -> int:
    found = book_and_commit("study", args.allow_dirty)
    if found is None:
        return 2
    root, commit = found
    from .rnnsearch import setting
    from .spread_pieces import chapter_params

    start = time.perf_counter()
    cache = ArtifactCache(args.cache or default_cache_root())
    try:
        P = chapter_params(root, "rnnsearch", args.profile, setting.Params)
        check_study(P)
        ex = setting.RNNsearchExperiment.start(P, cache, root)
        runs = study_runs(ex)
    except ParameterError as err:
        print(f"rnnlib study: {err}", file=sys.stderr)
        return 2
    record = make_study_record(ex, runs, commit, machine.label(machine.describe()))
    record["profile"] = args.profile
    record["total_seconds"] = round(time.perf_counter() - start, 1)
    path = write_study_record(args.out or root / FOLDER, args.study, args.profile, record)
    print(f"wrote {path}")
    for entry, values in record["dev_nll"].items():
        print(f"  {entry}: " + ", ".join(f"{v:.3f}" for v in values))
    spread = record["spread"]
    print(f"  spread: {'not measured' if spread is None else f'{spread:.3f}'}")
    return 0
