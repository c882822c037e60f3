"""The whole phrase-based baseline ("Baseline" of paper A, Table 1; "Moses" of paper B, Table 1).

align (eflomal + grow-diag-final-and) -> extract and score phrases -> 5-gram KN LM ->
MERT on dev -> decode dev and test -> sacreBLEU (single and multi-reference).

The system is paper A's log-linear model, Eq. (9): ``log p(f | e) = sum_n w_n f_n(f, e) +
log Z(e)``, the features ``f_n`` being the phrase table's scores, the language model
(:mod:`rnnlib.smt.lm`), the penalties and distortion (:mod:`rnnlib.smt.features`) and any
``extra`` phrase feature (paper A's RNN score), the weights ``w_n`` tuned by MERT on dev.

:func:`run` chains the stages, each a function that builds (or fetches) its artifact:
:func:`build_alignment`, :func:`build_phrases`, :func:`build_lm`, :func:`build_tuned`,
:func:`build_eval`.

Every expensive stage is an artifact of :class:`rnnlib.cache.ArtifactCache`, keyed by its
config, the keys of the artifacts it reads and a checksum of its data:

================== ============================================================
kind               files
================== ============================================================
smt/alignment      ``links.txt`` (one line ``i-j ...`` per training pair)
smt/phrase_table   ``phrase_table.npz`` (:class:`rnnlib.smt.phrases.PhraseTable`)
smt/lm             ``lm.arpa``
smt/tuned          ``weights.json`` (names -> weights, MERT history)
smt/eval           ``dev.txt``, ``test.txt`` (detokenized), ``test.tok.txt``,
                   ``bleu.json`` (scores + sacreBLEU signatures), ``speed.json``; with
                   ``eval_nbest > 1`` also ``dev.nbest.json.gz``, ``test.nbest.json.gz``
                   (:func:`rnnlib.smt.rescore.save_nbest`: the n-best lists whose first
                   candidates are the output, for rescoring)
================== ============================================================

Inputs are plain Python: tokenized sentences (lists of str) for train/dev/test, tokenized
dev references for MERT, and detokenized reference streams for sacreBLEU.

Default settings (``SMTConfig``, ``DecoderConfig``) are chosen for a ~25k-pair corpus on 2
cores: stack 50, 10 options per span, distortion limit 6, 100-best lists, at most 6 dev
decodings for MERT (2 random restarts). Paper-scale settings (Moses: stack 200, ttable-limit
20) are parameters.

Deviations
----------
* The LM is trained on the target side of the bitext only (paper A adds 712M words of news).
* No lexicalised reordering model; see :mod:`rnnlib.smt.decoder`.
* ``tune_sentences`` may restrict MERT to the first N dev sentences (default: all of them).
* eflomal takes no seed (it reads one from ``/dev/urandom``), so two fresh builds align the
  training data slightly differently, and every later stage (phrase table, tuned weights,
  BLEU) differs with it. A build from the same cache reproduces them exactly;
  :func:`build_alignment` with ``run=2`` and :func:`link_agreement` measure the difference.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..cache import ArtifactCache, canonical_json
from ..config import load_config
from .align import align, format_links, parse_links
from .compiled import search_kind
from .decoder import Decoder, DecoderConfig, systems_at_once
from .features import BASE_FEATURES, FIXED_WEIGHTS, UNKNOWN_WORD_PENALTY, FeatureTable
from .lm import NgramLM, train_arpa
from .phrases import PhraseTable, build_phrase_table, source_phrases
from .rescore import save_nbest
from .tune import tune

Sentences = Sequence[Sequence[str]]


@dataclass
class SMTData:
    """The corpora. ``*_src``/``*_tgt``: tokenized sentences. ``dev_tgt`` are MERT's tokenized
    references (one per dev sentence). ``dev_refs``/``test_refs``: detokenized reference
    *streams* (``refs[k][n]`` = reference ``k`` of sentence ``n``) for sacreBLEU."""

    train_src: Sentences
    train_tgt: Sentences
    dev_src: Sentences
    dev_tgt: Sentences
    test_src: Sentences
    dev_refs: Sequence[Sequence[str]]
    test_refs: Sequence[Sequence[str]]

    def __post_init__(self) -> None:
        pairs = [("train_src", "train_tgt"), ("dev_src", "dev_tgt")]
        for a, b in pairs:
            if len(getattr(self, a)) != len(getattr(self, b)):
                raise ValueError(
                    f"SMTData: {a} has {len(getattr(self, a))} sentences, "
                    f"{b} {len(getattr(self, b))}"
                )
        for name, src in (("dev_refs", self.dev_src), ("test_refs", self.test_src)):
            streams = getattr(self, name)
            if not streams:
                raise ValueError(f"SMTData.{name}: at least one reference stream is needed")
            for k, stream in enumerate(streams):
                if len(stream) != len(src):
                    raise ValueError(
                        f"SMTData.{name}[{k}] has {len(stream)} lines for {len(src)} sentences"
                    )

    @functools.cached_property
    def train_checksum(self) -> str:
        """Checksum of the training pairs (computed once; the alignment and phrase table key on
        it)."""
        return checksum(self.train_src, self.train_tgt)


@dataclass
class SMTConfig:
    """Defaults sized for a corpus of about 25 thousand pairs on 2 cores (the time it takes:
    ``BENCHMARKS.md``, section "The phrase-based baseline"; see the module notes).

    The longest phrase is ``decoder.max_phrase_len``: the phrase table extracts phrases up to
    that length and the decoder looks up source spans up to it (one setting, in one place).
    """

    table_limit: int = 20  # targets kept per source phrase in the stored table
    lm_order: int = 5
    eflomal_model: int = 3
    eflomal_rel_iterations: float = 1.0
    eflomal_samplers: int = 2
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    tune_nbest: int = 100
    mert_iterations: int = 6  # dev decodings (MERT runs between them)
    mert_restarts: int = 2
    mert_random_directions: int = 2
    tune_sentences: int | None = None  # first N dev sentences for MERT (None: all)
    eval_nbest: int = 1  # >1: the evaluation also stores dev and test n-best lists of this size
    seed: int = 0
    # MERT's starting weights by feature name (for example a tuned system's weights and a new
    # feature at 0); features not named keep the decoder's defaults. None: the defaults
    start_weights: dict[str, float] | None = None

    def __post_init__(self) -> None:
        if self.eval_nbest < 1:
            raise ValueError(f"SMTConfig.eval_nbest must be >= 1, got {self.eval_nbest}")

    @classmethod
    def from_dict(cls, d: dict) -> "SMTConfig":
        """Build from a mapping; ``decoder`` may be a mapping too
        (:func:`rnnlib.config.load_config`)."""
        return load_config(cls, d)


def checksum(*parts) -> str:
    """sha256 of the canonical JSON of ``parts`` (sentences, references, ...)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(canonical_json([list(x) if not isinstance(x, str) else x for x in p]).encode())
        h.update(b"\x00")
    return h.hexdigest()


def feature_checksum(tables: Sequence[FeatureTable]) -> str:
    h = hashlib.sha256()
    for t in tables:
        h.update(canonical_json({"names": t.names, "default": t.default}).encode())
        for key in sorted(t.table):
            h.update(canonical_json([key, t.table[key]]).encode())
    return h.hexdigest()


def french_detokenizer() -> Callable[[Sequence[str]], str]:
    from sacremoses import MosesDetokenizer

    md = MosesDetokenizer(lang="fr")
    return lambda words: md.detokenize(list(words))


def sacrebleu_scores(hyps: Sequence[str], streams: Sequence[Sequence[str]]) -> dict:
    """sacreBLEU against the first stream and against all streams, each with its signature."""
    from sacrebleu.metrics import BLEU

    out = {}
    for name, refs in (("single", [list(streams[0])]), ("multi", [list(s) for s in streams])):
        bleu = BLEU()
        score = bleu.corpus_score(list(hyps), refs)
        out[name] = {
            "bleu": score.score,
            "text": str(score),
            "signature": str(bleu.get_signature()),
            "references": len(refs),
        }
    return out


def _load_lm(path: Path):
    from .lm import load_kenlm

    return load_kenlm(path)


def decoding_pairs(phrase_table: Path, sentences: Sentences, max_phrase_len: int = 7) -> list:
    """The ``(source words, target words)`` pairs the decoder can use to translate ``sentences``
    -- the pairs an extra feature (paper A's RNN score) must cover: those of the stored table,
    then the pass-through copy ``(w,) -> (w,)`` of every source word the table lacks."""
    table = PhraseTable.load(phrase_table).lookup(sources=source_phrases(sentences, max_phrase_len))
    pairs = [(s, t) for s, opts in table.items() for t, _ in opts]
    copies = sorted({(w,) for s in sentences for w in s} - set(table))
    return pairs + [(c, c) for c in copies]


def system_decoder(
    data: SMTData,
    config: SMTConfig,
    phrase_table,
    lm,
    extra: Sequence[FeatureTable] = (),
    lms: Sequence = (),
) -> Decoder:
    """The decoder :func:`run` tunes and evaluates: the ``smt/phrase_table`` artifact's table
    restricted to the phrases of the dev and test sentences, the ``smt/lm`` artifact's model,
    ``config.decoder``, the ``extra`` phrase features and further language models ``lms``."""
    pt = PhraseTable.load(phrase_table.file("phrase_table.npz"))
    wanted = source_phrases(list(data.dev_src) + list(data.test_src), config.decoder.max_phrase_len)
    return Decoder(
        pt.lookup(sources=wanted),
        _load_lm(lm.file("lm.arpa")),
        config=config.decoder,
        extra=extra,
        lms=lms,
    )


@dataclass
class SMTResult:
    """Artifacts of one run and the figures a chapter reports."""

    alignment: object
    phrase_table: object
    lm: object
    tuned: object
    evaluation: object

    @property
    def bleu(self) -> dict:
        return json.loads(self.evaluation.file("bleu.json").read_text())

    @property
    def weights(self) -> dict:
        return json.loads(self.tuned.file("weights.json").read_text())["weights"]

    @property
    def speed(self) -> dict:
        return json.loads(self.evaluation.file("speed.json").read_text())


def build_alignment(data: SMTData, config: SMTConfig, cache: ArtifactCache, run: int = 1):
    """The ``smt/alignment`` artifact: eflomal both ways + grow-diag-final-and on the training
    pairs.

    eflomal seeds its sampler from ``/dev/urandom`` and takes no seed, so ``run=2, 3, ...`` are
    further independent alignments of the same data under their own cache keys (``run=1`` is
    the one the pipeline uses); :func:`link_agreement` compares two of them.
    """
    a_cfg = {
        "model": config.eflomal_model,
        "rel_iterations": config.eflomal_rel_iterations,
        "n_samplers": config.eflomal_samplers,
        "symmetrisation": "grow-diag-final-and",
    }
    if run != 1:
        a_cfg["run"] = int(run)

    def make_alignment(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        links = align(
            data.train_src,
            data.train_tgt,
            model=config.eflomal_model,
            rel_iterations=config.eflomal_rel_iterations,
            n_samplers=config.eflomal_samplers,
        )
        (out / "links.txt").write_text(
            "".join(format_links(x) + "\n" for x in links), encoding="utf-8"
        )
        return {"seconds": time.perf_counter() - t, "links": sum(len(x) for x in links)}

    return cache.build("smt/alignment", a_cfg, make_alignment, data=data.train_checksum)


def link_agreement(a: Path, b: Path) -> dict:
    """How far two ``links.txt`` files (one line per sentence pair) agree.

    ``{"links_a", "links_b", "common", "f1", "identical_pairs", "pairs"}``: ``f1`` is
    ``2 |A & B| / (|A| + |B|)`` over (pair, i, j) links; ``identical_pairs`` counts the sentence
    pairs whose two link sets are equal.
    """
    la = a.read_text(encoding="utf-8").split("\n")[:-1]
    lb = b.read_text(encoding="utf-8").split("\n")[:-1]
    if len(la) != len(lb):
        raise ValueError(f"link_agreement: {a} has {len(la)} lines, {b} {len(lb)}")
    n_a = n_b = common = same = 0
    for k, (x, y) in enumerate(zip(la, lb)):
        sa, sb = (
            set(parse_links(x, where=f"{a}:{k + 1}")),
            set(parse_links(y, where=f"{b}:{k + 1}")),
        )
        n_a, n_b, common, same = (
            n_a + len(sa),
            n_b + len(sb),
            common + len(sa & sb),
            same + (sa == sb),
        )
    return {
        "links_a": n_a,
        "links_b": n_b,
        "common": common,
        "f1": 2 * common / (n_a + n_b) if n_a + n_b else 1.0,
        "identical_pairs": same,
        "pairs": len(la),
    }


def build_phrases(data: SMTData, config: SMTConfig, cache: ArtifactCache, alignment):
    """The ``smt/phrase_table`` artifact: phrase pairs up to ``config.decoder.max_phrase_len``
    words extracted from the training pairs and the ``alignment`` artifact's links, scored
    (:func:`rnnlib.smt.phrases.build_phrase_table`), ``config.table_limit`` targets kept per
    source phrase."""
    max_phrase_len = config.decoder.max_phrase_len
    p_cfg = {
        "alignment": alignment.key,
        "max_phrase_len": max_phrase_len,
        "table_limit": config.table_limit,
    }

    def make_table(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        path = alignment.file("links.txt")
        lines = path.read_text(encoding="utf-8").split("\n")
        links = [
            parse_links(lines[n], len(s), len(u), where=f"{path}:{n + 1}")
            for n, (s, u) in enumerate(zip(data.train_src, data.train_tgt))
        ]
        pt = build_phrase_table(
            data.train_src, data.train_tgt, links, max_phrase_len, config.table_limit
        )
        pt.save(out / "phrase_table.npz")
        return {
            "seconds": time.perf_counter() - t,
            "pairs": len(pt),
            "source_phrases": int(len(pt.src_offsets) - 1),
        }

    return cache.build("smt/phrase_table", p_cfg, make_table, data=data.train_checksum)


def build_lm(data: SMTData, config: SMTConfig, cache: ArtifactCache):
    """The ``smt/lm`` artifact: the interpolated modified Kneser-Ney model of order
    ``config.lm_order`` on the target side of the training data (:func:`rnnlib.smt.lm.train_arpa`),
    with its n-gram counts, discounts and perplexity on the dev references."""
    l_cfg = {"order": config.lm_order, "smoothing": "interpolated modified Kneser-Ney"}

    def make_lm(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        model = train_arpa(data.train_tgt, out / "lm.arpa", config.lm_order)
        seconds = time.perf_counter() - t
        ppl = NgramLM(out / "lm.arpa").perplexity(data.dev_tgt)
        return {
            "seconds": seconds,
            "ngrams": [len(w) for w in model.words],
            "discounts": model.discounts,
            "dev_perplexity": ppl,
        }

    return cache.build("smt/lm", l_cfg, make_lm, data=checksum(data.train_tgt, data.dev_tgt))


def start_weights(names: Sequence[str], defaults, start: dict[str, float]):
    """``(len(names),)`` float64: ``defaults`` (one weight per feature of ``names``) with the
    weights ``start`` names; a name the decoder does not have is an error naming it."""
    unknown = sorted(set(start) - set(names))
    if unknown:
        raise ValueError(
            f"SMTConfig.start_weights: no feature named {', '.join(map(repr, unknown))} "
            f"(the decoder's features: {', '.join(names)})"
        )
    import numpy as np

    w = np.array(defaults, dtype=np.float64).copy()
    for k, name in enumerate(names):
        if name in start:
            w[k] = float(start[name])
    return w


def tuning_sentences(data: SMTData, config: SMTConfig) -> int:
    """How many dev sentences MERT tunes on: all, or the first ``config.tune_sentences``."""
    if config.tune_sentences is None:
        return len(data.dev_src)
    return min(config.tune_sentences, len(data.dev_src))


def build_tuned(
    data: SMTData,
    config: SMTConfig,
    cache: ArtifactCache,
    phrase_table,
    lm,
    extra: Sequence[FeatureTable],
    decoder: Callable[[], Decoder],
    log: Callable[[str], None] = print,
):
    """The ``smt/tuned`` artifact: the feature weights MERT finds on the first
    :func:`tuning_sentences` dev sentences (:func:`rnnlib.smt.tune.tune`), decoding with
    ``decoder()`` (the system's decoder on ``phrase_table``, ``lm`` and the ``extra`` features)."""
    n_tune = tuning_sentences(data, config)
    t_cfg = {
        "phrase_table": phrase_table.key,
        "lm": lm.key,
        "decoder": dataclasses.asdict(config.decoder),
        "features": list(BASE_FEATURES),
        "fixed": {BASE_FEATURES[f]: v for f, v in FIXED_WEIGHTS.items()},
        "unknown_word_penalty": UNKNOWN_WORD_PENALTY,
        "nbest": config.tune_nbest,
        "iterations": config.mert_iterations,
        "restarts": config.mert_restarts,
        "random_directions": config.mert_random_directions,
        "sentences": n_tune,
        "seed": config.seed,
        "extra": [t.names for t in extra],
        "extra_checksum": feature_checksum(extra) if extra else None,
    }
    if config.start_weights is not None:  # absent otherwise: the keys of earlier runs stay
        t_cfg["start"] = {k: float(v) for k, v in sorted(config.start_weights.items())}

    def make_tuned(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        dec = decoder()
        if config.start_weights is not None:
            dec.set_weights(start_weights(dec.feature_names, dec.weights, config.start_weights))
        res = tune(
            dec,
            data.dev_src[:n_tune],
            [[r] for r in data.dev_tgt[:n_tune]],
            nbest=config.tune_nbest,
            max_iterations=config.mert_iterations,
            seed=config.seed,
            restarts=config.mert_restarts,
            random_directions=config.mert_random_directions,
            log=lambda r: log(
                f"MERT iteration {r['iteration']}: dev BLEU {r['dev_bleu']:.2f}, "
                f"+{r['new_candidates']} candidates, decode {r['decode_s']} s, "
                f"mert {r.get('mert_s', 0)} s"
            ),
        )
        (out / "weights.json").write_text(json.dumps(res.as_dict(), indent=2), encoding="utf-8")
        return {
            "seconds": time.perf_counter() - t,
            "iterations": len(res.history),
            "converged": res.converged,
            "systems_at_once": systems_at_once(),  # >1: tuned side by side with others
        }

    return cache.build("smt/tuned", t_cfg, make_tuned, data=checksum(data.dev_src, data.dev_tgt))


def _decode_split(
    dec: Decoder,
    split: str,
    src: Sentences,
    refs: Sequence[Sequence[str]],
    config: SMTConfig,
    detokenize: Callable[[Sequence[str]], str],
    out: Path,
) -> tuple[dict, dict]:
    """Translate one split with the tuned decoder ``dec``, write ``<split>.txt`` (detokenized),
    ``<split>.tok.txt`` and, with ``config.eval_nbest > 1``, ``<split>.nbest.json.gz``; return
    its sacreBLEU scores against ``refs`` (:func:`sacrebleu_scores`) and its decoding speed."""
    t = time.perf_counter()
    lists = dec.translate_corpus(src, config.eval_nbest)
    hyps = [lst[0].words for lst in lists]
    seconds = time.perf_counter() - t
    if config.eval_nbest > 1:
        save_nbest(lists, out / f"{split}.nbest.json.gz")
    speed = {
        "sentences": len(src),
        "source_words": sum(len(s) for s in src),
        "seconds": seconds,
        "sentences_per_s": len(src) / max(seconds, 1e-9),
        "workers": config.decoder.workers,
        "processes": dec.last_processes,  # fewer than workers when systems shared the cores
        "search": search_kind(dec.search),
    }
    detok = [detokenize(h) for h in hyps]
    (out / f"{split}.txt").write_text("".join(x + "\n" for x in detok), encoding="utf-8")
    (out / f"{split}.tok.txt").write_text(
        "".join(" ".join(h) + "\n" for h in hyps), encoding="utf-8"
    )
    return sacrebleu_scores(detok, refs), speed


def build_eval(
    data: SMTData,
    config: SMTConfig,
    cache: ArtifactCache,
    tuned,
    decoder: Callable[[], Decoder],
    detokenize: Callable[[Sequence[str]], str],
):
    """The ``smt/eval`` artifact: dev and test decoded with the ``tuned`` weights
    (:func:`_decode_split`), ``bleu.json`` (single- and multi-reference sacreBLEU) and
    ``speed.json``."""
    weights = json.loads(tuned.file("weights.json").read_text())["weights"]
    e_cfg = {"tuned": tuned.key, "decoder": dataclasses.asdict(config.decoder)}
    if config.eval_nbest != 1:  # (so the 1-best evaluations keep their keys)
        e_cfg["nbest"] = config.eval_nbest

    def make_eval(out: Path, work: Path) -> dict:
        dec = decoder()
        dec.set_weights([weights[n] for n in dec.feature_names])
        files = {}
        speed = {}
        for split, src, refs in (
            ("dev", data.dev_src, data.dev_refs),
            ("test", data.test_src, data.test_refs),
        ):
            files[split], speed[split] = _decode_split(
                dec, split, src, refs, config, detokenize, out
            )
        (out / "bleu.json").write_text(json.dumps(files, indent=2), encoding="utf-8")
        (out / "speed.json").write_text(json.dumps(speed, indent=2), encoding="utf-8")
        return {
            "test_bleu": files["test"]["single"]["bleu"],
            "dev_bleu": files["dev"]["single"]["bleu"],
            "test_decode_s": speed["test"]["seconds"],
        }

    return cache.build(
        "smt/eval",
        e_cfg,
        make_eval,
        data=checksum(data.dev_src, data.test_src, *data.dev_refs, *data.test_refs),
    )


#: Moses' search settings (``-s 200``, ``ttable-limit 20``): the reference of
#: :func:`build_search_check`
MOSES_SEARCH = {"stack_size": 200, "ttable_limit": 20}


def build_search_check(
    data: SMTData,
    config: SMTConfig,
    cache: ArtifactCache,
    result: "SMTResult",
    sentences: int,
    reference: dict | None = None,
):
    """The ``smt/search_check`` artifact: what the decoder's smaller search costs. The first
    ``sentences`` test sentences are decoded (1-best) with ``result``'s tuned weights twice: with
    ``config.decoder`` and with the ``reference`` settings (default :data:`MOSES_SEARCH`, Moses'
    stack and options per span). ``check.json`` holds, per sentence, both model scores
    ``sum_n w_n h_n`` (A Eq. 9) and both translations (tokenized), and each search's seconds.
    A lower model score under the chapter's settings is a search error the larger search
    avoids."""
    reference = dict(MOSES_SEARCH if reference is None else reference)
    n = min(sentences, len(data.test_src))
    if n < 1:
        raise ValueError(f"build_search_check: sentences must be >= 1, got {sentences}")
    ref_decoder = dataclasses.replace(config.decoder, **reference)
    c_cfg = {
        "tuned": result.tuned.key,
        "phrase_table": result.phrase_table.key,
        "lm": result.lm.key,
        "decoder": dataclasses.asdict(config.decoder),
        "reference": dataclasses.asdict(ref_decoder),
        "sentences": n,
    }

    def make(out: Path, work: Path) -> dict:
        weights = result.weights
        runs = {}
        for name, dcfg in (("chapter", config.decoder), ("reference", ref_decoder)):
            dec = system_decoder(
                data, dataclasses.replace(config, decoder=dcfg), result.phrase_table, result.lm
            )
            dec.set_weights([weights[f] for f in dec.feature_names])
            t = time.perf_counter()
            best = [lst[0] for lst in dec.translate_corpus(data.test_src[:n], 1)]
            runs[name] = {
                "seconds": time.perf_counter() - t,
                "model_score": [float(b.features @ dec.weights) for b in best],
                "words": [list(b.words) for b in best],
            }
        (out / "check.json").write_text(json.dumps(runs), encoding="utf-8")
        return {k: runs[k]["seconds"] for k in runs}

    return cache.build(
        "smt/search_check", c_cfg, make, data=checksum(data.test_src[:n], data.test_refs[0][:n])
    )


def build_stages(
    data: SMTData,
    config: SMTConfig,
    cache: ArtifactCache,
    alignment_run: int = 1,
    log: Callable[[str], None] = print,
):
    """The stages every system of ``data`` and ``config`` shares, whatever its extra features
    and MERT seed: word alignment ``alignment_run``, phrase table and language model."""
    al = build_alignment(data, config, cache, run=alignment_run)
    log(f"alignment: {al.path} ({al.extra.get('seconds', 0):.0f} s)")
    ptab = build_phrases(data, config, cache, al)
    log(f"phrase table: {ptab.extra.get('pairs')} pairs ({ptab.extra.get('seconds', 0):.0f} s)")
    lm_art = build_lm(data, config, cache)
    log(f"LM: dev perplexity {lm_art.extra.get('dev_perplexity', float('nan')):.1f}")
    return al, ptab, lm_art


def run(
    data: SMTData,
    config: SMTConfig | None = None,
    cache: ArtifactCache | None = None,
    extra: Sequence[FeatureTable] = (),
    detokenize: Callable[[Sequence[str]], str] | None = None,
    log: Callable[[str], None] = print,
    alignment_run: int = 1,
) -> SMTResult:
    """Build (or fetch) every stage of the baseline; ``extra`` adds phrase-pair features;
    ``alignment_run``: which independent eflomal alignment it is built on
    (:func:`build_alignment`'s ``run``; every later stage is keyed by it).

    The stages, each an artifact: word alignment (:func:`build_alignment`), phrase table
    (:func:`build_phrases`), language model (:func:`build_lm`), MERT on dev
    (:func:`build_tuned`), decoding and scoring dev and test (:func:`build_eval`). Tuning and
    evaluation share one decoder (:func:`system_decoder`), built only if one of them runs.
    """
    config = config or SMTConfig()
    cache = cache or ArtifactCache()
    detokenize = detokenize or french_detokenizer()

    al, ptab, lm_art = build_stages(data, config, cache, alignment_run, log)

    decoder = functools.cache(lambda: system_decoder(data, config, ptab, lm_art, extra))
    tuned = build_tuned(data, config, cache, ptab, lm_art, extra, decoder, log)
    ev = build_eval(data, config, cache, tuned, decoder, detokenize)
    dev_bleu, test_bleu = (ev.extra.get(k, float("nan")) for k in ("dev_bleu", "test_bleu"))
    log(f"BLEU dev {dev_bleu:.2f} test {test_bleu:.2f}")
    return SMTResult(al, ptab, lm_art, tuned, ev)


__all__ = [
    "SMTConfig",
    "SMTData",
    "MOSES_SEARCH",
    "SMTResult",
    "build_search_check",
    "build_stages",
    "checksum",
    "decoding_pairs",
    "french_detokenizer",
    "run",
    "sacrebleu_scores",
    "system_decoder",
]
