"""A Table 1 on its primary held-out set: the dev sentences MERT did not tune on, then the test
sentences, scored against every French reference, with intervals that resample whole Bible
chapters; C-A-T1-1 judged on it, and what each of the three changes does to its interval.

The set was declared before the build: one held-out set, so that no claim picks the half that
suits it, and as large as the data already decoded allows (the held-out dev part and test,
about 700 sentences on ``cpu``). The verses come in runs of a few chapters, so the sentences'
part of the noise resamples chapters (:class:`rnnlib.resampling.BlockResampler` over
:func:`rnnlib.resampling.chapter_blocks` of the verse keys), not verses.

Deviations
----------
- Paper A reports dev and test BLEU against one reference each; the book's claim C-A-T1-1
  reads one held-out set (held-out dev part and test together) against the Bible's three
  French versions (:mod:`rnnlib.multi_reference`). MERT still tunes on the first.
- Its interval resamples Bible chapters (the paper gives none).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import multi_reference, verdicts
from ...bleu import SACREBLEU_SEED
from ...cache import Artifact, ArtifactCache
from ...line_blocks import LINES_PER_BLOCK, line_blocks
from ...resampling import BlockResampler, chapter_blocks
from ...smt.system import SMTResult, checksum
from ...verdicts import BLEU_FLOOR
from .primary_claims import HeldOutGains, heldout_claims
from .intervals import run_stats, sentence_resamples, stats_and_resamples
from .rows import (
    EXTENSION_ROWS,
    TUNED_ON_ROW,
    BaselineRow,
    Replicate,
    pooled_rows,
    row_outputs,
)
from .setting import N_BOOT
from .table_1 import EXTRA_TUNING


@dataclass
class HeldOut:
    """The primary held-out set: dev sentences ``first..n_dev`` (those MERT did not tune on;
    none when ``first == n_dev``) followed by test sentences ``0..n_test``.

    ``dev_streams`` ``(S, n_dev)`` and ``test_streams`` ``(S, n_test)``: the ``S`` reference
    streams of every decoded dev and test sentence; ``dev_keys`` ``(n_dev, 3)`` and
    ``test_keys`` ``(n_test, 3)``: their verse keys (book, chapter, verse)."""

    first: int
    dev_streams: list[list[str]]
    test_streams: list[list[str]]
    dev_keys: np.ndarray
    test_keys: np.ndarray

    def __post_init__(self) -> None:
        if len(self.dev_streams) != len(self.test_streams) or not self.dev_streams:
            raise ValueError("HeldOut: dev and test need the same reference streams, one at least")
        for name, streams, keys in (
            ("dev", self.dev_streams, self.dev_keys),
            ("test", self.test_streams, self.test_keys),
        ):
            if {len(s) for s in streams} != {len(keys)}:
                raise ValueError(
                    f"HeldOut: {name} has {len(keys)} keys but streams of "
                    f"{sorted({len(s) for s in streams})} lines"
                )
        if not 0 <= self.first <= self.n_dev:
            raise ValueError(f"HeldOut: first={self.first} outside the {self.n_dev} dev sentences")

    @property
    def n_dev(self) -> int:
        return len(self.dev_keys)

    @property
    def n_test(self) -> int:
        return len(self.test_keys)

    @property
    def n(self) -> int:
        """Sentences of the set."""
        return self.n_dev - self.first + self.n_test

    @property
    def test_part(self) -> slice:
        """Where the test sentences are in the set."""
        return slice(self.n_dev - self.first, self.n)

    def join(self, dev_lines: Sequence[str], test_lines: Sequence[str]) -> list[str]:
        """One output on the set: ``dev_lines`` (every decoded dev sentence) from
        :attr:`first` on, then ``test_lines``."""
        if len(dev_lines) != self.n_dev or len(test_lines) != self.n_test:
            raise ValueError(
                f"HeldOut.join: {len(dev_lines)} dev and {len(test_lines)} test lines, "
                f"expected {self.n_dev} and {self.n_test}"
            )
        return list(dev_lines[self.first :]) + list(test_lines)

    def streams(self) -> list[list[str]]:
        """``(S, n)``: every reference stream on the set."""
        return [self.join(d, t) for d, t in zip(self.dev_streams, self.test_streams)]

    def keys(self) -> np.ndarray:
        """``(n, 3)``: the verse keys of the set's sentences."""
        return np.concatenate([self.dev_keys[self.first :], self.test_keys]).reshape(-1, 3)

    @property
    def name(self) -> str:
        """The set, in words for a label."""
        return "held-out dev + test" if self.first < self.n_dev else "test"


def primary_set(base: BaselineRow, n_tune: int | None) -> HeldOut:
    """The chapter's primary held-out set: the Baseline's decoded dev and test sentences
    (``base.data``: the corpus's first ``max_eval`` of each, every reference stream), their
    verse keys (the corpus's ``<split>.keys.npy``, cut alike), and the dev sentences from
    ``n_tune`` on (none held out when MERT tuned on all of them)."""
    dev = [list(s) for s in base.data.dev_refs]
    test = [list(s) for s in base.data.test_refs]
    keys = {s: split_keys(base.corpus, s) for s in ("dev", "test")}
    n_dev, n_test = len(dev[0]), len(test[0])
    first = n_dev if n_tune is None or n_tune >= n_dev else n_tune
    return HeldOut(first, dev, test, keys["dev"][:n_dev], keys["test"][:n_test])


#: the number :func:`split_keys` gives each split in the stand-in keys of the user's files
SPLIT_NUMBER = {"dev": 1, "test": 2}


def split_keys(corpus, split: str) -> np.ndarray:
    """``(n, 3)`` keys of a split's pairs that :func:`rnnlib.resampling.chapter_blocks` groups
    into blocks: the Bible's verse keys (book, chapter, verse; ``<split>.keys.npy``), or, for
    the user's own files, which mark no documents, stand-ins (split, block, line): the block of
    :data:`rnnlib.line_blocks.LINES_PER_BLOCK` consecutive lines each pair's file line falls in
    (:func:`rnnlib.line_blocks.line_blocks`), so that the intervals resample those blocks."""
    path = Path(corpus.path) / f"{split}.keys.npy"
    if path.exists():
        return np.load(path)
    lines = np.asarray(corpus.rows(split), dtype=np.int64)  # 1-based line numbers in the file
    number = np.full(len(lines), SPLIT_NUMBER[split], dtype=np.int64)
    return np.stack([number, line_blocks(lines - 1), lines], axis=1)


def blocks_unit(corpus) -> str:
    """What the primary set's last step resamples, in words: "whole chapters" (the Bible) or
    "blocks of N lines" (the user's files, :func:`split_keys`)."""
    if (Path(corpus.path) / "test.keys.npy").exists():
        return "whole chapters"
    return f"blocks of {LINES_PER_BLOCK} lines"


#: the steps from the test set read as Table 1's intervals read it to the primary set as
#: C-A-T1-1 reads it: ``(label, every reference, with the held-out dev part, chapters)``
STEPS = (
    ("test, one reference, sentences resampled", False, False, False),
    ("+ every reference", True, False, False),
    ("+ the held-out dev part", True, True, False),
    ("+ whole chapters resampled", True, True, True),
)


def step_interval(
    held: HeldOut,
    groups_a: list[list[list[str]]],
    groups_b: list[list[list[str]]],
    step: tuple,
    n_boot: int = N_BOOT,
) -> dict:
    """One step of :data:`STEPS` for two rows' outputs on the set (``groups_x[r][i]``: alignment
    ``r``, MERT seed ``i``, :meth:`HeldOut.join`'s lines): :func:`.intervals.stats_and_resamples`
    on the step's sentences and references, resampled from :data:`SACREBLEU_SEED`."""
    streams = held.streams() if step[1] else held.streams()[:1]
    bleu, stats_a = run_stats(groups_a, streams)
    _, stats_b = run_stats(groups_b, streams, bleu)
    return _step(held, bleu, stats_a, stats_b, step, n_boot)


def _step(held: HeldOut, bleu, stats_a, stats_b, step: tuple, n_boot: int) -> dict:
    """:func:`step_interval` from the runs' statistics on the whole set (:func:`run_stats`
    against the step's references), cut to the step's sentences."""
    _, every_ref, with_dev, chapters = step
    part = slice(0, held.n) if with_dev else held.test_part
    blocks = chapter_blocks(held.keys()[part])
    n = len(blocks)
    if chapters:
        resamples = BlockResampler(blocks).draws(n_boot, SACREBLEU_SEED)
    else:
        resamples = sentence_resamples(n, n_boot)

    def cut(stats):
        return [[st[part] for st in g] for g in stats]

    r = stats_and_resamples(bleu, cut(stats_a), cut(stats_b), resamples)
    refs = len(held.dev_streams) if every_ref else 1
    return {**r, "references": refs, "chapters": int(len(np.unique(blocks)))}


#: the control of C-A-T1-1 without the Baseline tuned on: the Baseline against itself
SAME = "the Baseline against itself (two identical systems)"


def claim_pairs(rows: dict) -> tuple[tuple[str, str], tuple[str, str], str]:
    """``(test pair, control pair, what the control is)`` of C-A-T1-1 on the rows present:
    +RNN against the Baseline tuned on, its control the extra tuning alone (the Baseline tuned
    on against the Baseline); without that row, +RNN against the Baseline and the Baseline
    against itself."""
    if TUNED_ON_ROW in rows:
        return ("+RNN", TUNED_ON_ROW), (TUNED_ON_ROW, "Baseline"), EXTRA_TUNING
    return ("+RNN", "Baseline"), ("Baseline", "Baseline"), SAME


@dataclass
class Found:
    """The ``cho2014/table1_heldout`` artifact, read: ``steps``: ``"test"``/``"control"`` ->
    one dict per :data:`STEPS` (:func:`step_interval`); ``bleu``: each row read -> its mean
    BLEU on the set (every reference); ``pairs``: the rows of the test and of the control;
    ``control``: what the control is; ``runs``: MERT seeds a row; ``alignments``; ``n``,
    ``n_dev`` (the held-out dev part), ``chapters``, ``references``; ``artifact``."""

    steps: dict[str, list[dict]]
    bleu: dict[str, float]
    pairs: dict[str, list[str]]
    control: str
    runs: int
    alignments: int
    n: int
    n_dev: int
    chapters: int
    references: int
    artifact: Artifact | None = None
    #: C-A-T1-2 and C-A-T1-4 on the set (:func:`.primary_claims.heldout_claims`; none without
    #: the CSLM rows)
    checks: dict[str, verdicts.Check] = dataclasses.field(default_factory=dict)
    #: what the last step resamples, in words (:func:`blocks_unit`)
    unit: str = "whole chapters"

    @property
    def name(self) -> str:
        """The set, in words for a label."""
        return "held-out dev + test" if self.n_dev else "test"


def _groups(rows, replicates, names) -> dict[str, list[dict[int, SMTResult]]]:
    """name -> alignment -> MERT seed -> run of each row read: every alignment's
    (``replicates``, more than one) when each has every row read, else this build's."""
    pooled = pooled_rows(replicates) if len(replicates) > 1 else {}
    if all(n in pooled for n in names):
        return {n: pooled[n] for n in names}
    return {n: [rows[n]] for n in names}


def _outputs(groups, held: HeldOut) -> dict[str, list[list[list[str]]]]:
    """name -> alignment -> MERT seed -> its output on the set (:meth:`HeldOut.join`)."""
    out = {}
    for name, runs_ in groups.items():
        outs = [row_outputs({name: runs})[name] for runs in runs_]
        out[name] = [[held.join(d, t) for d, t in zip(o["dev"], o["test"])] for o in outs]
    return out


def _other_claims(held: HeldOut, rows, replicates, scored: dict) -> dict[str, dict]:
    """C-A-T1-2 and C-A-T1-4 on the set (:func:`.primary_claims.heldout_claims`) over the
    paper's rows of ``rows`` (and every alignment's of ``replicates``, more than one), as
    dicts; ``scored``: the runs' statistics already computed (``(name, pooled?) -> ...``)."""
    paper = [n for n in rows if n not in EXTENSION_ROWS]
    here = _outputs({n: [rows[n]] for n in paper}, held)
    pooled = None
    if len(replicates) > 1:
        groups = {n: g for n, g in pooled_rows(replicates).items() if n in paper}
        pooled = {n: {"test": o} for n, o in _outputs(groups, held).items()}
    resamples = BlockResampler(chapter_blocks(held.keys())).draws(N_BOOT, SACREBLEU_SEED)
    outputs = {n: {"test": here[n][0]} for n in paper}
    gains = HeldOutGains(outputs, held.streams(), resamples, held.name, pooled, scored)
    return {c: dataclasses.asdict(k) for c, k in heldout_claims(gains).items()}


def table1_heldout(
    cache: ArtifactCache,
    rows: dict[str, dict[int, SMTResult]],
    base: BaselineRow,
    n_tune: int | None,
    replicates: Sequence[Replicate] = (),
) -> Found:
    """C-A-T1-1's difference and its control on the primary held-out set (:func:`primary_set`)
    at every step of :data:`STEPS`, the mean BLEU of each row they read, and the checks of
    C-A-T1-2 and C-A-T1-4 on the set (:func:`_other_claims`): an artifact
    (``cho2014/table1_heldout``, keyed by the evaluations of the paper's rows, over every
    alignment of ``replicates`` where there are several; ``intervals.json``), under a minute
    at ``cpu`` (sacreBLEU's statistics of each run against every reference)."""
    held = primary_set(base, n_tune)
    test, control, what = claim_pairs(rows)
    names = sorted({*test, *control})
    groups = _groups(rows, replicates, names)
    config = {
        "rows": {n: [[r.evaluation.key for r in g.values()] for g in groups[n]] for n in names},
        "pairs": {"test": list(test), "control": list(control)},
        "n_samples": N_BOOT,
        "dev_from": held.first,
        "steps": [list(s) for s in STEPS],
        "claims_rows": {
            n: [r.evaluation.key for r in runs.values()]
            for n, runs in rows.items()
            if n not in EXTENSION_ROWS
        },
        "rules": 1,  # raise when what make computes changes
    }
    if len(replicates) > 1:  # absent otherwise
        config["claims_pooled"] = {
            n: [[r.evaluation.key for r in runs.values()] for runs in groups_]
            for n, groups_ in pooled_rows(replicates).items()
        }

    def make(out: Path, work: Path) -> dict:
        outs, streams = _outputs(groups, held), held.streams()
        scored = {}  # each run's statistics on the whole set, against one and every reference
        for every in (False, True):
            refs = streams if every else streams[:1]
            scorer = multi_reference.scorer_for(refs)
            scored[every] = {n: run_stats(outs[n], refs, scorer) for n in names}

        def step(a: str, b: str, s: tuple) -> dict:
            (bleu, stats_a), (_, stats_b) = scored[s[1]][a], scored[s[1]][b]
            return _step(held, bleu, stats_a, stats_b, s, N_BOOT)

        found = {
            k: [step(a, b, s) for s in STEPS]
            for k, (a, b) in (("test", test), ("control", control))
        }
        bleu = {}
        for n in names:
            scorer, stats = scored[True][n]
            runs = [st.sum(0) for g in stats for st in g]
            bleu[n] = float(multi_reference.score_of(scorer, np.array(runs)).mean())
        saved = {"steps": found, "bleu": bleu, "runs": len(outs["Baseline"][0])}
        saved["alignments"] = len(outs["Baseline"])
        known = {(n, len(groups[n]) > 1): scored[True][n] for n in names}
        saved["checks"] = _other_claims(held, rows, replicates, known)
        (out / "intervals.json").write_text(json.dumps(saved), encoding="utf-8")
        return {"sentences": held.n}

    data = checksum(*held.streams(), held.keys().tolist())
    art = cache.build("cho2014/table1_heldout", config, make, data=data)
    saved = json.loads(art.file("intervals.json").read_text(encoding="utf-8"))
    return Found(
        saved["steps"],
        saved["bleu"],
        {"test": list(test), "control": list(control)},
        what,
        saved["runs"],
        saved["alignments"],
        held.n,
        held.n_dev - held.first,
        saved["steps"]["test"][-1]["chapters"],
        len(held.dev_streams),
        art,
        {c: verdicts.Check.from_dict(d) for c, d in saved["checks"].items()},
        blocks_unit(base.corpus),
    )


def _test(found: Found, key: str) -> tuple[str, float, float, float]:
    """``(label, difference, low, high)`` of the test or control pair at the last step."""
    a, b = found.pairs[key]
    r = found.steps[key][-1]
    return (f"{a} − {b}, {found.name}", r["diff"], r["low"], r["high"])


#: why C-A-T1-1 is not measurable with one MERT run a row on one alignment
ONE_RUN = (
    "one MERT run per row: the optimiser's noise, the larger part of a row's "
    "difference (Clark et al. 2011), has no estimate"
)


def claim_t1_1(found: Found) -> verdicts.Check:
    """C-A-T1-1 on the primary held-out set: +RNN, whose MERT starts from the Baseline's tuned
    weights, against the Baseline tuned on as long from the same weights without the RNN score
    (equal tuning effort), the difference's interval over the MERT seeds and whole Bible
    chapters resampled, every French reference; its control, the extra tuning alone (Baseline
    tuned on against the Baseline), can hold, and then the rule cannot credit the feature;
    floor: :data:`BLEU_FLOOR` on each row's mean BLEU on the set. Paper A (§4.2): "As expected,
    adding features computed by neural networks consistently improves the performance over the
    baseline performance." """
    if found.runs < 2 and found.alignments < 2:
        return verdicts.not_measurable(ONE_RUN)
    where = (
        "this build's word alignment"
        if found.alignments < 2
        else (f"{found.alignments} word alignments pooled")
    )
    note = (
        f"means over {found.runs} MERT runs per row ({where}); 95% interval of Clark et al. "
        f"(2011) with the {found.n} held-out sentences resampled as {found.chapters} whole "
        f"Bible chapters; BLEU against {found.references} references"
    )
    check = verdicts.controlled(
        verdicts.intervals_above([_test(found, "test")], note),
        found.control,
        verdicts.intervals_above([_test(found, "control")]),
    )
    values = [(f"{n}, {found.name}", v) for n, v in found.bleu.items()]
    what = "the mean BLEU of each row read on the held-out set"
    check = verdicts.floored(check, values, BLEU_FLOOR, "BLEU", what)
    if found.alignments > 1:
        pooled = f"pooled over {found.alignments} word alignments"
        check = dataclasses.replace(check, rebuilds=pooled)
    return check


def judged(checks: dict[str, verdicts.Check], found: Found) -> dict[str, verdicts.Check]:
    """Table 1's ``checks`` with C-A-T1-1's replaced by :func:`claim_t1_1` on ``found``, and
    C-A-T1-2's and C-A-T1-4's by theirs on the same set (``found.checks``, where the CSLM rows
    were built); C-A-T1-3's stays, on test."""
    return {**checks, "C-A-T1-1": claim_t1_1(found), **found.checks}


def widths(found: Found) -> pd.DataFrame:
    """C-A-T1-1's difference at every step of :data:`STEPS`: its 95% interval, the interval's
    width, the standard errors of the MERT runs and of the sentences, how many sentences,
    references and chapters (``found.unit``, :func:`blocks_unit`: the user's files resample
    blocks of lines, counted in the same column, named "blocks") it reads, and its control's
    width; rounded to 2 digits."""
    unit = found.unit
    a, b = found.pairs["test"]
    ca, cb = found.pairs["control"]
    column = "chapters" if unit == "whole chapters" else "blocks"
    out = []
    for (label, *_), r, c in zip(STEPS, found.steps["test"], found.steps["control"]):
        out.append(
            {
                "step": label.replace("whole chapters", unit),
                "sentences": r["sentences"],
                "references": r["references"],
                column: r["chapters"],
                f"{a} − {b}": r["diff"],
                "95% interval": f"[{r['low']:.2f}, {r['high']:.2f}]",
                "width": r["high"] - r["low"],
                "se runs": r["se_runs"],
                "se sentences": r["se_sentences"],
                f"{ca} − {cb}, width": c["high"] - c["low"],
            }
        )
    return pd.DataFrame(out).set_index("step").round(2)


def numbers(found: Found) -> dict[str, Any]:
    """For the prose: the set's size (``cho-primary-n``, its held-out dev part, chapters,
    references), C-A-T1-1's difference and its control with their intervals at the last step
    (``cho-primary-rnn…``, ``cho-primary-tuning…``), the interval's width at the first and the
    last step (``cho-width-first``, ``cho-width-last``) and the multi-reference signature."""
    out: dict[str, Any] = {
        "cho-primary-n": found.n,
        "cho-primary-dev-n": found.n_dev,
        "cho-primary-chapters": found.chapters,
        "cho-primary-refs": found.references,
        "cho-primary-unit": found.unit,
    }
    for key, name in (("test", "rnn"), ("control", "tuning")):
        r = found.steps[key][-1]
        out[f"cho-primary-{name}"] = (r["diff"], 2)
        out[f"cho-primary-{name}-low"] = (r["low"], 2)
        out[f"cho-primary-{name}-high"] = (r["high"], 2)
    steps = found.steps["test"]
    out["cho-width-first"] = (steps[0]["high"] - steps[0]["low"], 2)
    out["cho-width-last"] = (steps[-1]["high"] - steps[-1]["low"], 2)
    out["cho-primary-signature"] = f"`{multi_reference.signature(found.references)}`"
    return out


__all__ = [
    "STEPS",
    "blocks_unit",
    "split_keys",
    "Found",
    "HeldOut",
    "claim_pairs",
    "claim_t1_1",
    "judged",
    "numbers",
    "primary_set",
    "step_interval",
    "table1_heldout",
    "widths",
]
