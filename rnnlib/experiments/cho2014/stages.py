"""Where the time goes: each stage's time, the systems tuned side by side, the networks' threads."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ...cache import Artifact
from ...smt.system import (
    SMTResult,
)
from .network import optimiser_text
from .rows import DEFAULTS_ROW, BaselineRow, RNNRow
from .scorer import trained_threads


def side_by_side_text(rows: dict[str, dict[int, SMTResult]]) -> str:
    """Whether the MERT-tuned systems of ``rows`` (name -> seed -> run) were tuned side by side
    (``systems_at_once``), as their records say: then their times in the table are clocks with
    another system beside them. Runs recorded before this was are counted apart."""
    runs = [r for seeds in rows.values() for r in seeds.values()]
    at_once = [r.tuned.extra.get("systems_at_once") for r in runs]
    shared = sum(1 for n in at_once if n is not None and n > 1)
    unknown = sum(1 for n in at_once if n is None)
    if shared == 0 and unknown == 0:
        return f"Each of the {len(runs)} MERT-tuned systems was tuned alone."
    text = (
        f"{shared} of the {len(runs)} MERT-tuned systems were tuned side by side, up to "
        f"{max(n for n in at_once if n is not None) if shared else 1} at a time "
        "(`systems_at_once`), each decoding on its share of the cores: their MERT and "
        "evaluation times are clocks with other systems beside them"
    )
    if unknown:
        text += f"; {unknown} were built before this was recorded"
    return text + "."


def threads_text(networks: dict[str, Artifact]) -> str:
    """On how many torch threads each trained network of ``networks`` (what it is -> its
    artifact) was trained (:func:`trained_threads`); a network's time is a clock with another
    job beside it where it trained on one thread beside the systems."""
    parts = [f"{name} on {trained_threads(art)}" for name, art in networks.items()]
    return (
        "Torch threads of the networks' training: "
        + "; ".join(parts)
        + " (one where it was trained beside the systems, `systems_at_once` above 1, "
        "its time then a clock with another job beside it; `threads` where it was trained alone)."
    )


# -- where the time goes, and the set-up -------------------------------------------------------
def stages_table(
    base: BaselineRow, rnn: RNNRow, cslm, timing, eval_nbest: int, checks: Sequence = ()
) -> pd.DataFrame:
    """Seconds of each stage (index: stage; 1 digit), as the run that computed it measured
    them: the phrase-based system's, the network's training and scoring, the CSLM's training
    (``cslm``: :class:`.cslm.CSLMRows`), the search with and without
    the CSLM (``timing``: :class:`.cslm.SearchTiming`, measured in
    this build), and each row's MERT and evaluation per seed. ``checks``: further networks
    trained to check the chapter's choices (:func:`scorer_variant` runs), each its own row."""
    first, n = base.first_run, len(timing.sentences)
    extra_runs = [
        (f"training the RNN Encoder-Decoder again: {optimiser_text(sc)}", sc.artifact)
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
