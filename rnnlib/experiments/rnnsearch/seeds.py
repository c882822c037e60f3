"""The rebuild spread: the "-50" pair and RNNsearch-50⋆ trained with further seeds (built, or
read from the cache where a ``spread`` build left them), their translations, the table of their
BLEU per seed, C-B-T1-1's interval over seeds and sentences (Clark et al. 2011), and the rule
that judges every other claim reading a "-50" model on every seed (:func:`across_seeds`)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import stats
from ...bleu import corpus_bleu
from ...book.claims import ClaimCheck
from ...cache import Artifact, NotCached
from ..run_pool import Job, build_side_by_side
from ..spread import MAX_CACHED, across, further_cached, with_mean_sd
from ..training_runs import load_model, read_lines
from .setting import SHOWN, SUBSETS, RNNsearchExperiment, glue_key
from .training import Runs, run_specs, same_best, train_model, train_star
from .translations import Translations, decode

#: the pair of B Table 1's headline difference, trained with further seeds for its rebuild spread
SEED_PAIR = ("RNNsearch-50", "RNNencdec-50")
#: every model of a further seed: the pair, and RNNsearch-50⋆ continuing its RNNsearch-50
SEED_MODELS = SEED_PAIR + ("RNNsearch-50*",)
#: the "-30" pair, trained with a further seed too when ``seed_short`` is set (else each seed's
#: claims read the chapter's one "-30" pair)
SEED_SHORT = ("RNNencdec-30", "RNNsearch-30")
#: the "-30" pair as (RNNsearch, RNNencdec), the order of :data:`SEED_PAIR`'s difference
SHORT_PAIR = SEED_SHORT[::-1]
#: the Table 1 claim whose "-50" comparison (and "-30" one, when every seed has its own "-30"
#: pair) pools the seeds (:func:`seed_tests`), so it is not judged seed by seed
SEED_POOLED = "C-B-T1-1"


@dataclass
class SeedRuns:
    """The "-50" pair and RNNsearch-50⋆ (:data:`SEED_MODELS`) trained with ``seed_runs`` seeds,
    the chapter's own first: ``seeds``, ``hyps[(name, subset)]`` their translations per seed
    (the chapter's translations first), and the runs and translations of the further seeds
    (``artifacts``); ``built``: how many of the seeds the chapter's ``seed_runs`` asked for (the
    rest were read from the cache)."""

    seeds: list[int]
    hyps: dict[tuple[str, str], list[list[str]]]
    artifacts: list[Artifact]
    built: int = 1
    #: per further seed: its run of each model (``name -> artifact``) and its translations
    #: (``(name, subset) -> artifact``)
    further: list[dict] = field(default_factory=list)
    #: per seed: whether its RNNsearch-50⋆ delivered its RNNsearch-50's parameters
    star_same: list[bool] = field(default_factory=list)
    #: per seed: whether it has its own "-30" pair (:data:`SEED_SHORT`; the chapter's seed does)
    short_own: list[bool] = field(default_factory=list)

    @property
    def several(self) -> bool:
        return len(self.seeds) > 1

    @property
    def short_spread(self) -> bool:
        """Several seeds, each with its own "-30" pair (``seed_short``): the "-30" pair's spread
        is measured too."""
        return self.several and len(self.short_own) == len(self.seeds) and all(self.short_own)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The pairs (RNNsearch, RNNencdec) whose spread over the seeds is measured: the "-50"
        pair, and the "-30" pair when every seed has its own (:attr:`short_spread`)."""
        return [SEED_PAIR] + ([SHORT_PAIR] if self.short_spread else [])


def seed_run(ex: RNNsearchExperiment, name: str, seed: int) -> Artifact:
    """Model ``name`` (of :func:`run_specs`) trained with ``seed`` (RNNsearch-50 keeps its
    training state: that seed's RNNsearch-50⋆ continues it)."""
    arch, _, updates = run_specs(ex)[name]
    train = ex.train_config(updates, arch, seed=seed)
    return train_model(ex, name, train, keep_state=name == "RNNsearch-50")


def seed_jobs(ex: RNNsearchExperiment, seeds: Sequence[int], short: bool) -> list[Job]:
    """The training runs of the further ``seeds`` (:func:`train_seeds`) as jobs of
    :func:`rnnlib.experiments.run_pool.build_side_by_side`: per seed its "-50" pair and
    RNNsearch-50⋆, and with ``short`` its "-30" pair, the longest chains first."""
    jobs: list[Job] = []
    for seed in seeds:
        search50 = Job(f"RNNsearch-50 seed {seed}", lambda s=seed: seed_run(ex, "RNNsearch-50", s))
        star = Job(
            f"RNNsearch-50* seed {seed}",
            lambda s=seed, b=search50.build: train_star(ex, b(), s),
            after=(search50.name,),
        )
        jobs += [search50, star]
    for seed in seeds:
        names = [n for n in SEED_PAIR if n != "RNNsearch-50"] + (list(SEED_SHORT) if short else [])
        jobs += [Job(f"{n} seed {seed}", lambda n=n, s=seed: seed_run(ex, n, s)) for n in names]
    return jobs


def train_seeds(ex: RNNsearchExperiment, runs: Runs, tr: Translations) -> SeedRuns:
    """RNNsearch-50 and RNNencdec-50 trained again with seeds ``seed + 1``, ...,
    ``seed + seed_runs - 1`` (the same recipe, data and updates; the seed sets the
    initialisation, the minibatch order and dropout), and that RNNsearch-50 continued as
    RNNsearch-50⋆ (:func:`train_star`), each decoded on All and No UNK as the chapter's models are
    (cached artifacts; a RNNsearch-50⋆ that delivers its RNNsearch-50's parameters shares its
    translations). With ``seed_short``, the "-30" pair too (:data:`SEED_SHORT`); without, a
    seed's "-30" pair is read where the cache holds it, else its claims read the chapter's.
    With ``cached_spread``, the further seeds whose runs
    and translations the cache holds follow, none computed
    (:func:`rnnlib.experiments.spread.further_cached`); ``built`` counts the seeds this call
    may compute (the chapter's own included)."""
    p = ex.P
    specs = run_specs(ex)

    def models(seed: int, names: Sequence[str], texts: dict, arts: dict) -> None:
        for name in names:
            arch = specs[name][0]
            art = seed_run(ex, name, seed)
            model = load_model(art, ex.model_config(arch)).to(ex.device)
            arts[name] = art
            for subset in SUBSETS:
                dec = decode(ex, art, model, subset)
                arts[(name, subset)] = dec
                texts[(name, subset)] = read_lines(dec.file("text.txt"))

    def short_pair(seed: int, build: bool) -> tuple[dict, dict] | None:
        """The seed's "-30" pair: trained (``build``) or looked up, ``None`` where not cached."""
        texts: dict = {}
        arts: dict = {}
        try:
            with contextlib.nullcontext() if build else ex.cache.lookup_only():
                models(seed, SEED_SHORT, texts, arts)
        except NotCached:
            return None
        return texts, arts

    def one_seed(seed: int, build_short: bool = False) -> tuple[int, dict, dict]:
        texts: dict[tuple[str, str], list[str]] = {}
        arts: dict = {}
        models(seed, SEED_PAIR, texts, arts)
        state_kept(arts["RNNsearch-50"])
        star = arts["RNNsearch-50*"] = train_star(ex, arts["RNNsearch-50"], seed)
        same = same_best(arts)
        model = None if same else load_model(star, ex.model_config("rnnsearch")).to(ex.device)
        for subset in SUBSETS:
            dec = arts[("RNNsearch-50", subset)] if same else decode(ex, star, model, subset)
            arts[("RNNsearch-50*", subset)] = dec
            texts[("RNNsearch-50*", subset)] = read_lines(dec.file("text.txt"))
        short = short_pair(seed, build_short)
        if short is not None:
            texts.update(short[0])
            arts.update(short[1])
        return seed, texts, arts

    first, built = p.seed, p.seed_runs
    jobs = seed_jobs(ex, range(first + 1, first + built), p.seed_short)
    build_side_by_side(ex.cache, jobs, p.train_workers, ex.device)
    further = [one_seed(first + k, p.seed_short) for k in range(1, built)]
    if p.cached_spread:
        further += further_cached(ex.cache, one_seed, first + built, first + MAX_CACHED + 1)
    names = SEED_MODELS + SEED_SHORT
    hyps = {(n, s): [tr.of(n, s)] for n in names for s in SUBSETS}
    artifacts: list[Artifact] = []
    for _, texts, arts in further:
        for n in names:  # a seed without its own "-30" pair: the chapter's in its place
            for s in SUBSETS:
                hyps[(n, s)].append(texts.get((n, s), tr.of(n, s)))
        artifacts += list({(a.kind, a.key): a for a in arts.values()}.values())
    seeds = [first] + [seed for seed, _, _ in further]
    same = [tr.star_same] + [same_best(arts) for _, _, arts in further]
    own = [True] + [SEED_SHORT[0] in arts for _, _, arts in further]
    return SeedRuns(seeds, hyps, artifacts, built, [arts for _, _, arts in further], same, own)


def state_kept(run: Artifact) -> None:
    """Raise :class:`NotCached` (a cached further seed is then not read) when a further seed's
    RNNsearch-50 ``run`` kept no training state to continue as RNNsearch-50⋆: a run trained
    before further seeds had a RNNsearch-50⋆ (its key does not say so)."""
    if "state.pt" not in run.meta.get("files", {}):
        err = NotCached(run.kind, run.key)
        err.args = (
            f"{run.kind}/{run.key} (a further seed's RNNsearch-50) kept no training state for "
            f"its RNNsearch-50⋆ to continue: it was trained before seeds had one. Delete "
            f"{run.path} to train it again (the same numbers, with the state)",
        )
        raise err


def seed_translations(tr: Translations, sr: SeedRuns, k: int) -> Translations:
    """``tr`` with the translations (All and No UNK) of :data:`SEED_MODELS` by ``sr``'s
    ``k``-th seed (``k`` >= 1: a further seed), and of its "-30" pair where it has its own (else
    the chapter's stay); the phrase-based system's as they are."""
    hyps, decoded = dict(tr.hyps), dict(tr.decoded)
    for name in SEED_MODELS + (SEED_SHORT if sr.short_own[k] else ()):
        for subset in SUBSETS:
            hyps[(name, subset)] = sr.hyps[(name, subset)][k]
            decoded[(name, subset)] = sr.further[k - 1][(name, subset)]
    return replace(tr, hyps=hyps, decoded=decoded, star_same=sr.star_same[k])


def across_seeds(
    checks: list[ClaimCheck], by_seed: Sequence[tuple[int, list[ClaimCheck]]], first_seed: int
) -> list[ClaimCheck]:
    """Each of ``checks`` (the chapter's seed, ``first_seed``) judged on every seed of
    ``by_seed`` (:func:`rnnlib.experiments.spread.across`): a verdict a seed flips is inside the
    noise; ``checks`` as they are with one seed."""
    out = []
    for c in checks:
        others = [
            (seed, x.check) for seed, cs in by_seed for x in cs if x.claim == c.claim
        ]  # (a claim no seed measured apart stays as it is)
        out.append(replace(c, check=across(c.check, others, "seed", first_seed)))
    return out


def origin_text(sr: SeedRuns) -> str:
    """Where the seeds of ``sr`` come from, in words: how many this build made and how many it
    read from the cache (``cached_spread``)."""
    total, read = len(sr.seeds), len(sr.seeds) - sr.built
    unit = "seed" if total == 1 else "seeds"
    if not read:
        return f"{total} {unit}, built by this build"
    return f"{total} {unit} ({sr.built} built by this build, {read} read from the cache)"


def seed_short_text(sr: SeedRuns) -> str:
    """Which further seeds have their own "-30" pair (Markdown, for the spread's prose)."""
    further = list(zip(sr.seeds[1:], sr.short_own[1:]))
    if not further:
        return "this build has no further seed"
    own = [str(seed) for seed, o in further if o]
    if len(own) == len(further):
        return "here every further seed has its own"
    if not own:
        return f"here every further seed reads the chapter's (seed {sr.seeds[0]})"
    return f"here seed(s) {', '.join(own)} have their own, the others read the chapter's"


def _pair_bleu(
    sr: SeedRuns, k: int, tr: Translations, pair: tuple[str, str], difference: str
) -> dict[str, float]:
    """Seed ``sr.seeds[k]``'s test BLEU of ``pair`` (RNNsearch, RNNencdec) on All and No UNK
    and their difference, as columns ``"<model>, <subset>"`` and ``"<difference>, <subset>"``."""
    a, b = pair
    row = {}
    for subset, label in SUBSETS.items():
        bleu = {n: corpus_bleu(sr.hyps[(n, subset)][k], tr.refs[subset]).score for n in pair}
        row[f"{a}, {label}"], row[f"{b}, {label}"] = bleu[a], bleu[b]
        row[f"{difference}, {label}"] = bleu[a] - bleu[b]
    return row


def seed_spread(sr: SeedRuns, tr: Translations) -> pd.DataFrame:
    """Test BLEU of the "-50" pair per training seed (index ``seed``; rows ``mean`` and ``sd``
    below when there are several): each model on All and No UNK, their difference, and that
    seed's RNNsearch-50⋆; then the "-30" pair and its difference (``"RNNsearch-30 −
    RNNencdec-30"``) in the same form when every seed has its own (:attr:`SeedRuns.pairs`)."""
    rows = []
    first, *others = sr.pairs
    for k, seed in enumerate(sr.seeds):
        row: dict[str, Any] = {"seed": str(seed), **_pair_bleu(sr, k, tr, first, "difference")}
        for subset, label in SUBSETS.items():
            star = sr.hyps[("RNNsearch-50*", subset)][k]
            row[f"{SHOWN['RNNsearch-50*']}, {label}"] = corpus_bleu(star, tr.refs[subset]).score
        for pair in others:
            row.update(_pair_bleu(sr, k, tr, pair, " − ".join(pair)))
        rows.append(row)
    table = pd.DataFrame(rows).set_index("seed")
    return with_mean_sd(table).round(2)


def spread_numbers(sr: SeedRuns, tr: Translations) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)``: the rebuild spread of the "-50" pair's and RNNsearch-50⋆'s
    BLEU on All (the standard deviation over the seeds, and their number), and the "-30"
    pair's when every seed has its own, as siblings ``-spread`` and ``-spread-n`` of Table 1's
    numbers, which ``rnnlib compare`` reads as their noise; empty with one seed."""
    if not sr.several:
        return {}
    out: dict[str, tuple[float, int | None]] = {}
    for name in SEED_MODELS + (SEED_SHORT if sr.short_spread else ()):
        scores = [corpus_bleu(h, tr.refs["all"]).score for h in sr.hyps[(name, "all")]]
        out[f"rns-bleu-{glue_key(name)}-spread"] = (float(np.std(scores, ddof=1)), 3)
        out[f"rns-bleu-{glue_key(name)}-spread-n"] = (len(scores), None)
    return out


def seed_tests(ex: RNNsearchExperiment, sr: SeedRuns, tr: Translations) -> dict:
    """``(a, b, subset) -> result`` of each pair's difference with the training seeds as a
    random factor beside test resampling (:func:`rnnlib.stats.seeds_and_sentences`, Clark et
    al. 2011) on All and No UNK: RNNsearch-50 − RNNencdec-50, and RNNsearch-30 − RNNencdec-30
    when every seed has its own "-30" pair (:attr:`SeedRuns.pairs`; C-B-T1-1's comparisons);
    empty with one seed. The other comparisons stay single-run paired bootstraps."""
    if not sr.several:
        return {}
    out = {}
    for a, b in sr.pairs:
        for subset in SUBSETS:
            res = stats.seeds_and_sentences(
                sr.hyps[(a, subset)],
                sr.hyps[(b, subset)],
                tr.refs[subset],
                n_samples=ex.P.n_boot,
            )
            out[(a, b, subset)] = {**res, "p_value": np.nan, "seeds": len(sr.seeds)}
    return out
