"""A trained translation model as one object, and as a self-contained folder another machine reads.

:class:`TrainedModel` holds everything needed to translate raw text with a model of the book:
its :class:`~rnnlib.config.ModelConfig` and parameters, both vocabularies (B §4.1: "a shortlist
of 30,000 most frequent words in each language"), the tokenizer settings of its corpus (B §4.1:
"the tokenization script from the open-source machine translation package, Moses"), the search
settings its chapter decoded with (beam width, GroundHog's minimum length), the sidecar of the
cache entry it was trained as, and where it came from.

:func:`write_folder` writes it as a folder and :func:`read_folder` reads it back without the
artifact cache::

    config.json       the folder's format, the model config, the search settings, where the
                      model came from, and the sha256 of every other file
    model.safetensors the parameters (safetensors: tensors only, nothing is unpickled)
    tokenizer.json    languages, tokenizer kind (moses or whitespace), lowercasing, Moses options
    src.vocab         the source shortlist, one ``word<TAB>training count`` line per word
    tgt.vocab         the target shortlist (ids: the 4 special tokens, then these lines in order)
    meta.json         the sidecar of the training run's cache entry, as it is in the cache

A folder that lacks a file, whose file does not match its recorded sha256, or whose vocabulary
sizes disagree with the model config is refused with a :class:`ModelFolderError` naming the file.

Deviations: none (the folder stores what the book trained; it changes no computation).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from .config import ModelConfig
from .corpus.tokenize import KINDS, Tokenizer
from .corpus.vocab import Vocab
from .models import build_model

#: what ``config.json`` says the folder is; :data:`FOLDER_VERSION` changes with the file layout
FOLDER_FORMAT = "rnnlib-model-folder"
FOLDER_VERSION = 1
WEIGHTS = "model.safetensors"
CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
SIDECAR = "meta.json"
VOCABS = {"src": "src.vocab", "tgt": "tgt.vocab"}
#: the options :meth:`rnnlib.corpus.tokenize.Tokenizer.tokenize` gives sacremoses (recorded only)
MOSES_OPTIONS = {"escape": False, "aggressive_dash_splits": False}


class ModelFolderError(ValueError):
    """A model folder that cannot be read; the message names the folder and the file."""


@dataclass(frozen=True)
class TokenizerSettings:
    """How the model's corpus was tokenized: ``src_lang``/``tgt_lang`` (ISO codes: Moses' rules
    per language), ``kind`` (``moses`` or ``whitespace``) and ``lowercase``
    (:class:`rnnlib.corpus.dataset.CorpusConfig`'s fields of those names)."""

    src_lang: str
    tgt_lang: str
    kind: str = "moses"
    lowercase: bool = False

    def tokenizer(self, side: str) -> Tokenizer:
        """The ``src`` or ``tgt`` side's tokenizer, as the corpus builds it
        (:meth:`rnnlib.corpus.dataset.Corpus.tokenizer`)."""
        lang = {"src": self.src_lang, "tgt": self.tgt_lang}[side]
        return Tokenizer(lang, self.kind, self.lowercase)


@dataclass(frozen=True)
class SearchSettings:
    """The search the model's chapter decoded its test set with: ``beam_size``, ``min_len``
    (a name of :data:`rnnlib.search.MIN_LENS` such as ``"groundhog"``, an int, or ``None``) and
    ``batch_size`` (sentences per search batch; the results do not depend on it)."""

    beam_size: int = 10
    min_len: str | int | None = "groundhog"
    batch_size: int = 32


@dataclass
class TrainedModel:
    """A model ready to translate: ``config``, its parameters ``state`` (name -> tensor),
    ``src_vocab``/``tgt_vocab``, ``tokenizer`` settings, ``search`` settings, the training
    run's ``sidecar`` (its cache entry's ``meta.json``), and ``about``: where it came from
    (book name, chapter, cache kind and key, results file, corpus entry)."""

    config: ModelConfig
    state: dict[str, torch.Tensor]
    src_vocab: Vocab
    tgt_vocab: Vocab
    tokenizer: TokenizerSettings
    search: SearchSettings = field(default_factory=SearchSettings)
    sidecar: dict = field(default_factory=dict)
    about: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for side, vocab in (("src", self.src_vocab), ("tgt", self.tgt_vocab)):
            size = getattr(self.config, f"{side}_vocab")
            if len(vocab) != size:
                raise ModelFolderError(
                    f"{VOCABS[side]}: {len(vocab)} ids (4 special tokens and "
                    f"{len(vocab) - 4} words), but the model config has {side}_vocab={size}"
                )
        if self.tokenizer.kind not in KINDS:
            raise ModelFolderError(
                f"{TOKENIZER}: kind={self.tokenizer.kind!r} is not one of {KINDS}"
            )

    @property
    def name(self) -> str:
        """The book's name of the model (``RNNsearch-50``), or its cache key."""
        return str(self.about.get("name") or self.about.get("key") or "model")

    def model(self, device: str | torch.device = "cpu") -> torch.nn.Module:
        """The network with these parameters, in eval mode, on ``device``."""
        model = build_model(self.config)
        model.load_state_dict(self.state)
        return model.to(device).eval()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _model_dict(config: ModelConfig) -> dict:
    """Every field of the config, ``unit`` included (a folder is not a cache key)."""
    return asdict(config)


def write_folder(tm: TrainedModel, folder: Path, force: bool = False) -> Path:
    """Write ``tm`` as a model folder at ``folder`` (module docstring); returns it. The files
    are written into a temporary folder beside it, which then takes its place: a reader sees the
    old folder or the whole new one. An existing folder is replaced only with ``force``, and only
    when it is empty or a model folder itself (never another folder's files)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    if folder.exists():
        if not folder.is_dir():
            raise ModelFolderError(f"{folder}: exists and is not a folder")
        if any(folder.iterdir()):
            if not (folder / CONFIG).is_file():
                raise ModelFolderError(
                    f"{folder}: the folder holds other files (no {CONFIG}): "
                    "choose a new or empty folder"
                )
            if not force:
                raise ModelFolderError(
                    f"{folder}: a model folder is already there (--force replaces it)"
                )
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        state = {k: v.detach().to("cpu").contiguous() for k, v in tm.state.items()}
        save_file(state, str(tmp / WEIGHTS), metadata={"format": "pt"})
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp / WEIGHTS, 0o666 & ~umask)  # (written private) as readable as its siblings
        tm.src_vocab.save(tmp / VOCABS["src"])
        tm.tgt_vocab.save(tmp / VOCABS["tgt"])
        tokenizer = {**asdict(tm.tokenizer), "moses_options": MOSES_OPTIONS}
        _write_json(tmp / TOKENIZER, tokenizer)
        _write_json(tmp / SIDECAR, tm.sidecar)
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir())}
        config = {
            "format": FOLDER_FORMAT,
            "version": FOLDER_VERSION,
            "model": _model_dict(tm.config),
            "search": asdict(tm.search),
            "about": tm.about,
            "files": files,
        }
        _write_json(tmp / CONFIG, config)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def is_model_folder(path: Path) -> bool:
    """Whether ``path`` is a folder with a ``config.json`` (it may still be refused on reading)."""
    return Path(path).is_dir() and (Path(path) / CONFIG).is_file()


def _read_json(folder: Path, name: str) -> dict:
    path = folder / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelFolderError(
            f"{path}: missing (the folder is not a whole model folder)"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelFolderError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ModelFolderError(f"{path}: expected a JSON object")
    return data


def read_folder(folder: Path) -> TrainedModel:
    """The :class:`TrainedModel` written by :func:`write_folder` at ``folder`` (no cache needed).
    Every file is checked against its recorded sha256; a problem is a :class:`ModelFolderError`
    naming the file."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    folder = Path(folder)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ModelFolderError(f"{folder}: {what}")
    if not (folder / CONFIG).is_file():
        raise ModelFolderError(
            f"{folder / CONFIG}: missing: {folder} is not a model folder "
            "(write one with rnnlib export NAME --to FOLDER)"
        )
    config = _read_json(folder, CONFIG)
    if config.get("format") != FOLDER_FORMAT or config.get("version") != FOLDER_VERSION:
        raise ModelFolderError(
            f"{folder / CONFIG}: format {config.get('format')!r} version "
            f"{config.get('version')!r}, expected {FOLDER_FORMAT!r} version {FOLDER_VERSION}"
        )
    for name in (WEIGHTS, TOKENIZER, SIDECAR, *VOCABS.values()):
        path, expected = folder / name, (config.get("files") or {}).get(name)
        if not path.is_file():
            raise ModelFolderError(f"{path}: missing (the folder is not a whole model folder)")
        if expected is None:
            raise ModelFolderError(f"{folder / CONFIG}: no sha256 recorded for {name}")
        if _sha256(path) != expected:
            raise ModelFolderError(
                f"{path}: its sha256 differs from the one {CONFIG} records (the file changed)"
            )
    try:
        model_config = ModelConfig.from_dict(config["model"])
        tok = _read_json(folder, TOKENIZER)
        tok.pop("moses_options", None)
        tokenizer = TokenizerSettings(**tok)
        search = SearchSettings(**config.get("search", {}))
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFolderError(f"{folder / CONFIG} or {TOKENIZER}: {e}") from None
    try:
        state = load_file(str(folder / WEIGHTS))
    except (SafetensorError, OSError) as e:
        raise ModelFolderError(f"{folder / WEIGHTS}: {e}") from None
    tm = TrainedModel(
        model_config,
        state,
        Vocab.load(folder / VOCABS["src"]),
        Vocab.load(folder / VOCABS["tgt"]),
        tokenizer,
        search,
        _read_json(folder, SIDECAR),
        {**config.get("about", {}), "folder": str(folder.resolve())},
    )
    expected = set(build_model(model_config).state_dict())
    if set(state) != expected:
        extra, missing = sorted(set(state) - expected), sorted(expected - set(state))
        raise ModelFolderError(
            f"{folder / WEIGHTS}: tensors do not match the model config "
            f"(missing {missing[:3]}, unexpected {extra[:3]})"
        )
    return tm


__all__ = [
    "ModelFolderError",
    "SearchSettings",
    "TokenizerSettings",
    "TrainedModel",
    "is_model_folder",
    "read_folder",
    "write_folder",
]
