"""The corpus parameters, declared once for every chapter, and :func:`corpus_config` that reads \
them.

Every chapter that trains or evaluates on the parallel corpus includes this block in its
``parameters`` cell with the marker line ``# include: corpus`` (:mod:`rnnlib.book.params`
expands it), so one ``-p corpus=files -p corpus_dir=data/wmt14`` reruns the whole book on the
user's own files. A chapter may change a *default* on the marker line, e.g.
``# include: corpus src_vocab=30000 tgt_vocab=30000`` for paper B's shortlists. The block::

    corpus: str = "bible"  # {bible, files} the parallel corpus: the English-French Bible, or your own files
    corpus_dir: str | None = None  # folder with the train/dev/test files when corpus is files (relative paths are relative to the book root)
    corpus_layout: str = "pair"  # {pair, tsv} files: <split>.<src_lang> + <split>.<tgt_lang>, or one <split>.tsv (source<TAB>target)
    src_lang: str = "en"  # the source language's code: the files' suffix and the tokenizer's rules (bible: en or fr)
    tgt_lang: str = "fr"  # the target language's code (bible: the other of en and fr)
    tokenizer: str = "moses"  # {moses, whitespace} Moses tokenizer (the papers'), or split on spaces for pre-tokenized files
    en_version: str = "4"  # {4, k, 3} English Bible: World English Bible, King James 1611, Basic English
    fr_version: str = "l"  # {l, 5, o} French Bible: Louis Segond 1910, Darby, Ostervald
    src_vocab: int = 15000  # [100, 1000000] source shortlist size (Cho et al. 15000, Bahdanau et al. 30000)
    tgt_vocab: int = 15000  # [100, 1000000] target shortlist size
    max_len: int | None = None  # [1, 1000] length filter of the training pairs (both sides), None for none
    length_guard: int | None = 1000  # [1, ] drop a pair (any split) with a side over this many tokens or 10 times as many characters: a broken line, not a sentence; None for no guard
    lowercase: bool = False  # lowercase both sides before tokenizing (the papers do not)

The names are the fields of :class:`~rnnlib.corpus.dataset.CorpusConfig`, so a chapter builds
the corpus with::

    from rnnlib.book.corpus_params import corpus_config
    from rnnlib.corpus.dataset import prepare_corpus
    corpus = prepare_corpus(corpus_config(ch.params), ch.cache)

``en_version`` / ``fr_version`` only apply to ``corpus="bible"``; ``corpus_layout`` only to
``corpus="files"``. Setting ``corpus_dir`` with ``corpus="bible"`` is an error (it would
otherwise silently train on the Bible); a relative ``corpus_dir`` is made absolute against the
book root. The files are read by :mod:`rnnlib.corpus.files`, which names the file and line of
bad content. The direction is ``src_lang`` -> ``tgt_lang`` (English -> French by default, the papers'
direction; any pair of language codes for files, whose suffixes they are, and whose codes choose
the Moses tokenizer's language rules).

Deviations: none (this module only names parameters; see :mod:`rnnlib.corpus.dataset`).
"""  # noqa: E501 (the block's lines: parse_parameters_cell reads one parameter per line)

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from ..cache import find_book_root
from .params import ParameterError, ParamSpec, parse_parameters_cell
from ..config import load_config
from ..corpus.dataset import CorpusConfig


def parameter_block() -> str:
    """The parameter lines of the module docstring (what ``# include: corpus`` stands for),
    unindented."""
    if not __doc__:
        raise RuntimeError(
            "rnnlib.book.corpus_params needs its docstring (do not run Python with -OO)"
        )
    lines = __doc__.split("::\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return "\n".join(line.strip() for line in lines) + "\n"


def specs() -> dict[str, ParamSpec]:
    """The declared :class:`~rnnlib.book.params.ParamSpec` of every corpus parameter."""
    return parse_parameters_cell(parameter_block(), where="rnnlib.book.corpus_params block")


def corpus_config(
    params: dict[str, Any], *, root: Path | str | None = None, **overrides: Any
) -> CorpusConfig:
    """The :class:`CorpusConfig` for a chapter's parameters (``ch.params``).

    ``params`` may hold other chapter parameters (``profile``, ``steps``...): they are ignored;
    corpus parameters it lacks keep the defaults of the block above. ``overrides`` replace
    values (``max_len=30``) or set a further :class:`CorpusConfig` field (``drop_leaks=False``).
    ``root``: the folder a relative ``corpus_dir`` is relative to (default: the book root, else
    the current folder).

    Raises :class:`~rnnlib.book.params.ParameterError` naming the parameter: a value of the wrong
    type or out of its range, ``corpus="files"`` without ``corpus_dir``, a ``corpus_dir``
    that is not a folder, ``corpus_dir`` set with ``corpus="bible"``, an unknown override.
    """
    declared = specs()
    config_fields = {f.name for f in fields(CorpusConfig)}
    values = {name: spec.default for name, spec in declared.items()}
    values.update({k: v for k, v in params.items() if k in declared})
    unknown = sorted(set(overrides) - config_fields)
    if unknown:
        raise ParameterError(
            f"corpus_config: unknown override {unknown[0]!r}; "
            f"known: {', '.join(sorted(config_fields))}"
        )
    values.update(overrides)
    values.update({name: declared[name].check(values[name], "corpus_config") for name in declared})
    if values["corpus"] == "files":
        values["corpus_dir"] = str(_corpus_folder(values["corpus_dir"], root))
    elif values["corpus_dir"] is not None:
        raise ParameterError(
            f"parameter 'corpus_dir' = {values['corpus_dir']!r} is set but parameter "
            "'corpus' = 'bible': set corpus=files to use the folder, or drop corpus_dir"
        )
    try:
        return load_config(CorpusConfig, values, "corpus_config")
    except TypeError as e:  # a wrong type in a CorpusConfig-only field
        raise ParameterError(f"corpus_config: {e}") from None


def _corpus_folder(value: str | None, root: Path | str | None) -> Path:
    if not value:
        raise ParameterError(
            "parameter 'corpus_dir' is required when corpus='files': give the folder with "
            "train/dev/test files, e.g. -p corpus_dir=data/wmt14"
        )
    folder = Path(value).expanduser()
    if not folder.is_absolute():
        base = Path(root) if root is not None else (find_book_root() or Path.cwd())
        folder = base / folder
    folder = folder.resolve()
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ParameterError(
            f"parameter 'corpus_dir' = {value!r}: {folder} {what} "
            "(relative paths are relative to the book root)"
        )
    return folder


__all__ = ["corpus_config", "parameter_block", "specs"]

if (
    __name__ == "__main__"
):  # python -m rnnlib.book.corpus_params: the block '# include: corpus' stands for
    print(parameter_block(), end="")
