"""The phrase-based baseline as the chapters use it, and the baseline chapter's tables and figure.

The baseline chapter (``chapters/baseline.md``) reads its parameters as :class:`Params`, builds
the phrase-based system with :func:`baseline_run` (:func:`baseline_inputs`, then
:func:`rnnlib.smt.system.run`) and shows it beside the "Baseline" row of Cho et al. 2014,
Table 1 and the "Moses" row of Bahdanau et al. 2015, Table 1. The functions return tables,
figures, numbers (``glue name -> value``) and short words; the chapter's Markdown says what they
mean. A chapter that sets its translations beside a network's calls :func:`baseline_system`
with :func:`baseline_params`, which asks the same pipeline with the parameters the profile gives
the baseline chapter. The pipeline's stages are artifacts of the cache, so after the baseline
chapter ran this is a lookup; otherwise it builds the system.

Deviations: none (this module only connects chapter parameters to :mod:`rnnlib.smt.system` and
lays out what it returns; the system's own deviations are in :mod:`rnnlib.smt`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..book import papers
from ..config import config_subset, load_config
from ..smt.decoder import DecoderConfig
from ..smt.system import (
    SMTConfig,
    SMTData,
    MOSES_SEARCH,
    SMTResult,
    build_alignment,
    build_search_check,
    link_agreement,
    run,
    sacrebleu_scores,
)
from ..specials import UNK
from .spread import further_cached, with_mean_sd

#: parameters of the corpus block that change the text of the corpus (not the shortlists)
CORPUS_TEXT_PARAMS = (
    "corpus",
    "corpus_dir",
    "corpus_layout",
    "tokenizer",
    "en_version",
    "fr_version",
    "max_len",
    "lowercase",
)

#: the alignment check's status when the chapter's ``alignment_check`` is off
ALIGNMENT_CHECK_OFF = "Not measured here (`alignment_check` is off)"
#: a check's status when it ran
MEASURED = "Measured here"


@dataclass(frozen=True)
class Params:
    """The baseline chapter's parameters, as its parameters cell declares them (the corpus
    block with paper B's shortlists, then the system's; the chapter reads them with
    ``P = ch.typed(baseline.Params)``)."""

    profile: str = "cpu"
    seed: int = 1
    corpus: str = "bible"
    corpus_dir: str | None = None
    corpus_layout: str = "pair"
    src_lang: str = "en"
    tgt_lang: str = "fr"
    tokenizer: str = "moses"
    en_version: str = "4"
    fr_version: str = "l"
    src_vocab: int = 30000
    tgt_vocab: int = 30000
    max_len: int | None = None
    length_guard: int | None = 1000
    lowercase: bool = False
    max_train: int | None = None
    max_eval: int | None = None
    max_phrase_len: int = 7
    table_limit: int = 20
    lm_order: int = 5
    stack_size: int = 50
    ttable_limit: int = 10
    distortion_limit: int = 6
    tune_nbest: int = 100
    mert_iterations: int = 6
    tune_sentences: int | None = None
    eflomal_rel_iterations: float = 1.0
    alignment_check: bool = True
    search_check: int = 100
    alignment_replicates: int = 1
    cached_spread: bool = True


def _first(items, n):
    return list(items) if n is None else list(items)[:n]


def _tokens(lines):
    return [line.split() for line in lines]


def smt_data(corpus, max_train: int | None, max_eval: int | None) -> SMTData:
    """The corpus as the phrase-based system reads it: tokenized sentences (lists of words), the
    first ``max_train`` training pairs and the first ``max_eval`` dev and test sentences (None:
    all), with every reference stream of dev and test cut to the same sentences."""
    return SMTData(
        train_src=_first(_tokens(corpus.text("train", "src")), max_train),
        train_tgt=_first(_tokens(corpus.text("train", "tgt")), max_train),
        dev_src=_first(_tokens(corpus.text("dev", "src")), max_eval),
        dev_tgt=_first(_tokens(corpus.text("dev", "tgt")), max_eval),
        test_src=_first(_tokens(corpus.text("test", "src")), max_eval),
        dev_refs=[_first(r, max_eval) for r in corpus.references("dev", multi=True)],
        test_refs=[_first(r, max_eval) for r in corpus.references("test", multi=True)],
    )


def smt_config(P: Params) -> SMTConfig:
    """The phrase-based system's settings from the baseline chapter's parameters ``P`` (the
    other fields of :class:`SMTConfig` and :class:`DecoderConfig` keep their defaults)."""
    decoder = DecoderConfig(
        stack_size=P.stack_size,
        ttable_limit=P.ttable_limit,
        distortion_limit=P.distortion_limit,
        max_phrase_len=P.max_phrase_len,
    )
    return SMTConfig(
        table_limit=P.table_limit,
        lm_order=P.lm_order,
        eflomal_rel_iterations=P.eflomal_rel_iterations,
        decoder=decoder,
        tune_nbest=P.tune_nbest,
        mert_iterations=P.mert_iterations,
        tune_sentences=P.tune_sentences,
        seed=P.seed,
    )


def baseline_inputs(corpus, params) -> tuple[SMTData, SMTConfig]:
    """The :class:`SMTData` and :class:`SMTConfig` for a chapter's parameters.

    ``corpus``: a prepared :class:`~rnnlib.corpus.dataset.Corpus`. ``params``: the baseline
    chapter's :class:`Params` (:func:`smt_config`), or the parameters of another chapter that
    builds the same system (a mapping or a typed object), read by name: ``max_train`` and
    ``max_eval`` (the data subsets) and whatever fields of :class:`SMTConfig` and
    :class:`DecoderConfig` it names (the cho2014 chapter also sets ``mert_restarts`` and
    ``eval_nbest``).
    """
    if isinstance(params, Params):
        return smt_data(corpus, params.max_train, params.max_eval), smt_config(params)
    named = params if isinstance(params, Mapping) else dataclasses.asdict(params)
    data = smt_data(corpus, named["max_train"], named["max_eval"])
    decoder = load_config(
        DecoderConfig, config_subset(DecoderConfig, named), "baseline DecoderConfig"
    )
    config = load_config(
        SMTConfig, {**config_subset(SMTConfig, named), "decoder": decoder}, "baseline SMTConfig"
    )
    return data, config


def baseline_params(root: Path, profile: str, corpus_params=None) -> dict[str, Any]:
    """The baseline chapter's parameters under ``profile``: its defaults, the profile and the
    command-line overrides of the ``rnnlib run`` or ``rnnlib build`` this process runs under
    (:func:`rnnlib.book.params.run_overrides`), as the baseline chapter resolves them, so that a
    chapter showing the phrase-based system shows the one the baseline chapter built.

    ``corpus_params``: the calling chapter's corpus parameters (a mapping or a typed object);
    those that change the corpus text (:data:`CORPUS_TEXT_PARAMS`) replace the baseline's, so
    both chapters translate the same sentences. :func:`typed_params` gives them as
    :class:`Params`.
    """
    from ..book.execute import resolve_all
    from ..book.params import run_overrides

    _, resolved = resolve_all(Path(root), profile, run_overrides(), only=["baseline"])
    out = dict(resolved["baseline"])
    if corpus_params is not None:
        given = (
            corpus_params
            if isinstance(corpus_params, Mapping)
            else dataclasses.asdict(corpus_params)
        )
        out.update({name: given[name] for name in CORPUS_TEXT_PARAMS if name in given})
    return out


def typed_params(root: Path, profile: str, corpus_params=None) -> Params:
    """:func:`baseline_params` as the baseline chapter's :class:`Params`."""
    return Params(**baseline_params(root, profile, corpus_params))


@dataclass
class BaselineRun:
    """The phrase-based system of one set of parameters: its inputs and its cache artifacts."""

    data: SMTData
    config: SMTConfig
    result: SMTResult


def baseline_run(corpus, params, cache, alignment_run: int = 1) -> BaselineRun:
    """Every stage of the baseline (alignment, phrase table, language model, MERT, decoding of dev
    and test), built or looked up in ``cache``, with the inputs it was built from
    (:func:`baseline_inputs` of ``params``, the chapter's :class:`Params` or another chapter's
    parameters); translations are detokenized by the corpus' detokenizer.
    ``alignment_run``: the independent eflomal alignment it is built on (1: the book's)."""
    data, config = baseline_inputs(corpus, params)
    result = run(
        data,
        config,
        cache,
        detokenize=lambda words: corpus.detokenize(list(words)),
        log=lambda m: None,
        alignment_run=alignment_run,
    )
    return BaselineRun(data, config, result)


def alignment_replicates(corpus, P: Params, cache, first: BaselineRun) -> list:
    """The whole system built again on eflomal's alignments 2, ..., ``alignment_replicates``
    (cached; the same data, settings and MERT seed): ``[SMTResult]``, ``first``'s result first.
    The spread of their BLEU is the rebuild spread that eflomal's unseeded sampler causes. With
    ``cached_spread``, the further alignments the cache holds follow, none computed
    (:func:`rnnlib.experiments.spread.further_cached`)."""
    n = P.alignment_replicates
    out = [first.result]
    for r in range(2, n + 1):
        out.append(baseline_run(corpus, P, cache, alignment_run=r).result)
    if P.cached_spread:
        out += further_cached(
            cache, lambda r: baseline_run(corpus, P, cache, alignment_run=r).result, n + 1
        )
    return out


def replicates_table(results: list) -> pd.DataFrame:
    """BLEU on dev and test of the system built on each eflomal alignment (index ``alignment``:
    1, 2, ...), with ``mean`` and ``sd`` rows when there are several."""
    rows = [
        {
            "alignment": str(k + 1),
            "dev": r.bleu["dev"]["single"]["bleu"],
            "test": r.bleu["test"]["single"]["bleu"],
            "phrase pairs": r.phrase_table.extra.get("pairs", np.nan),
        }
        for k, r in enumerate(results)
    ]
    table = pd.DataFrame(rows).set_index("alignment")
    return with_mean_sd(table).round({"dev": 2, "test": 2, "phrase pairs": 0})


def spread_numbers(results: list) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)``: the standard deviation of dev and test BLEU over the
    alignments and their number, as siblings ``-spread``/``-spread-n`` of ``smt-dev-bleu`` and
    ``smt-test-bleu`` (read by ``rnnlib compare`` as their noise); empty with one alignment."""
    if len(results) < 2:
        return {}
    out: dict[str, tuple[float, int | None]] = {}
    for split in ("dev", "test"):
        scores = [r.bleu[split]["single"]["bleu"] for r in results]
        out[f"smt-{split}-bleu-spread"] = (float(np.std(scores, ddof=1)), 3)
        out[f"smt-{split}-bleu-spread-n"] = (len(scores), None)
    return out


def replicates_origin(P: Params, n: int) -> str:
    """Where the ``n`` alignments of :func:`alignment_replicates` come from, in words: the
    ``alignment_replicates`` built by this build and the others read from the cache."""
    read = n - P.alignment_replicates
    if not read:
        return "all built by this build"
    return f"{P.alignment_replicates} built by this build, {read} read from the cache"


def baseline_system(corpus, params, cache) -> SMTResult:
    """The baseline built (or looked up in ``cache``) with the baseline chapter's parameters
    ``params`` (:func:`baseline_params` or :func:`typed_params`); its test translations are
    ``result.evaluation.file("test.txt")`` (detokenized, one a line, the first ``max_eval`` test
    sentences)."""
    return baseline_run(corpus, params, cache).result


def search_check(system: BaselineRun, P: Params, cache):
    """The ``smt/search_check`` artifact of the chapter's system
    (:func:`rnnlib.smt.system.build_search_check`: its first ``search_check`` test sentences
    decoded with the chapter's search settings and with Moses'), or None when the parameter is
    0 or the chapter already searches with Moses' settings."""
    n = P.search_check
    dec = system.config.decoder
    if not n or all(getattr(dec, k) == v for k, v in MOSES_SEARCH.items()):
        return None
    return build_search_check(system.data, system.config, cache, system.result, n)


def search_table(check, config: SMTConfig, refs, detokenize) -> pd.DataFrame:
    """One row per search (the chapter's settings, Moses'): its stack and options per span, the
    seconds it took, the mean model score of its 1-best translations and their sacreBLEU against
    ``refs`` (reference streams, cut to the checked sentences). ``check`` None: one row saying
    the check was not computed."""
    if check is None:
        return pd.DataFrame({"search": ["not computed"]}).set_index("search")
    runs = json.loads(check.file("check.json").read_text(encoding="utf-8"))
    settings = {
        "chapter": (config.decoder.stack_size, config.decoder.ttable_limit),
        "reference": (MOSES_SEARCH["stack_size"], MOSES_SEARCH["ttable_limit"]),
    }
    rows = []
    for name, label in (("chapter", "this chapter"), ("reference", "Moses' defaults")):
        run_ = runs[name]
        n = len(run_["words"])
        hyps = [detokenize(list(w)) for w in run_["words"]]
        rows.append(
            {
                "search": label,
                "stack": settings[name][0],
                "options per span": settings[name][1],
                "seconds": run_["seconds"],
                "mean model score": float(np.mean(run_["model_score"])),
                "BLEU": sacrebleu_scores(hyps, [r[:n] for r in refs])["single"]["bleu"],
            }
        )
    return (
        pd.DataFrame(rows)
        .set_index("search")
        .round({"seconds": 1, "mean model score": 3, "BLEU": 2})
    )


def search_numbers(check) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)``: the checked sentences, the share (%) on which the
    chapter's search ends with a lower model score than Moses' (a search error the larger search
    avoids), the share with a higher one (Moses' pruning lost it), and the time ratio; NaN for
    ``check`` None (not computed)."""
    if check is None:
        names = ("sentences", "errors", "better", "time-ratio")
        return {f"smt-search-{name}": (float("nan"), None) for name in names}
    runs = json.loads(check.file("check.json").read_text(encoding="utf-8"))
    ours = np.asarray(runs["chapter"]["model_score"])
    ref = np.asarray(runs["reference"]["model_score"])
    tol = 1e-6 * np.maximum(1.0, np.abs(ref))
    return {
        "smt-search-sentences": (len(ours), None),
        "smt-search-errors": (100 * float(np.mean(ours < ref - tol)), 1),
        "smt-search-better": (100 * float(np.mean(ours > ref + tol)), 1),
        "smt-search-time-ratio": (
            runs["reference"]["seconds"] / max(runs["chapter"]["seconds"], 1e-9),
            1,
        ),
    }


def search_result(numbers: dict) -> str:
    """The search check's numbers (:func:`search_numbers`) in words for the prose (at most 80
    characters), or that nothing was compared."""
    n = {k: v[0] for k, v in numbers.items()}
    if n["smt-search-sentences"] != n["smt-search-sentences"]:  # NaN: not computed
        return "no sentence was decoded twice, so there is nothing to compare"
    return (
        f"{n['smt-search-errors']:.1f}% of {int(n['smt-search-sentences'])} lower (search errors), "
        f"{n['smt-search-better']:.1f}% higher, {n['smt-search-time-ratio']:.1f}x the time"
    )


def search_status(check, n_param: int) -> str:
    """Whether the check of :func:`search_check` ran, in words (``n_param``: the chapter's
    ``search_check``): measured, off, or nothing to compare."""
    if check is not None:
        return MEASURED
    if not n_param:
        return "Not measured here (`search_check` is 0)"
    return "Nothing to measure here (the chapter searches with Moses' settings)"


def translations(result: SMTResult, split: str = "test") -> list[str]:
    """The system's detokenized translations of ``split`` (``"dev"`` or ``"test"``), one string
    per sentence it decoded."""
    return result.evaluation.file(f"{split}.txt").read_text(encoding="utf-8").split("\n")[:-1]


def no_unk_sentences(corpus, n: int) -> np.ndarray:
    """``(n,)`` bool: which of the first ``n`` test sentences have no word outside the networks'
    shortlists, in the source or in the reference (Bahdanau et al. 2015, Table 1, "No UNK")."""
    src, tgt = corpus.test.src, corpus.test.tgt
    return np.array([not (src[i] == UNK).any() and not (tgt[i] == UNK).any() for i in range(n)])


def no_unk_bleu(hyps: list[str], refs, known: np.ndarray) -> dict:
    """sacreBLEU (:func:`rnnlib.smt.system.sacrebleu_scores`) of the translations ``hyps``
    against every reference stream of ``refs``, on the sentences where ``known (len(hyps),)``
    is true."""
    return sacrebleu_scores(
        [h for h, k in zip(hyps, known) if k], [[r for r, k in zip(s, known) if k] for s in refs]
    )


def bleu_table(bleu: dict, no_unk: dict, n_references: int) -> pd.DataFrame:
    """Our BLEU (dev, test, test No UNK, test against all references) beside the "Baseline" of
    Cho et al. 2014, Table 1 and the "Moses" row of Bahdanau et al. 2015, Table 1.

    ``bleu``: :attr:`SMTResult.bleu`; ``no_unk``: :func:`no_unk_bleu`; ``n_references``: the
    test set's reference streams (with one, the all-references column is dropped).
    """
    a, b, nan = papers.A_TABLE1["Baseline"], papers.B_TABLE1["Moses"], np.nan
    test = bleu["test"]
    rows = [
        {
            "system": "phrase-based (this book)",
            "dev": bleu["dev"]["single"]["bleu"],
            "test": test["single"]["bleu"],
            "test, No UNK": no_unk["single"]["bleu"],
            "test, all references": test["multi"]["bleu"] if "multi" in test else nan,
        },
        _paper_row("Baseline, Cho et al. 2014 (Table 1)", a["dev"], a["test"], nan),
        _paper_row("Moses, Bahdanau et al. 2015 (Table 1)", nan, b["all"], b["no_unk"]),
    ]
    table = pd.DataFrame(rows).set_index("system").round(2)
    if n_references == 1:  # one reference (e.g. the user's files): no column for several
        table = table.drop(columns="test, all references")
    return table


def _paper_row(system: str, dev: float, test: float, no_unk: float) -> dict:
    return {
        "system": system,
        "dev": dev,
        "test": test,
        "test, No UNK": no_unk,
        "test, all references": np.nan,
    }


def implementation_text(speed: dict) -> str:
    """Which implementation of the phrase search decoded (``speed.json`` of the ``smt/eval``
    artifact), in words: the compiled one (:mod:`rnnlib.smt.compiled`) or the plain Python
    module; both give the same output, the compiled one faster (BENCHMARKS.md)."""
    kind = speed.get("search")
    if kind == "compiled":
        return "the compiled search (`rnnlib.smt.compiled`)"
    if kind == "python":
        return "the plain Python search (`rnnlib.smt.stack_search`)"
    return "the plain Python search (cached before the compiled one existed)"


def bleu_numbers(P: Params, bleu: dict, no_unk: dict, known: np.ndarray) -> dict[str, Any]:
    """``glue name -> value or (value, digits)``: the networks' shortlists the "No UNK" subset
    is defined by, dev and test BLEU, the No UNK subset's BLEU and size (``known``: its mask
    over the decoded test sentences, :func:`no_unk_sentences`) and the test sentences."""
    return {
        "smt-src-vocab": P.src_vocab,
        "smt-tgt-vocab": P.tgt_vocab,
        "smt-test-bleu": (bleu["test"]["single"]["bleu"], 2),
        "smt-dev-bleu": (bleu["dev"]["single"]["bleu"], 2),
        "smt-no-unk-bleu": (no_unk["single"]["bleu"], 2),
        "smt-no-unk-sentences": int(known.sum()),
        "smt-test-sentences": len(known),
    }


def signature(bleu: dict) -> str:
    """The test BLEU's sacreBLEU signature, as code."""
    return f"`{bleu['test']['single']['signature']}`"


def decoding_numbers(result: SMTResult) -> dict[str, Any]:
    """``glue name -> (value, digits)``: the language model's dev perplexity and the test
    decoding's seconds and sentences per second."""
    speed = result.speed["test"]
    return {
        "smt-lm-perplexity": (result.lm.extra.get("dev_perplexity", float("nan")), 1),
        "smt-test-seconds": (speed["seconds"], 1),
        "smt-test-speed": (speed["sentences_per_s"], 2),
    }


def stages_table(result: SMTResult, config: SMTConfig) -> pd.DataFrame:
    """The system's stages, each with the seconds it took when it was computed (from the
    artifact's sidecar) and what it produced (links, phrase pairs, dev perplexity, MERT
    iterations)."""
    al, pt, lm, tuned = result.alignment, result.phrase_table, result.lm, result.tuned
    ppl = lm.extra.get("dev_perplexity", float("nan"))
    rows = [
        (
            "word alignment (eflomal, both directions, grow-diag-final-and)",
            al,
            f"{al.extra.get('links', 0):,} links",
        ),
        (
            f"phrase extraction (up to {config.decoder.max_phrase_len} words) and scoring",
            pt,
            f"{pt.extra.get('pairs', 0):,} phrase pairs",
        ),
        (
            f"{config.lm_order}-gram language model (modified Kneser-Ney)",
            lm,
            f"dev perplexity {ppl:.1f}",
        ),
        ("MERT on dev", tuned, f"{tuned.extra.get('iterations', 0)} iterations"),
        ("decoding and scoring dev and test", result.evaluation, ""),
    ]
    stages = pd.DataFrame(
        [{"stage": s, "seconds": art.meta["wall_time_s"], "result": r} for s, art, r in rows]
    ).set_index("stage")
    stages["seconds"] = stages["seconds"].round(1)
    return stages


def weights_table(result: SMTResult) -> pd.DataFrame:
    """The log-linear model's weights as MERT tuned them on dev, one row per feature."""
    w = pd.DataFrame({"weight": pd.Series(result.weights)}).round(4)
    w.index.name = "feature"
    return w


def mert_curve(result: SMTResult):
    """A figure: dev BLEU of the 1-best translations (MERT's own BLEU, tokenized) at each MERT
    iteration, from the tuned artifact's history."""
    import json

    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.ticker import MaxNLocator

    from ..book import style

    tuned = json.loads(result.tuned.file("weights.json").read_text())
    history = pd.DataFrame(tuned.get("history", []))
    fig, ax = plt.subplots(figsize=(style.WIDTH * 0.75, style.HEIGHT * 0.85))
    if len(history):
        colour = style.system_colors(["phrase-based"])["phrase-based"]
        sns.lineplot(history, x="iteration", y="dev_bleu", marker="o", color=colour, ax=ax)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("MERT iteration (one dev decoding each)")
    ax.set_ylabel("dev BLEU (tokenized, MERT's own)")
    return fig


def alignment_agreement(data: SMTData, config: SMTConfig, cache, result: SMTResult) -> dict:
    """How far a second, independent eflomal run (``run=2`` of
    :func:`rnnlib.smt.system.build_alignment`) agrees with the system's alignment:
    :func:`rnnlib.smt.system.link_agreement`'s ``{"f1", "identical_pairs", "pairs", ...}``."""
    second = build_alignment(data, config, cache, run=2)
    return link_agreement(result.alignment.file("links.txt"), second.file("links.txt"))


def agreement_numbers(agree: dict | None) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)``: the training pairs :func:`alignment_agreement` compared,
    the links both runs share (%, F1 of the two link sets) and the sentence pairs aligned
    identically (%); NaN when the check was not run (``agree`` None)."""
    if agree is None:
        return {
            name: (float("nan"), None)
            for name in ("smt-align-pairs", "smt-align-f1", "smt-align-identical")
        }
    return {
        "smt-align-pairs": (agree["pairs"], None),
        "smt-align-f1": (100 * agree["f1"], 1),
        "smt-align-identical": (100 * agree["identical_pairs"] / agree["pairs"], 1),
    }


def alignment_check_status(agree: dict | None) -> str:
    """Whether :func:`alignment_agreement` ran, in words."""
    return ALIGNMENT_CHECK_OFF if agree is None else MEASURED
