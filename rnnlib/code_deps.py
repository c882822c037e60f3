"""Which source files each artifact kind is computed with, and their hashes (for the sidecars).

The cache's keys name the config and the data, not the code (:mod:`rnnlib.cache`). So that a
build never reuses, without saying so, an artifact that other code computed, every artifact's
sidecar records ``code``: a hash (16 hex digits) of each source file its kind depends on, by
path (``{"rnnlib/attention.py": "3f2a...", ...}``). A Python file is hashed as its code
(:func:`code_text`): editing a docstring or a comment, or breaking a line, changes nothing.
:data:`SOURCES` maps a kind, or a kind prefix ending in ``/``, to those files: the modules its
``make`` runs (for a trained model the model and training modules, for a phrase-based system the
smt modules...), not the whole package and not plotting. A kind's entry is its own key, else
the longest prefix that begins it; a kind matching none records no code (the kinds of tests,
for instance). A folder entry (``"fast/"``) stands for every ``.py`` and ``.pxd`` file in it (a
``.pxd`` gives a compiled module its C types).

How the map is kept honest:

* ``tests/test_code_deps.py`` computes smoke-sized artifacts through the chapters' own code (the
  copy task's model and decoded test set; the rnnsearch chapter's corpus, an ``rnnsearch/run``
  training with its dev-BLEU curve, its NLLs, translations and alignments; a toy phrase-based
  system from alignment to evaluation and its search check; paper A's scorer, its scored
  pairs, the CSLM and its n-gram rival) while tracing every Python function that runs inside
  each ``make``, and fails naming each ``rnnlib`` module that ran but is not in that kind's set
  (:data:`BOOKKEEPING` aside: the cache's own code, which runs for every artifact and shapes
  none).
* The same file finds every kind string the package passes to ``cache.build`` (and to the
  helpers that call it) and fails on one that :func:`sources_of` does not map, on one built by
  a module outside its set, and on a listed file that no longer exists (a moved module must be
  moved in the map too).
* Kinds the traced tests do not compute (paper A's rescoring and Table 1 checks, the Bible's
  cleaning and tokens, the t-SNE maps) list their make functions' modules by reading: whoever
  makes such a kind run another module adds it here. So do the inputs a caller hands its
  ``make`` ready-made (the model that ``rnnsearch/translations`` decodes, loaded by
  ``training_runs``), which no trace of the ``make`` sees.

Editing, moving or deleting a listed file makes the kind's artifacts stale (:mod:`rnnlib.cache`:
recomputed by default, kept with ``--keep-stale``); a file added to a kind's set is adopted, and
one taken out of the set (still in the package) no longer counts (:func:`changed`).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import tokenize
from functools import lru_cache
from pathlib import Path

#: the folder of the package ``rnnlib`` (paths in :data:`SOURCES` are relative to it)
PACKAGE = Path(__file__).resolve().parent

#: environment variable: ``1`` keeps artifacts (and resumes work folders) made by other code
KEEP_STALE_ENV = "RNNLIB_KEEP_STALE"

#: modules that run while any artifact is computed but shape no result (the cache's bookkeeping:
#: keys, sidecars, locks, the machine's description)
BOOKKEEPING = ("cache.py", "code_deps.py", "machine.py")

#: the name of the class that declares a chapter's parameters (its fields are not code)
PARAMS_CLASS = "Params"

# building blocks of the map
_MODEL = (
    "models.py",
    "gru.py",
    "encoders.py",
    "decoders.py",
    "attention.py",
    "init.py",
    "config.py",
    "presets.py",
    "specials.py",
    "ragged.py",
    "batch.py",
    "loss.py",
    "device.py",
    "fast/",
)
_TRAINING = (
    "train.py",
    "minibatch_order.py",
    "distributed.py",
    "checkpoint.py",
    "experiments/training_runs.py",
    "experiments/run_pool.py",
)
_SEARCH = ("search.py", "translate.py", "bleu.py")
_CORPUS = ("corpus/", "config.py", "ragged.py", "specials.py")
_SMT_BASE = ("config.py", "ragged.py", "specials.py")
_SMT = ("smt/", "bleu.py", *_SMT_BASE)  # a decoding, its tuning and scoring: the whole folder
#: what the networks of paper A read of the phrase-based side: the phrase table's pairs
_SMT_PAIRS = (
    "smt/system.py",
    "smt/align.py",
    "smt/phrases.py",
    "smt/features.py",
    "smt/rnn_scorer.py",
    *_SMT_BASE,
)
_SMT_LMS = ("smt/lm.py", "smt/cslm.py", *_SMT_BASE)  # the CSLM and its n-gram rival
_RESCORING = (
    *_SMT,
    *_MODEL,
    "search.py",
    "corpus/vocab.py",
    "experiments/cho2014/rescored.py",
    "experiments/cho2014/rows.py",
    "experiments/cho2014/cslm.py",
)

_NLL = (  # paper B's per-sentence NLL of a trained model
    *_MODEL,
    "search.py",
    "checkpoint.py",
    "smt/rnn_scorer.py",
    "corpus/vocab.py",
    "experiments/training_runs.py",
    "experiments/rnnsearch/table_2.py",
    "experiments/rnnsearch/setting.py",
)

_CALIBRATION = (  # the ledger's simulations of the rules
    "calibration/",
    "stats.py",
    "verdicts.py",
    "bleu.py",
    "resampling.py",
    "specials.py",
    "line_blocks.py",
    "bleu_t.py",
    "experiments/ledger.py",
)

#: kind (or kind prefix ending in ``/``) -> the files, relative to :data:`PACKAGE`, it depends on
SOURCES: dict[str, tuple[str, ...]] = {
    "corpus/": _CORPUS,
    "copy_task/model": (*_MODEL, *_TRAINING, "experiments/copy_task.py"),
    "copy_task/decoded": (
        *_MODEL,
        *_SEARCH,
        "checkpoint.py",
        "experiments/training_runs.py",
        "experiments/copy_task.py",
    ),
    "copy_task/length_model": (
        *_MODEL,
        *_TRAINING,
        "experiments/copy_task.py",
        "experiments/copy_lengths.py",
    ),
    "copy_task/length_decoded": (
        *_MODEL,
        *_SEARCH,
        "checkpoint.py",
        "experiments/training_runs.py",
        "experiments/copy_task.py",
        "experiments/copy_lengths.py",
    ),
    "rnnsearch/run": (
        *_MODEL,
        *_TRAINING,
        *_SEARCH,
        "corpus/dataset.py",
        "corpus/tokenize.py",
        "corpus/vocab.py",
        "experiments/rnnsearch/training.py",
        "experiments/rnnsearch/setting.py",
    ),
    "rnnsearch/translations": (
        *_MODEL,
        *_SEARCH,
        "checkpoint.py",
        "corpus/dataset.py",
        "corpus/tokenize.py",
        "corpus/vocab.py",
        "experiments/training_runs.py",
        "experiments/rnnsearch/translations.py",
        "experiments/rnnsearch/setting.py",
    ),
    "rnnsearch/init_translations": (
        *_MODEL,
        *_SEARCH,
        "train.py",
        "corpus/dataset.py",
        "corpus/tokenize.py",
        "corpus/vocab.py",
        "experiments/training_runs.py",
        "experiments/rnnsearch/translations.py",
        "experiments/rnnsearch/controls.py",
        "experiments/rnnsearch/setting.py",
    ),
    "rnnsearch/source_gain": (
        *_MODEL,
        "search.py",
        "checkpoint.py",
        "smt/rnn_scorer.py",
        "ragged.py",
        "experiments/training_runs.py",
        "experiments/rnnsearch/source_gain.py",
        "experiments/rnnsearch/setting.py",
    ),
    "rnnsearch/dev_nll": _NLL,
    "rnnsearch/test_nll": _NLL,
    "rnnsearch/dev_nll_init": (
        *_MODEL,
        "search.py",
        "train.py",
        "smt/rnn_scorer.py",
        "corpus/vocab.py",
        "experiments/rnnsearch/controls.py",
        "experiments/rnnsearch/setting.py",
    ),
    "rnnsearch/alignments": (
        *_MODEL,
        *_SEARCH,
        "checkpoint.py",
        "stats.py",
        "corpus/vocab.py",
        "experiments/training_runs.py",
        "experiments/rnnsearch/figure_3.py",
        "experiments/rnnsearch/controls.py",
        "experiments/rnnsearch/training.py",
        "experiments/rnnsearch/setting.py",
    ),
    "cho2014/scorer": (
        *_MODEL,
        *_TRAINING,
        *_SMT_PAIRS,
        "corpus/vocab.py",
        "experiments/baseline.py",
        "experiments/cho2014/scorer.py",
        "experiments/cho2014/setting.py",
    ),
    "cho2014/scorer_counts": (
        *_MODEL,
        *_TRAINING,
        *_SMT_PAIRS,
        "corpus/vocab.py",
        "experiments/baseline.py",
        "experiments/cho2014/scorer.py",
        "experiments/cho2014/counts.py",
        "experiments/cho2014/setting.py",
    ),
    "cho2014/rnn_feature": (
        *_MODEL,
        *_SMT_PAIRS,
        "search.py",
        "checkpoint.py",
        "corpus/vocab.py",
        "experiments/cho2014/scorer.py",
    ),
    "cho2014/cslm": (*_SMT_LMS, "device.py", "corpus/vocab.py", "experiments/cho2014/cslm.py"),
    "cho2014/kn_shortlist": (*_SMT_LMS, "corpus/vocab.py", "experiments/cho2014/cslm.py"),
    "cho2014/long_sources": (
        *_MODEL,
        *_SMT_PAIRS,
        "search.py",
        "corpus/vocab.py",
        "experiments/cho2014/long_sources.py",
        "experiments/cho2014/setting.py",
    ),
    "cho2014/wp_reach": (
        *_SMT,
        "stats.py",
        "experiments/cho2014/lm_floors.py",
        "experiments/cho2014/table_1.py",
        "experiments/cho2014/rows.py",
    ),
    "cho2014/nbest": _RESCORING,
    "cho2014/rescoring": _RESCORING,
    "cho2014/rescored_tuned": _RESCORING,
    "cho2014/rescored_eval": _RESCORING,
    "cho2014/table1_intervals": (
        *_SMT,
        "stats.py",
        "experiments/cho2014/table_1.py",
        "experiments/cho2014/rows.py",
    ),
    "cho2014/table1_checks": (
        *_SMT,
        "stats.py",
        "verdicts.py",
        "experiments/cho2014/table_1.py",
        "experiments/cho2014/equal_effort.py",
        "experiments/cho2014/rows.py",
    ),
    "cho2014/table1_heldout": (
        *_SMT,
        "stats.py",
        "verdicts.py",
        "multi_reference.py",
        "resampling.py",
        "experiments/cho2014/primary.py",
        "experiments/cho2014/primary_claims.py",
        "experiments/cho2014/equal_effort.py",
        "experiments/cho2014/intervals.py",
        "experiments/cho2014/rows.py",
        "experiments/cho2014/table_1.py",
    ),
    "smt/": _SMT,
    "smt/alignment": ("smt/system.py", "smt/align.py", *_SMT_BASE),
    "smt/phrase_table": ("smt/system.py", "smt/align.py", "smt/phrases.py", *_SMT_BASE),
    "smt/lm": ("smt/system.py", "smt/lm.py", *_SMT_BASE),
    "smt/test_links": (  # eflomal on the training pairs and the test pairs (read, not traced)
        "smt/align.py",
        *_SMT_BASE,
        "corpus/dataset.py",
        "experiments/baseline.py",
        "experiments/rnnsearch/agreement.py",
    ),
    "representations/tsne": ("experiments/representations/tsne.py",),
    "ledger/calibration": _CALIBRATION,
}


#: what a training checkpoint (:mod:`rnnlib.train`) records of its code: the model modules and
#: those the trainer runs, whichever kind it belongs to (it resumes only under that code)
CHECKPOINT_SOURCES = (*_MODEL, "train.py", "minibatch_order.py", "distributed.py", "checkpoint.py")


def checkpoint_code() -> dict[str, str]:
    """``{path: hash}`` of :data:`CHECKPOINT_SOURCES`, for a training checkpoint."""
    return {path: file_hash(path) for path in expand(CHECKPOINT_SOURCES)}


def sources_of(kind: str) -> tuple[str, ...] | None:
    """The :data:`SOURCES` entry of ``kind``: its own, else the longest prefix ``"a/"`` that
    begins it; ``None`` when none does (such a kind records no code)."""
    if kind in SOURCES:
        return SOURCES[kind]
    prefixes = [k for k in SOURCES if k.endswith("/") and kind.startswith(k)]
    return SOURCES[max(prefixes, key=len)] if prefixes else None


def expand(entries: tuple[str, ...], package: Path | None = None) -> list[str]:
    """The files an entry list names, as sorted paths ``"rnnlib/<...>"`` (a folder: its
    ``.py`` and ``.pxd`` files, recursively); a listed file that does not exist is an error."""
    package = package or PACKAGE
    out = set()
    for entry in entries:
        where = package / entry
        if entry.endswith("/"):
            if not where.is_dir():
                raise FileNotFoundError(f"code_deps: no folder {where}")
            found = [p for p in where.rglob("*") if p.suffix in (".py", ".pxd")]
            out.update(p for p in found if "__pycache__" not in p.parts)
        elif where.is_file():
            out.add(where)
        else:
            raise FileNotFoundError(f"code_deps: no file {where}")
    return sorted(f"rnnlib/{p.relative_to(package).as_posix()}" for p in out)


@lru_cache(maxsize=None)
def file_hash(path: str) -> str:
    """The hash (16 hex digits) of the package file ``path`` (``"rnnlib/..."``), read once per
    process: the code this process loaded, not a later edit made while it runs. A Python file
    is hashed as its code (:func:`code_text`: docstrings, comments and line breaks inside
    brackets do not count); another file (a ``.pxd``) as its bytes."""
    data = (PACKAGE.parent / path).read_bytes()
    if path.endswith(".py"):
        data = code_text(data.decode("utf-8")).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:16]


def code_text(source: str) -> str:
    """``source``'s tokens without comments, docstrings and non-logical line breaks, one a line
    (indentation as ``INDENT``/``DEDENT``): two sources that differ only in what a reader sees
    give the same text; a source that does not parse is returned as it is. A module-level class
    :data:`PARAMS_CLASS` made of fields only (a chapter's parameters, ``setting.py``) does not
    count either: a parameter reaches a computation through the config its key holds, so adding
    a chapter parameter makes no trained model stale."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError, ValueError):
        return source
    docstrings, declared = set(), set()
    for node in tree.body:  # the chapter's parameters, declared as fields and nothing else
        if (
            isinstance(node, ast.ClassDef)
            and node.name == PARAMS_CLASS
            and all(isinstance(x, ast.AnnAssign) or isinstance(x, ast.Expr) for x in node.body)
        ):
            declared.update(range(node.lineno, node.end_lineno + 1))
            declared.update(d.lineno for d in node.decorator_list)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    docstrings.add((first.lineno, first.col_offset))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
    out, dropped = [], False
    for tok in tokens:
        if tok.type in skip or tok.start[0] in declared:
            continue
        if tok.type == tokenize.STRING and tok.start in docstrings:
            dropped = True  # the docstring's logical line goes, with its NEWLINE
            continue
        if dropped and tok.type == tokenize.NEWLINE:
            dropped = False
            continue
        dropped = False
        name = tokenize.tok_name[tok.type]
        out.append(name if tok.type in (tokenize.INDENT, tokenize.DEDENT) else tok.string)
    return "\n".join(out)


def code_hashes(kind: str) -> dict[str, str] | None:
    """``{path: hash}`` of every file ``kind`` depends on; ``None`` for a kind not mapped."""
    entries = sources_of(kind)
    if entries is None:
        return None
    return {path: file_hash(path) for path in expand(entries)}


def changed(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """The recorded files whose hash is not the current one, or that are no longer in the
    package (a module edited, moved or deleted), sorted. A file in the set that the record lacks
    is not a change: it was added to the map since, and is adopted like a record made before
    hashes existed (a kind that starts running a new module changes a listed one too). A
    recorded file still in the package but no longer in the kind's set is not a change either:
    the map (kept honest by ``tests/test_code_deps.py``) says the kind no longer depends on it,
    so narrowing a kind's set costs no recomputation."""
    return sorted(
        n
        for n in recorded
        if (n in current and recorded[n] != current[n]) or (n not in current and not _exists(n))
    )


def _exists(path: str) -> bool:
    """Whether the package file ``path`` (``"rnnlib/..."``) exists."""
    return (PACKAGE.parent / path).is_file()


#: how :func:`file_hash` hashes, recorded beside every record (``code_scheme``): a record made
#: another way cannot be compared, and is adopted like one made before records existed
SCHEME = "tokens-without-params-sha256-16"


def stamped(files: dict[str, str]) -> dict:
    """``{"code": files, "code_scheme": SCHEME}``: a record of code, as sidecars, work folders and
    checkpoints hold it."""
    return {"code": files, "code_scheme": SCHEME}


def recorded(holder: dict) -> dict[str, str] | None:
    """The record of code in ``holder`` (a sidecar, a checkpoint...), or ``None`` when it has
    none that can be compared with :func:`code_hashes` (none at all, or made another way)."""
    files = holder.get("code")
    if not isinstance(files, dict) or holder.get("code_scheme") != SCHEME:
        return None
    return files


def keep_stale() -> bool:
    """Whether ``$RNNLIB_KEEP_STALE`` asks to keep what other code made (``rnnlib build
    --keep-stale`` sets it for its chapters)."""
    return os.environ.get(KEEP_STALE_ENV, "").strip().lower() in ("1", "true", "yes")


def describe(files: list[str], limit: int = 4) -> str:
    """The changed files in a line: ``"rnnlib/a.py, rnnlib/b.py and 3 more"``."""
    shown = ", ".join(files[:limit])
    return shown + (f" and {len(files) - limit} more" if len(files) > limit else "")


__all__ = [
    "BOOKKEEPING",
    "CHECKPOINT_SOURCES",
    "KEEP_STALE_ENV",
    "PACKAGE",
    "SCHEME",
    "SOURCES",
    "changed",
    "checkpoint_code",
    "code_hashes",
    "recorded",
    "stamped",
    "describe",
    "expand",
    "file_hash",
    "keep_stale",
    "sources_of",
]
