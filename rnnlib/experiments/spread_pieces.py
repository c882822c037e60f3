"""The rebuild spread in session-sized pieces: one replicate of a chapter's headline numbers,
computed alone (``rnnlib spread``) and kept as a record (:mod:`rnnlib.book.spread_records`).

A piece computes only what its replicate needs, through the chapters' own functions (the same
cache kinds and keys as a chapter or a ``spread`` build would use):

* ``rnnsearch``: paper B's "-50" pair, RNNsearch-50 and RNNencdec-50, trained with one seed, and
  that RNNsearch-50 continued as RNNsearch-50⋆ (:func:`rnnlib.experiments.rnnsearch.seeds.
  seed_run`, :func:`~rnnlib.experiments.rnnsearch.training.train_star`), each decoded on the
  test set (All and No UNK) and scored with BLEU (B Table 1);
* ``rnnsearch-30``: the same for the "-30" pair (RNNencdec-30, RNNsearch-30);
* ``phrase``: paper A's Baseline and +RNN rows on one eflomal alignment, each with its own phrase
  table, network (the scorer) and MERT runs (:func:`rnnlib.experiments.cho2014.systems.
  baseline_row`, :func:`~rnnlib.experiments.cho2014.systems.rnn_row`; A Table 1), with the
  scorer's held-out NLL; then the representations chapter's measures on that scorer (the
  purity of its representations, its gates and the gating ablation: A §2.3, §4.4), with their
  claims' checks, which that chapter judges on every alignment.

Each piece returns its headline numbers (:data:`HEADLINES`: label -> the chapter's glued name or
table cell it replicates) and the wall time of each of its parts.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..book.params import chapter_specs, is_notebook, load_profile, resolve, typed
from ..book.spread_records import HEADLINES, PIECES  # noqa: F401  (re-exported)
from ..book.spread_records import chapter_stamp
from ..cache import ArtifactCache, config_hash

#: the models of each network piece, in training order
MODELS = {
    "rnnsearch": ("RNNsearch-50", "RNNencdec-50"),
    "rnnsearch-30": ("RNNsearch-30", "RNNencdec-30"),
}


def chapter_values(root: Path, chapter: str, profile: str) -> dict[str, Any]:
    """The validated parameters chapter ``chapter`` runs with under ``profile`` (its defaults,
    the profile's, no override), the profile's name among them, by name."""
    folder = Path(root) / "chapters"
    chapter_specs(folder / f"{chapter}.md")  # a missing chapter fails here, naming the path
    chapters = {p.stem: p for p in sorted(folder.glob("*.md")) if is_notebook(p)}
    params = resolve(chapters, load_profile(root, profile), profile, [])[chapter]
    params.update(profile=profile)
    return params


def chapter_hash(chapter: str, values: dict[str, Any]) -> str:
    """The config hash of chapter ``chapter`` run with ``values`` (:func:`chapter_values`), as
    its page shows it (:attr:`rnnlib.book.chapter.Chapter.config_hash`)."""
    params = {k: v for k, v in values.items() if k != "profile"}
    return config_hash({"chapter": chapter, "params": params}, 8)


def chapter_params(root: Path, chapter: str, profile: str, cls: type) -> Any:
    """:func:`chapter_values` as the typed ``cls``."""
    return typed(cls, chapter_values(root, chapter, profile), chapter)


@dataclass
class Timer:
    """The wall seconds of each named part of a piece (``parts``), in order."""

    parts: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.parts[name] = round(self.parts.get(name, 0.0) + time.perf_counter() - start, 1)


@dataclass
class PieceResult:
    """What a piece measured: ``headline`` (label -> value, :data:`HEADLINES`), the wall seconds
    of its ``parts``, the chapter's parameters it ran with (``params``) and, per further
    chapter whose numbers it measured outside the cache, its stamp (``chapters``,
    :func:`rnnlib.book.spread_records.chapter_stamp`)."""

    headline: dict[str, float]
    parts: dict[str, float]
    params: dict[str, Any]
    chapters: dict[str, dict] = field(default_factory=dict)


def network_piece(piece: str, cache: ArtifactCache, root: Path, profile: str, seed: int):
    """Piece ``rnnsearch`` or ``rnnsearch-30`` with the rnnsearch chapter's parameters under
    ``profile``: its corpus prepared (:class:`~rnnlib.experiments.rnnsearch.setting.
    RNNsearchExperiment`), then :func:`network_replicate`. Returns a :class:`PieceResult`."""
    from .rnnsearch import setting

    P = chapter_params(root, "rnnsearch", profile, setting.Params)
    timer = Timer()
    with timer.part("corpus"):
        ex = setting.RNNsearchExperiment.start(P, cache, root)
    headline = network_replicate(ex, piece, seed, timer)
    return PieceResult(headline, timer.parts, dataclasses.asdict(P))


def network_replicate(ex, piece: str, seed: int, timer: Timer | None = None) -> dict[str, float]:
    """The pair of :data:`MODELS` ``[piece]`` trained with ``seed`` (:func:`rnnlib.experiments.
    rnnsearch.seeds.seed_run`; for the "-50" pair that RNNsearch-50 continued as RNNsearch-50⋆,
    :func:`~rnnlib.experiments.rnnsearch.training.train_star`), the runs the cache lacks trained
    first as the chapter trains a further seed (:func:`rnnlib.experiments.rnnsearch.seeds.
    seed_jobs`, ``train_workers`` side by side), each decoded on All and No UNK
    of ``ex`` (an :class:`~rnnlib.experiments.rnnsearch.setting.RNNsearchExperiment`);
    returns the headline by :data:`HEADLINES` label: each model's test BLEU (B Table 1) and the
    dev NLL per token of its delivered parameters (what the recipe choices read,
    :mod:`rnnlib.experiments.rnnsearch.choices`)."""
    from ..bleu import corpus_bleu
    from .rnnsearch import seeds, setting
    from .rnnsearch.choices import best_nll
    from .rnnsearch.training import run_specs, same_best, train_star
    from .rnnsearch.translations import decode
    from .run_pool import build_side_by_side
    from .training_runs import load_model, read_lines

    timer = timer or Timer()
    refs = {"all": ex.test_refs, "no_unk": [r for r, k in zip(ex.test_refs, ex.known) if k]}
    headline: dict[str, float] = {}

    def dev_nll(name: str, art) -> None:
        headline[f"{setting.shown(name)}, dev NLL per token"] = best_nll(art)

    def decoded(name: str, art, arch: str) -> None:
        with timer.part(f"{setting.shown(name)} decoding"):
            model = load_model(art, ex.model_config(arch)).to(ex.device)
            for subset, label in setting.SUBSETS.items():
                lines = read_lines(decode(ex, art, model, subset).file("text.txt"))
                bleu = corpus_bleu(lines, refs[subset]).score
                headline[f"{setting.shown(name)}, {label}"] = float(bleu)

    wanted = MODELS[piece] + (("RNNsearch-50*",) if piece == "rnnsearch" else ())
    jobs = seeds.seed_jobs(ex, [seed], short=piece == "rnnsearch-30")
    jobs = [j for j in jobs if j.name.rpartition(" seed ")[0] in wanted]
    with timer.part("training side by side"):  # as the chapter trains a further seed
        build_side_by_side(ex.cache, jobs, ex.P.train_workers, ex.device)
    specs = run_specs(ex)
    for name in MODELS[piece]:
        with timer.part(f"{name} training"):
            art = seeds.seed_run(ex, name, seed)
        dev_nll(name, art)
        decoded(name, art, specs[name][0])
        if name != "RNNsearch-50":
            continue
        with timer.part("RNNsearch-50⋆ training"):
            seeds.state_kept(art)
            star = train_star(ex, art, seed)
        dev_nll("RNNsearch-50*", star)
        if same_best({"RNNsearch-50": art, "RNNsearch-50*": star}):
            for label in setting.SUBSETS.values():
                headline[f"RNNsearch-50⋆, {label}"] = headline[f"RNNsearch-50, {label}"]
        else:
            decoded("RNNsearch-50*", star, "rnnsearch")
    return headline


def phrase_piece(cache: ArtifactCache, root: Path, profile: str, alignment: int):
    """Piece ``phrase`` with the cho2014 chapter's parameters under ``profile``
    (:func:`phrase_replicate`), then the representations chapter's measures on the same
    alignment's scorer with that chapter's parameters (:func:`representations_replicate`).
    Returns a :class:`PieceResult` with both chapters' headline numbers and the representations
    chapter's stamp."""
    from .cho2014 import setting
    from .representations import setting as rep_setting

    P = chapter_params(root, "cho2014", profile, setting.Params)
    rep_values = chapter_values(root, "representations", profile)
    R = typed(rep_setting.Params, rep_values, "representations")
    timer = Timer()
    headline = phrase_replicate(cache, P, alignment, timer)
    rep, checks = representations_replicate(cache, P, R, alignment, timer)
    stamp = chapter_stamp("representations", chapter_hash("representations", rep_values), checks)
    chapters = {"representations": stamp}
    return PieceResult({**headline, **rep}, timer.parts, dataclasses.asdict(P), chapters)


def phrase_replicate(
    cache: ArtifactCache, P, alignment: int, timer: Timer | None = None
) -> dict[str, float]:
    """The Baseline and +RNN rows on eflomal alignment ``alignment``, built as the cho2014
    chapter builds a further one (:func:`rnnlib.experiments.cho2014.rebuilds.
    alignment_replicates`: the rows claims read, no per-word row, no defaults runs) with its
    parameters ``P``; returns the headline by :data:`HEADLINES` label: the Baseline's and
    +RNN's test BLEU (means over the MERT seeds), their difference (A Table 1), the scorer's
    best held-out NLL per pair (A §3.1) and, where the row is built (``mert_start``
    ``baseline``), the test BLEU of the Baseline tuned on as long as +RNN (what C-A-T1-1 reads
    +RNN against, :mod:`rnnlib.experiments.recorded_claims`)."""
    from .cho2014.rows import TUNED_ON_ROW, bleu_of
    from .cho2014.systems import baseline_row, rnn_row

    timer = timer or Timer()
    with timer.part("alignment, phrase table and Baseline MERT runs"):
        base = baseline_row(cache, P, alignment_run=alignment)
    with timer.part("scorer, scored pairs and +RNN MERT runs"):
        only = dataclasses.replace(P, per_word_row=False, mert_default_seeds=0)
        rnn = rnn_row(cache, base, only)
    b, r = bleu_of(base.runs, "test").mean(), bleu_of(rnn.runs, "test").mean()
    out = {
        "Baseline, test": float(b),
        "+RNN, test": float(r),
        "+RNN − Baseline, test": float(r - b),
        "scorer NLL per pair": float(rnn.scorer.artifact.extra["dev_nll"]),
    }
    if rnn.runs_tuned_on:  # the Baseline tuned on as long as +RNN: C-A-T1-1's comparison
        out[f"{TUNED_ON_ROW}, test"] = float(bleu_of(rnn.runs_tuned_on, "test").mean())
    return out


def representations_replicate(
    cache: ArtifactCache, cho, P, alignment: int, timer: Timer | None = None
) -> tuple[dict[str, float], dict[str, Any]]:
    """The representations chapter's claim-bearing measures on the phrase scorer of alignment
    ``alignment`` (:func:`rnnlib.experiments.representations.rebuilds.rebuild`: the purity
    of the trained representations against their baselines, the gates, and the gating ablation,
    whose tanh network it trains), with the cho2014 chapter's parameters ``cho`` and its own
    ``P``; returns its headline by :data:`HEADLINES` label (its row of the chapter's rebuilds
    table: the scorer's held-out NLL, each column's trained purity and gap to the bag of words,
    tanh − GRU; A §2.3, §4.4) and its claims' checks on that alignment
    (:func:`~rnnlib.experiments.representations.rebuilds.recorded_checks`)."""
    from .cho2014.setting import cho2014_corpus
    from .representations.rebuilds import rebuild, recorded_checks

    timer = timer or Timer()
    with timer.part("representations: tanh network, purity, gates"):
        r = rebuild(cache, cho2014_corpus(cache, cho), cho, P, alignment)
    return {k: float(v) for k, v in r.row.items()}, recorded_checks(r)


def run_piece(piece: str, cache: ArtifactCache, root: Path, profile: str, index: int):
    """Piece ``piece`` (:data:`PIECES`) with seed or alignment ``index``."""
    if piece == "phrase":
        return phrase_piece(cache, root, profile, index)
    return network_piece(piece, cache, root, profile, index)
