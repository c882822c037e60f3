"""``rnnlib translate``: translate raw text, one sentence a line, with a model of the book.

``--model`` is a model folder written by ``rnnlib export`` (no cache needed) or a name of the
book (``rnnsearch-50``, ``rnnencdec-50``, ``rnnsearch-50*``...), resolved through the last
build's results and cache (:mod:`rnnlib.experiments.trained_models`). Each line of the input (a
file, or standard input) is tokenized with the model's own tokenizer and vocabulary, translated
by beam search, and detokenized as the chapter detokenizes for BLEU
(:mod:`rnnlib.translate_text`); one line is printed per input line. With ``--alignments DIR``
each sentence's alignment matrix (B Eq. 6's alpha_ij) is written as ``DIR/line-<n>.png`` in the
book's style of B Fig. 3 (:func:`rnnlib.book.plotting.attention_plot`).

Errors (a missing or ambiguous model, a wrong folder, a missing or empty input) are one line
on standard error naming the file or option, with the candidates below it where there are
some, and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..model_folder import ModelFolderError, TrainedModel, is_model_folder, read_folder
from ..translate_text import MODEL_DEFAULT, Translation, Translator, parse_min_len
from .trained_models import ModelNotFound, resolve

PROG = "rnnlib translate"


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """``--cache`` and ``--out``: where a model name is looked up (translate and export)."""
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="the build's artifact cache (default: $RNNLIB_CACHE, <book>/_cache or "
        "~/.cache/rnnlib)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="BUILD_OUT",
        help="the build's output folder, whose results/ name the models (default: <book>/_build)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Translate raw text, one sentence a line, with a trained model of the book: a name "
        "from the last build (rnnsearch-50, rnnencdec-50, rnnsearch-50*, ...) or a folder "
        "written by 'rnnlib export'. Prints one translation per input line."
    )
    parser.add_argument(
        "--model",
        required=True,
        metavar="NAME|FOLDER",
        help="a model folder (rnnlib export), or the book's name of a model of the last build "
        "(case, * or ⋆ as you like), or a cache key of a training run",
    )
    add_model_arguments(parser)
    parser.add_argument(
        "--input",
        type=Path,
        default=None,
        metavar="FILE",
        help="the text to translate, one sentence a line (default: standard input)",
    )
    parser.add_argument(
        "--beam", type=int, default=None, metavar="N", help="beam width (default: the chapter's)"
    )
    parser.add_argument(
        "--min-len",
        default=MODEL_DEFAULT,
        metavar="groundhog|none|N",
        help="minimum translation length: groundhog (the papers' GroundHog: half the source "
        "length), none, or N tokens (default: the chapter's setting)",
    )
    parser.add_argument(
        "--no-unk",
        action="store_true",
        help="never generate [UNK] (the decoding of B Table 1's No UNK column)",
    )
    parser.add_argument(
        "--alignments",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write each sentence's alignment matrix as DIR/line-<n>.png (RNNsearch only)",
    )
    parser.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    parser.add_argument(
        "--quiet", action="store_true", help="no summary on standard error, translations only"
    )


def load_model(model: str, cache: Path | None, out: Path | None) -> TrainedModel:
    """The model ``--model`` names: a model folder, or a name resolved in the build."""
    path = Path(model).expanduser()
    if is_model_folder(path):
        return read_folder(path)
    if path.exists() or "/" in model or "\\" in model:
        return read_folder(path)  # a path (no book name has a slash): say what is wrong with it
    return resolve(model, cache, out)


def read_input(path: Path | None) -> list[str]:
    """The input lines (newlines removed): of ``path``, or of standard input."""
    if path is None:
        return sys.stdin.read().splitlines()
    if not path.exists():
        raise FileNotFoundError(f"--input {path}: no such file")
    if path.is_dir():
        raise ValueError(f"--input {path}: is a folder, not a text file")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise ValueError(f"--input {path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def write_alignments(folder: Path, translations: list[Translation], start: int = 1) -> int:
    """Each translated sentence's weights as ``folder/line-<n>.png`` (``n`` the input line,
    ``start`` the first's) in the style of B Fig. 3's panels; returns how many were written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..book import style
    from .rnnsearch.figure_3 import alignment_figure

    style.use()
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for n, t in enumerate(translations, start):
        if t.attention is None:
            continue
        item = {"label": f"line {n}", "source": t.source, "output": t.output}
        fig = alignment_figure([{**item, "weights": t.attention}])
        fig.savefig(folder / f"line-{n:04d}.png", dpi=style.DPI)
        plt.close(fig)
        written += 1
    return written


def main(args: argparse.Namespace) -> int:
    try:
        return _translate(args)
    except (ModelNotFound, ModelFolderError, FileNotFoundError, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1


def _translate(args: argparse.Namespace) -> int:
    min_len = parse_min_len(args.min_len)
    if args.beam is not None and args.beam < 1:
        raise ValueError(f"--beam {args.beam}: must be at least 1")
    tm = load_model(args.model, args.cache, args.out)
    translator = Translator(tm, args.device)
    if args.alignments is not None and not translator.has_attention:
        raise ValueError(
            f"--alignments: {tm.name} has no alignment model (arch {tm.config.arch}); "
            "an RNNsearch has"
        )
    options = dict(
        beam_size=args.beam,
        min_len=min_len,
        forbid_unk=args.no_unk,
        attention=args.alignments is not None,
    )
    if args.input is None and sys.stdin.isatty():  # typed: each line as soon as it is entered
        print(f"{PROG}: {tm.name}: type a sentence and Enter; Ctrl-D ends", file=sys.stderr)
        out = []
        for line in sys.stdin:
            out += translator.translate([line], **options)
            print(out[-1].text, flush=True)
            if args.alignments is not None:
                write_alignments(args.alignments, out[-1:], start=len(out))
    else:
        lines = read_input(args.input)
        where = f"--input {args.input}" if args.input is not None else "standard input"
        if not any(line.strip() for line in lines):
            raise ValueError(f"{where}: no sentence to translate (one sentence a line)")
        out = translator.translate(lines, **options)
        sys.stdout.write("".join(t.text + "\n" for t in out))
        sys.stdout.flush()
        if args.alignments is not None:
            write_alignments(args.alignments, out)
    if not args.quiet:
        _summary(tm, out, args.alignments)
    return 0


def _summary(tm: TrainedModel, out: list[Translation], alignments: Path | None) -> None:
    """One line on standard error: lines, model, unknown words, alignment matrices drawn."""
    unknown = sum(len(t.unknown) for t in out)
    drawn = sum(t.attention is not None for t in out) if alignments is not None else 0
    origin = tm.about.get("folder") or f"{tm.about.get('kind')}/{tm.about.get('key')}"
    print(
        f"{PROG}: {len(out)} line{'s' if len(out) != 1 else ''} with {tm.name} ({origin}); "
        f"{unknown} source words outside its shortlist read as [UNK]"
        + (f"; {drawn} alignment matrices in {alignments}" if drawn else ""),
        file=sys.stderr,
    )


__all__ = ["add_arguments", "add_model_arguments", "load_model", "main", "read_input"]
