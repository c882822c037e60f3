"""Where the time goes: each stage's time, the systems tuned side by side, the networks' threads."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from ...cache import Artifact
from ...smt.system import (
    SMTResult,
)
from .network import optimiser_text
from .rows import DEFAULTS_ROW, TUNED_ON_ROW, BaselineRow, RNNRow
from .scorer import trained_threads


def _at_once(rows: dict[str, dict[int, SMTResult]]) -> list[int | None]:
    """Each MERT-tuned system's ``systems_at_once`` as its record says (``None``: recorded
    before it was)."""
    return [r.tuned.extra.get("systems_at_once") for seeds in rows.values() for r in seeds.values()]


#: the prefixes of the chapter's glued numbers that measure time (the live decodings with and
#: without the CSLM inside the search, and what one MERT decoding would cost with it): two builds
#: of one commit may differ in them alone (the stage table's seconds columns go by their names)
TIMED = "cho-search-with, cho-search-without, cho-search-ratio, cho-mert-decode"


def side_by_side_numbers(rows: dict[str, dict[int, SMTResult]]) -> dict[str, Any]:
    """How many of the MERT-tuned systems of ``rows`` (name -> seed -> run) were tuned side by
    side (``systems_at_once``), up to how many at a time, and how many were recorded before
    this was: their times in the table are then clocks with another system beside them; and
    ``cho-timed``, the chapter's numbers that measure time (:data:`TIMED`, read by
    :func:`rnnlib.book.compare.timed_prefixes`)."""
    at_once = _at_once(rows)
    known = [n for n in at_once if n is not None]
    shared = sum(1 for n in known if n > 1)
    return {
        "cho-timed": TIMED,
        "cho-systems-n": len(at_once),
        "cho-systems-shared": shared,
        "cho-systems-at-once": max(known) if shared else 1,
        "cho-systems-unknown": len(at_once) - len(known),
    }


def side_by_side_words(rows: dict[str, dict[int, SMTResult]]) -> str:
    """Whether the MERT-tuned systems were tuned alone, in words for the prose."""
    if all(n is not None and n <= 1 for n in _at_once(rows)):
        return "Each MERT-tuned system was tuned alone"
    return "Not every MERT-tuned system was tuned alone"


def threads_text(networks: dict[str, Artifact]) -> str:
    """On how many torch threads each trained network of ``networks`` (what it is -> its
    artifact) was trained (:func:`trained_threads`), for the prose."""
    return "; ".join(f"{name} on {trained_threads(art)}" for name, art in networks.items())


# -- where the time goes, and the set-up -------------------------------------------------------
def stages_table(
    base: BaselineRow,
    rnn: RNNRow,
    cslm,
    timing,
    eval_nbest: int,
    checks: Sequence = (),
    more: Sequence = (),
) -> pd.DataFrame:
    """Seconds of each stage (index: stage; 1 digit), as the run that computed it measured
    them: the phrase-based system's, the network's training and scoring, the CSLM's training
    (``cslm``: :class:`.cslm.CSLMRows`), the search with and without
    the CSLM (``timing``: :class:`.cslm.SearchTiming`, measured in
    this build), and each row's MERT and evaluation per seed. ``checks``: further networks
    the chapter trains (the count-drawn network of :mod:`.counts`), each its own row;
    ``more``: further ``(stage, artifact)`` rows (an artifact ``None``: not built, left out)."""
    first, n = base.first_run, len(timing.sentences)
    extra_runs = [
        (
            f"training the RNN Encoder-Decoder again, pairs drawn by count: {optimiser_text(sc)}",
            sc.artifact,
        )
        for sc in checks
    ]
    rows = [
        ("word alignment (shared with the baseline chapter when cached)", first.alignment),
        ("phrase table (every extracted pair)", first.phrase_table),
        ("language model", first.lm),
        ("training the RNN Encoder-Decoder", rnn.scorer.artifact),
        *extra_runs,
        ("scoring every usable pair", rnn.feature),
        ("training the CSLM", cslm.artifact),
        *([("the Kneser-Ney model on the CSLM's shortlist", cslm.kn)] if cslm.kn else []),
        *[(stage, art) for stage, art in more if art is not None],
    ]
    rows = [(stage, art.meta["wall_time_s"]) for stage, art in rows]
    rows += [
        (
            f"CSLM inside the search: {n} dev sentence{'s' * (n != 1)} (this build)",
            timing.with_cslm,
        ),
        ("the same without the CSLM (this build)", timing.without_cslm),
    ]
    own = [
        ("Baseline", base.runs),
        (TUNED_ON_ROW, getattr(rnn, "runs_tuned_on", {})),
        ("+RNN", rnn.runs),
        ("+RNN per word", rnn.runs_per_word),
        (DEFAULTS_ROW, rnn.runs_defaults),
    ]
    for name, runs in own:
        for s, r in runs.items():
            rows.append((f"{name}: MERT, seed {s}", r.tuned.meta["wall_time_s"]))
            rows.append(
                (
                    f"{name}: decoding dev and test ({eval_nbest}-best), seed {s}",
                    r.evaluation.meta["wall_time_s"],
                )
            )
    for name, runs in cslm.runs.items():
        for s, r in runs.items():
            rows.append((f"{name}: MERT on rescored lists, seed {s}", r.tuned.meta["wall_time_s"]))
            rows.append(
                (f"{name}: rescoring dev and test, seed {s}", r.evaluation.meta["wall_time_s"])
            )
    frame = pd.DataFrame([{"stage": stage, "seconds": sec} for stage, sec in rows])
    return frame.set_index("stage").round(1)
