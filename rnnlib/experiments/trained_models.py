"""The book's trained translation models by the names the book gives them, out of the artifact
cache: what ``rnnlib translate --model NAME`` and ``rnnlib export NAME`` read.

A name means the model of the last build's results: the ``rnnsearch`` chapter's record
(``<out>/results/rnnsearch.json``, :mod:`rnnlib.book.results`) cites the five training runs of
B Table 1 (``rnnsearch/run`` entries of the cache) under its table ``rns-table1`` (or
``rns-table2`` when the chapter stopped before Table 1), and its parameters (``len_short``,
``len_long``, ``beam_size``, ``min_len``, ``decode_batch``). Each cited run is named from its
own config: its architecture, its length filter (``corpus_max_len``: ``len_short`` is "-30",
``len_long`` "-50"), and "⋆" for the continuation of RNNsearch-50 (a run with a parent). Names
are matched without case, ``*``, ``⋆`` and ``star`` alike, ``RNNenc-50`` (B Table 2's spelling)
as ``RNNencdec-50``; a cache key (or a prefix of one, at least 6 characters) names any run of
the cache. A name that matches no model or several is a :class:`ModelNotFound` that lists the
candidates.

The model's vocabularies and tokenizer settings come from the ``corpus/prepared`` entry the run
was trained on: the one whose files' checksum is the run's data checksum
(:func:`rnnlib.cache.content_checksum`; the run keys on ``corpus.checksum``).

Nothing here builds or changes a cache entry: every read is a lookup.

Deviations: none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path

import torch

from ..book import results as book_results
from ..cache import _KEY, Artifact, _inspect, content_checksum, default_cache_root, find_book_root
from ..checkpoint import load_checkpoint
from ..config import ModelConfig
from ..corpus.vocab import Vocab
from ..model_folder import SearchSettings, TokenizerSettings, TrainedModel
from .rnnsearch.setting import NAMES, Params

CHAPTER = "rnnsearch"
RUN_KIND = "rnnsearch/run"
#: the chapter's tables that cite the five runs, the first found is read
TABLES = ("rns-table1", "rns-table2")
CORPUS_KIND = "corpus/prepared"
_HEX = re.compile(r"[0-9a-f]{6,16}")


class ModelNotFound(LookupError):
    """No model, or more than one, answers to a name: ``message`` (one line) and
    ``candidates`` (one line each)."""

    def __init__(self, message: str, candidates: list[str] | None = None):
        super().__init__(message)
        self.message, self.candidates = message, list(candidates or [])

    def __str__(self) -> str:
        return "\n".join([self.message, *(f"  {c}" for c in self.candidates)])


@dataclass
class Candidate:
    """A trained model a name may mean: its ``name`` (the book's, or described from its config),
    its training ``run`` and where it was found (``cited``: a results table, or ``cache``)."""

    name: str
    run: Artifact
    cited: str
    #: why the entry cannot be trusted (its first damage), ``None`` when it is intact
    damage: str | None = None

    def line(self) -> str:
        c, extra = self.run.config, self.run.extra
        train, model = c.get("train", {}), c.get("model", {})
        settings = (
            f"dropout={model.get('dropout')} optimizer={train.get('optimizer')} "
            f"seed={train.get('seed')} updates={extra.get('updates')}"
        )
        damaged = ", damaged" if self.damage else ""
        return (
            f"{self.name:<14} {self.run.kind}/{self.run.key}  {settings}  ({self.cited}{damaged})"
        )


def normalize(name: str) -> str:
    """A model name as matched: lower case, ``⋆``/``star`` as ``*``, ``rnnenc-`` as
    ``rnnencdec-``."""
    n = name.strip().lower().replace("⋆", "*").replace("star", "*")
    return re.sub(r"^rnnenc-", "rnnencdec-", n)


def chapter_params(values: dict | None) -> Params:
    """The chapter's :class:`Params` from a results record's parameters (those of this version of
    the chapter only; a parameter the record lacks keeps its default)."""
    names = {f.name for f in fields(Params)}
    return Params(**{k: v for k, v in (values or {}).items() if k in names})


def run_name(config: dict, P: Params) -> str:
    """The book's name of a training run from its config: ``RNNsearch-50``, ``RNNencdec-30``,
    ``RNNsearch-50*`` (a continuation); a length other than ``len_short``/``len_long`` is
    written as it is."""
    arch = {"rnnsearch": "RNNsearch", "rnnencdec": "RNNencdec"}.get(
        config.get("model", {}).get("arch"), "model"
    )
    length = config.get("corpus_max_len")
    label = {P.len_short: "30", P.len_long: "50"}.get(length, str(length))
    return f"{arch}-{label}" + ("*" if config.get("parent") else "")


def default_out() -> Path:
    """The build's output folder ``rnnlib build`` uses by default: ``<book>/_build``."""
    return (find_book_root() or Path.cwd()) / "_build"


def _results_folder(out: Path) -> Path:
    out = Path(out)
    return out / "results" if (out / "results").is_dir() else out


def _entry(found: book_results.Results, name: str) -> dict | None:
    try:
        return found.entry(name, CHAPTER)
    except KeyError:
        return None


def build_models(cache: Path, out: Path) -> tuple[list[Candidate], Params, str]:
    """The trained models the last build's chapter cites (module docstring), its parameters,
    and the results file read; ``[]`` and the defaults when there is no record. A cited run the
    cache lacks is a :class:`ModelNotFound` naming it and the cache."""
    folder = _results_folder(out)
    try:
        found = book_results.load(folder)
    except FileNotFoundError:
        return [], Params(), str(folder)
    except ValueError as e:  # a record file that does not read
        raise ModelNotFound(f"the build's results: {e}") from None
    record = _entry(found, "params")  # the chapter's parameters as the build recorded them
    P = chapter_params(record.get("value") if record else None)
    for table in TABLES:
        entry = _entry(found, table)
        if entry is None:
            continue
        candidates = []
        for ref in entry.get("artifacts", []):
            if ref.get("kind") != RUN_KIND:
                continue
            path = cache / RUN_KIND / ref["key"]
            meta, damage, _ = _inspect(path, RUN_KIND, ref["key"])
            if meta is None:
                raise ModelNotFound(
                    f"{folder}: {table} cites {RUN_KIND}/{ref['key']}, which is not in the "
                    f"cache {cache} (was the build made with another --cache?)"
                )
            run = Artifact(RUN_KIND, ref["key"], path, meta, True)
            why = _damaged(damage[0], cache) if damage else None
            candidates.append(
                Candidate(run_name(meta["config"], P), run, f"{CHAPTER} {table}", why)
            )
        return candidates, P, str(folder)
    return [], P, str(folder)


def lookup(cache: Path, kind: str, key: str) -> Artifact | None:
    """The finished entry ``kind/key`` of the cache folder ``cache``, or ``None``; an entry
    whose files do not match its sidecar (sizes, and the sha256 of a file whose time changed)
    is a :class:`ModelNotFound` naming the file. Read only: nothing is moved or rewritten."""
    path = cache / kind / key
    meta, damage, _ = _inspect(path, kind, key)
    if damage:
        raise ModelNotFound(_damaged(damage[0], cache))
    return None if meta is None else Artifact(kind, key, path, meta, True)


def _damaged(damage, cache: Path) -> str:
    return (
        f"{damage}: the cache entry is damaged (rnnlib cache verify --cache {cache} "
        "quarantines it, and the next build makes it again)"
    )


def _keys(cache: Path, kind: str) -> list[str]:
    folder = cache / kind
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and _KEY.fullmatch(p.name))


def _intact(cache: Path, kind: str) -> list[Artifact]:
    """Every intact entry of ``kind`` in the cache (a damaged one is passed over in a scan)."""
    out = []
    for key in _keys(cache, kind):
        try:
            art = lookup(cache, kind, key)
        except ModelNotFound:
            continue
        if art is not None:
            out.append(art)
    return out


def cache_runs(cache: Path, P: Params) -> list[Candidate]:
    """Every training run of the chapter's kind in the cache, named from its config."""
    return [Candidate(run_name(run.config, P), run, "cache") for run in _intact(cache, RUN_KIND)]


def _match(name: str, candidates: list[Candidate]) -> list[Candidate]:
    wanted = normalize(name)
    exact = [c for c in candidates if normalize(c.name) == wanted]
    return exact or [c for c in candidates if normalize(c.name).startswith(wanted)]


def find_run(name: str, cache: Path, out: Path) -> tuple[Candidate, Params]:
    """The training run ``name`` means (module docstring) and the chapter's parameters."""
    cited, P, where = build_models(cache, out)
    if _HEX.fullmatch(name.lower()):
        by_key = [c for c in cited + cache_runs(cache, P) if c.run.key.startswith(name.lower())]
        by_key = list({c.run.key: c for c in reversed(by_key)}.values())  # cited names first
        if len(by_key) == 1:
            return by_key[0], P
        if by_key:
            raise ModelNotFound(
                f"model {name!r}: {len(by_key)} runs of the cache have keys starting so",
                [c.line() for c in by_key],
            )
    if cited:
        hits = _match(name, cited)
        if len(hits) == 1:
            return hits[0], P
        if hits:
            raise ModelNotFound(
                f"model {name!r} is ambiguous: {len(hits)} models of {where} answer to it "
                "(give the name in full, or a key)",
                [c.line() for c in hits],
            )
        raise ModelNotFound(
            f"model {name!r}: no such model in {where}; the book's models are " + ", ".join(NAMES),
            [c.line() for c in cited],
        )
    runs = cache_runs(cache, P)
    hits = _match(name, runs)
    why = f"no build results of chapter {CHAPTER} in {where} (give --out, the build's folder)"
    if len(hits) == 1:
        return hits[0], P
    listed = hits or runs
    raise ModelNotFound(
        f"model {name!r}: {why}; "
        + (
            f"{len(hits)} runs of the cache {cache} answer to it: name one by its key"
            if hits
            else f"no run of the cache {cache} answers to it"
        ),
        [c.line() for c in listed],
    )


def run_corpus(cache: Path, run: Artifact) -> Artifact:
    """The ``corpus/prepared`` entry ``run`` was trained on (its data checksum)."""
    checksum = run.meta.get("data_checksum")
    for corpus in _intact(cache, CORPUS_KIND):
        if content_checksum(corpus.meta) == checksum:
            return corpus
    raise ModelNotFound(
        f"{run.kind}/{run.key}: the cache {cache} holds no {CORPUS_KIND} entry with its "
        f"data checksum {checksum} (its vocabularies are needed to translate)"
    )


def trained_model(cache: Path, found: Candidate, P: Params) -> TrainedModel:
    """The :class:`TrainedModel` of a training run: its delivered parameters (``model.pt``), its
    config, its corpus's vocabularies and tokenizer settings, and the chapter's search."""
    run = found.run
    if found.damage:
        raise ModelNotFound(found.damage)
    corpus = run_corpus(cache, run)
    c = corpus.config
    state = load_checkpoint(run.file("model.pt"))
    return TrainedModel(
        ModelConfig.from_dict(run.config["model"]),
        {k: v for k, v in state.items() if isinstance(v, torch.Tensor)},
        Vocab.load(corpus.file("src.vocab")),
        Vocab.load(corpus.file("tgt.vocab")),
        TokenizerSettings(c["src_lang"], c["tgt_lang"], c["tokenizer"], c["lowercase"]),
        SearchSettings(P.beam_size, None if P.min_len == "none" else P.min_len, P.decode_batch),
        run.meta,
        {
            "name": found.name.replace("*", "⋆"),
            "chapter": CHAPTER,
            "kind": run.kind,
            "key": run.key,
            "found": found.cited,
            "profile": P.profile,
            "corpus": f"{corpus.kind}/{corpus.key}",
        },
    )


def resolve(name: str, cache_root: Path | None = None, out: Path | None = None) -> TrainedModel:
    """The model the book calls ``name`` in the last build (results under ``out``, default
    :func:`default_out`) out of the cache at ``cache_root`` (default: the book's); raises
    :class:`ModelNotFound` listing the candidates when none or several answer to it."""
    cache = Path(cache_root) if cache_root is not None else default_cache_root()
    if not cache.is_dir():
        raise ModelNotFound(f"cache {cache}: no such folder (give --cache, the build's cache)")
    found, P = find_run(name, cache, Path(out) if out is not None else default_out())
    return trained_model(cache, found, P)


#: the book's other trained networks, by kind (``rnnlib cache ls`` names their entries so)
OTHER_MODELS = {
    "copy_task/model": "copy task ({arch})",
    "copy_task/length_model": "copy task, length study ({arch})",
    "cho2014/scorer": "phrase scorer",
    "cho2014/scorer_counts": "phrase scorer (count-drawn pairs)",
    "cho2014/cslm": "CSLM",
}


def entry_namer(cache: Path, out: Path | None = None):
    """``namer(kind, key, config) -> str`` for ``rnnlib cache ls``: a training run of the
    rnnsearch chapter by its book name (:func:`run_name`), marked ``(the build's)`` when the last
    build's results (under ``out``) cite it, so ``RNNsearch-50 (the build's)`` is the one
    ``translate --model rnnsearch-50`` reads; the other networks by :data:`OTHER_MODELS`; any
    other entry ``""``."""
    try:
        cited, P, _ = build_models(Path(cache), Path(out) if out is not None else default_out())
    except ModelNotFound:  # the build's record cites a run the cache lacks: name from configs
        cited, P = [], Params()
    theirs = {c.run.key: c.name for c in cited}

    def namer(kind: str, key: str, config: dict) -> str:
        if kind == RUN_KIND:
            return f"{theirs[key]} (the build's)" if key in theirs else run_name(config, P)
        if kind in OTHER_MODELS:
            arch = (config.get("model") or {}).get("arch", "?")
            return OTHER_MODELS[kind].format(arch=arch)
        return ""

    return namer


__all__ = [
    "Candidate",
    "entry_namer",
    "ModelNotFound",
    "build_models",
    "find_run",
    "normalize",
    "resolve",
    "run_name",
    "trained_model",
]
