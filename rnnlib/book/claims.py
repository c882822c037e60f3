"""The papers' claims as records of the book: the catalogue of claim IDs, each chapter's
checks written to its claims file, read back, and the ledger of both papers.

Every claim of both papers that the book tests has an ID (``C-A-T1-1`` ... ``C-B-T3-1``; the
list is :data:`CLAIMS`, with a one-line statement of each, paraphrased from the papers). A
chapter that measures a claim records it with :func:`record`::

    record(
        ch, "C-B-T1-1", intervals_above([("RNNsearch-50 − RNNencdec-50, All", 5.1, 4.6, 5.6), ...])
    )

The second argument is a :class:`rnnlib.verdicts.Check`; how it is judged (rules, controls,
floors, the verdict words) is :mod:`rnnlib.verdicts`.

:func:`record` glues the verdict as ``claim-<ID>`` (Markdown, for the chapter's prose) and appends
the check to ``<results>/claims/<chapter>.json`` (beside the build's ``figures/``), naming the
build it comes from (:func:`current_build`: its id, start time and commit, which
:mod:`rnnlib.book.execute` gives the chapter's kernel). The results chapter reads every chapter's
file with :func:`load_checks` and evaluates each rule again with :func:`evaluate` at build time:
edit a number of the evidence and the verdict changes.

Stale records: before a chapter executes, :func:`reconcile` deletes its own file (a rerun that
records fewer claims, or none, leaves nothing of the run before) and the files of chapters the
book no longer has. ``rnnlib run`` of one chapter so keeps the other chapters' records (each
naming its build); ``rnnlib build`` runs every chapter, so each record it leaves is its own.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from ..verdicts import NO_CONTROL_RULES, UNMEASURABLE, Check, Floor, Verdict, evaluate

# ID -> (paper, item, statement). Statements paraphrase the papers (inventory of the claims:
# Reading the papers), but for the book's own observations on a paper's item
# (OWN_OBSERVATIONS below); the checks that operationalise them are in the chapters.
CLAIMS: dict[str, tuple[str, str, str]] = {
    "C-A-T1-1": (
        "A",
        "Table 1",
        "The RNN Encoder–Decoder's phrase score, one more log-linear feature with the weights "
        "retuned, raises BLEU over the baseline on dev and test.",
    ),
    "C-A-T1-2": (
        "A",
        "Table 1",
        "The neural LM (CSLM) together with the RNN score gives the best test BLEU; CSLM+RNN "
        "beats RNN alone on dev and test.",
    ),
    "C-A-T1-3": ("A", "Table 1", "The word penalty does not improve test BLEU."),
    "C-A-T1-4": (
        "A",
        "Table 1",
        "The gains of the neural features are modest (under 2 BLEU); on test, "
        "Baseline < RNN < CSLM+RNN.",
    ),
    "C-A-F3-1": ("A", "Figure 3", "RNN and TM scores of phrase pairs are only weakly correlated."),
    "C-A-F3-2": (
        "A",
        "Figure 3",
        "Many pairs are scored alike by both models, as many radically differently.",
    ),
    "C-A-F3-3": (
        "A",
        "Figure 3",
        "The disagreement comes from training on unique pairs: the RNN score follows the "
        "pair's frequency less than the same network trained on pairs drawn by their counts.",
    ),
    "C-A-T2-1": (
        "A",
        "Table 2",
        "For long source phrases the RNN's best targets are closer to literal translations; "
        "the TM's include garbage, especially for rare sources.",
    ),
    "C-A-T2-2": ("A", "Table 2", "The RNN Encoder–Decoder prefers shorter target phrases."),
    "C-A-T2-3": (
        "A",
        "Table 2",
        "TM and RNN differ more for rare long phrases than for frequent ones.",
    ),
    "C-A-T3-1": (
        "A",
        "Table 3",
        "Samples from the decoder are well-formed phrases; the most frequent sample is "
        "typically a correct translation.",
    ),
    "C-A-T3-2": (
        "A",
        "Table 3",
        "The generated phrases do not overlap completely with the phrase table's targets.",
    ),
    "C-A-F4-1": ("A", "Figures 4, 6", "Semantically similar words cluster in the embedding space."),
    "C-A-F5-1": (
        "A",
        "Figures 5, 7",
        "The phrase code c captures semantics: phrases of the same meaning cluster.",
    ),
    "C-A-F5-2": (
        "A",
        "Figures 5, 7",
        "The phrase code c captures syntax: phrases of the same pattern cluster.",
    ),
    "C-A-GRU-1": (
        "A",
        "§2.3",
        "Gated units are crucial: plain tanh units of the same size give no meaningful results.",
    ),
    "C-A-GRU-2": (
        "A",
        "§2.3",
        "Units with often active reset gates capture short-term dependencies, units with "
        "active update gates long-term ones.",
    ),
    "C-B-T1-1": (
        "B",
        "Table 1",
        "RNNsearch beats RNNencdec trained on the same sentences (-30 and -50), All and No UNK.",
    ),
    "C-B-T1-2": ("B", "Table 1", "RNNsearch-30 beats even RNNencdec-50, on both columns."),
    "C-B-T1-3": ("B", "Table 1", "For each architecture the -50 model beats the -30 model."),
    "C-B-T1-4": ("B", "Table 1", "Every system scores higher on No UNK than on All."),
    "C-B-T1-5": ("B", "Table 1", "Training longer (RNNsearch-50⋆) improves over RNNsearch-50."),
    "C-B-T1-6": (
        "B",
        "Table 1",
        "The phrase-based system beats every network on All; on No UNK the best RNNsearch "
        "comes close: the gap is much smaller there.",
    ),
    "C-B-T2-1": (
        "B",
        "Table 2",
        "At equal training time RNNsearch reaches a lower dev NLL than RNNencdec.",
    ),
    "C-B-T2-2": ("B", "Table 2", "Training longer lowers the dev NLL (RNNsearch-50⋆)."),
    "C-B-T2-3": ("B", "Table 2", "An RNNsearch update costs more time than an RNNencdec update."),
    "C-B-T2-4": (
        "B",
        "Table 2",
        "The learning statistics (updates, epochs, hours, hardware, train and dev NLL) are "
        "recorded for every model.",
    ),
    "C-B-F2-1": ("B", "Figure 2", "RNNencdec's BLEU drops as the sentences get longer."),
    "C-B-F2-2": (
        "B",
        "Figure 2",
        "RNNsearch degrades much less than RNNencdec as the sentences get longer (each "
        "relative to its own BLEU on the shortest sentences).",
    ),
    "C-B-F2-3": ("B", "Figure 2", "RNNsearch-50 shows no deterioration on the longest sentences."),
    "C-B-F2-4": ("B", "Figure 2", "RNNsearch is ahead of RNNencdec at every length."),
    "C-B-F2-5": (
        "B",
        "Figure 2",
        "The book's reading of Fig. 2 in nats: RNNsearch-50's source gain (how much its "
        "prediction of the reference depends on its own source) minus RNNencdec-50's grows "
        "with the source's length.",
    ),
    "C-B-F3-1": ("B", "Figure 3", "The alignments are largely monotonic."),
    "C-B-F3-2": (
        "B",
        "Figure 3",
        "There are local reorderings, such as adjective–noun inversions.",
    ),
    "C-B-F3-3": (
        "B",
        "Figure 3",
        "Soft alignment spreads weight over several source words where needed.",
    ),
    "C-B-F3-4": (
        "B",
        "Figure 3",
        "The step that ends the translation attends most to the source's end (the book's own "
        "observation on Fig. 3; each row being a distribution is the softmax's doing).",
    ),
    "C-B-F3-5": (
        "B",
        "Figure 3",
        "RNNsearch's weights on the reference translations agree with an independent word "
        "aligner (eflomal) better than an aligner that knows only the positions (the book's "
        "own observation on Fig. 3).",
    ),
    "C-B-T3-1": (
        "B",
        "Table 3",
        "On long sentences RNNencdec-50 drifts from the meaning; RNNsearch-50 keeps it.",
    ),
    "C-BOOK-COPY-1": (
        "B",
        "Copy task",
        "The book's check of the mechanism behind B Fig. 2: on the copy task, RNNencdec's "
        "accuracy falls more with the sequence's length than RNNsearch's.",
    ),
}

#: The claims that are no sentence of their paper but the book's own observation on one of its
#: items (ID, paper and item name where the observation is made). They are measured, controlled
#: and recorded like the papers' claims, and counted apart from them: :func:`ledger` marks their
#: rows ``own``, and the results page counts and lists them apart from the papers' verdicts.
OWN_OBSERVATIONS: frozenset[str] = frozenset({"C-B-F3-4", "C-B-F3-5", "C-BOOK-COPY-1"})


def is_own(claim: str) -> bool:
    """Whether ``claim`` is the book's own observation (:data:`OWN_OBSERVATIONS`) rather than a
    claim its paper makes."""
    if claim not in CLAIMS:
        raise ValueError(f"{claim!r} is no claim ID")
    return claim in OWN_OBSERVATIONS


@dataclass
class Recorded:
    """A check as a chapter recorded it (one entry of ``claims/<chapter>.json``)."""

    claim: str
    chapter: str
    profile: str
    config_hash: str
    check: Check
    verdict: Verdict = field(default=None)  # as evaluated when the chapter ran
    build: dict | None = None  # the build that ran the chapter (current_build); None: outside one


# -- recording and loading -------------------------------------------------------------------------
def results_dir(ch) -> Path:
    """Where a chapter's records go: ``$RNNLIB_RESULTS`` or ``results/`` beside its figures
    folder."""
    return Path(os.environ.get("RNNLIB_RESULTS") or Path(ch.figures_dir).parent / "results")


#: the environment variable through which :mod:`rnnlib.book.execute` names the build to a kernel
BUILD_ENV = "RNNLIB_BUILD"


def current_build() -> dict | None:
    """The build running this chapter, ``{"id", "started", "commit"}`` as ``$RNNLIB_BUILD``
    gives it (JSON), or ``None`` outside a build (a notebook run by hand)."""
    raw = os.environ.get(BUILD_ENV)
    if not raw:
        return None
    try:
        build = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"${BUILD_ENV} is not JSON ({err}): {raw!r}") from None
    if not isinstance(build, dict) or not isinstance(build.get("id"), str):
        raise ValueError(f"${BUILD_ENV} must be a JSON object with an 'id', got {raw!r}")
    return build


def build_label(build: dict | None) -> str:
    """A record's build in words: ``build <id> (<commit>)``, or that it ran outside a build."""
    if not build:
        return "outside a build"
    head, plus, dirty = str(build.get("commit") or "unknown commit").partition("+")
    return f"build {build['id']} ({head[:12] if plus or len(head) == 40 else head}{plus}{dirty})"


def reconcile(folder: Path, book: Iterable[str], running: Iterable[str]) -> list[Path]:
    """Delete the claims records under ``folder/claims/`` that a run of the chapters ``running``
    would leave stale: those of ``running`` (each rewrites its own as it records) and those of
    chapters not in ``book`` (the book's chapter stems). Returns the deleted files."""
    keep = set(book) - set(running)
    gone = []
    for path in sorted((Path(folder) / "claims").glob("*.json")):
        if path.stem not in keep:
            path.unlink(missing_ok=True)
            gone.append(path)
    return gone


def markdown(verdict: Verdict) -> str:
    return f"**{verdict.verdict}** ({verdict.reason})"


def _require_control(chapter: str, claim: str, check: Check) -> None:
    if check.control is None and check.rule not in NO_CONTROL_RULES:
        raise ValueError(
            f"chapter {chapter}: claim {claim}'s check has no control (claims.controlled): "
            f"the same rule on a system for which the claim must not hold"
        )


def record(ch, claim: str, check: Check) -> Verdict:
    """Evaluate ``check`` for ``claim``, glue its verdict as ``claim-<claim>`` and append it to the
    chapter's ``claims/<chapter>.json`` (rewritten whole, atomically). Returns the verdict."""
    if claim not in CLAIMS:
        raise ValueError(
            f"chapter {ch.name}: {claim!r} is no claim ID; the IDs are {', '.join(CLAIMS)}"
        )
    _require_control(ch.name, claim, check)
    verdict = evaluate(check)
    ch.text(f"claim-{claim}", markdown(verdict))
    folder = results_dir(ch) / "claims"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{ch.name}.json"
    entries = getattr(ch, "_claims", None)
    if entries is None:  # the first claim of this run of the chapter: start the file afresh
        entries = ch._claims = []
    entries.append(
        {
            "claim": claim,
            "chapter": ch.name,
            "profile": ch.profile,
            "config_hash": ch.config_hash,
            "check": asdict(check),
            "verdict": asdict(verdict),
            "build": current_build(),
        }
    )
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(entries, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return verdict


@dataclass(frozen=True)
class ClaimCheck:
    """One claim's check as an experiment returns it for its chapter to record (:func:`record_all`):
    the verdict's Markdown, after ``before``, is also glued as ``glue`` (``None``: not glued)."""

    claim: str
    check: Check
    glue: str | None = None
    before: str = ""


def record_all(ch, checks: Iterable[ClaimCheck]) -> None:
    """:func:`record` each check in turn, and glue its verdict as the check's ``glue``."""
    for c in checks:
        verdict = markdown(record(ch, c.claim, c.check))
        if c.glue:
            ch.text(c.glue, c.before + verdict)


def load_checks(folder: Path) -> list[Recorded]:
    """Every check recorded under ``folder/claims/`` (one file per chapter), in file order; each
    with the build that recorded it (``None`` for a record older than builds in records)."""
    out = []
    for path in sorted((Path(folder) / "claims").glob("*.json")):
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not a valid claims record ({err})") from None
        for e in entries:
            if e.get("claim") not in CLAIMS:
                raise ValueError(f"{path}: unknown claim ID {e.get('claim')!r}")
            out.append(
                Recorded(
                    e["claim"],
                    e["chapter"],
                    e["profile"],
                    e["config_hash"],
                    Check.from_dict(e["check"]),
                    Verdict(**e["verdict"]) if e.get("verdict") else None,
                    e.get("build"),
                )
            )
    return out


def ledger(folder: Path) -> list[dict]:
    """One row per claim of :data:`CLAIMS`: its verdict evaluated now from the recorded evidence
    (a claim no chapter recorded is not measurable, saying so), the chapter and profile that
    recorded it, its ``build`` (:func:`build_label`) and ``own``, whether it is the book's own
    observation (:data:`OWN_OBSERVATIONS`) rather than its paper's claim. A claim recorded by two
    chapters is an error naming both (a chapter recording a claim twice: its last check counts)."""
    by_claim: dict[str, list[Recorded]] = {}
    for rec in load_checks(folder):
        by_claim.setdefault(rec.claim, []).append(rec)
    for claim, recs in by_claim.items():  # one chapter judges a claim: two would race
        chapters = sorted({r.chapter for r in recs})
        if len(chapters) > 1:
            raise ValueError(
                f"{folder}: claim {claim} is recorded by the chapters {' and '.join(chapters)}; "
                "one chapter judges each claim (which of their verdicts would the ledger show?)"
            )
    rows = []
    for claim, (paper, item, statement) in CLAIMS.items():
        recs = by_claim.get(claim, [])
        if not recs:
            rows.append(
                {
                    "claim": claim,
                    "paper": paper,
                    "own": claim in OWN_OBSERVATIONS,
                    "item": item,
                    "statement": statement,
                    "verdict": UNMEASURABLE,
                    "evidence": "no chapter of this build measures it",
                    "chapter": None,
                    "profile": None,
                    "build": None,
                    "control": "",
                    "control_verdict": None,
                    "floor": "",
                    "rebuilds": "",
                }
            )
            continue
        rec = recs[-1]  # a chapter recording a claim twice: the last check counts
        v = evaluate(rec.check)
        evidence = v.reason + (f" — {rec.check.note}" if rec.check.note else "")
        rows.append(
            {
                "claim": claim,
                "paper": paper,
                "own": claim in OWN_OBSERVATIONS,
                "item": item,
                "statement": statement,
                "verdict": v.verdict,
                "evidence": evidence,
                "chapter": rec.chapter,
                "profile": rec.profile,
                "build": build_label(rec.build),
                "control": _control_text(rec.check, v),
                "control_verdict": v.control,
                "floor": "; ".join(_floor_text(f) for f in rec.check.floors),
                "rebuilds": rec.check.rebuilds,
            }
        )
    return rows


def _control_text(check: Check, v: Verdict) -> str:
    if check.control is None:
        return "none: " + (
            "nothing is judged" if check.rule in NO_CONTROL_RULES else "the check has no control"
        )
    return f"{check.control.what}: **{v.control}** ({v.control_reason})"


def _floor_text(floor: Floor | None) -> str:
    if floor is None:
        return ""
    vals = ", ".join(f"{label} {'—' if v is None else f'{v:.3g}'}" for label, v in floor.values)
    what = f" in {floor.what}" if floor.what else ""
    return f"≥ {floor.floor:g} {floor.unit}{what} ({vals})"
