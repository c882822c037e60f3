"""Preprocessing benchmark on a synthetic parallel corpus (paper scale: a million pairs).

``python -m rnnlib.bench.corpus [--pairs 1000000] [--tokenizer whitespace|moses]`` writes
random Zipf-distributed sentences (5--60 words, 50,000-word vocabularies) as ``train.en`` /
``train.fr`` (plus 3,000-pair dev and test files) into a temporary folder, then runs
:func:`~rnnlib.corpus.dataset.prepare_corpus` on them in a fresh process and reports the
seconds and the peak resident memory of that process (goal: under 2 GB). The 1M-pair
default uses the whitespace tokenizer (the WMT'14 files of the papers come tokenized); the
Moses tokenizer (pure-Python regular expressions) is then the slow step, so measure it on fewer
pairs: ``--tokenizer moses --pairs 100000``.

What it measured is in ``BENCHMARKS.md``, section "Preparing a paper-scale corpus".
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _words(rng: np.random.Generator, prefix: str, vocab: int) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out = []
    for i in range(vocab):
        n = 2 + i % 9
        out.append(prefix + "".join(rng.choice(letters, n)))
    return np.array(out)


def write_corpus(folder: Path, pairs: int, seed: int = 0, vocab: int = 50_000) -> None:
    """Synthetic ``{train,dev,test}.{en,fr}`` under ``folder``; written in chunks (low memory)."""
    rng = np.random.default_rng(seed)
    words = {"en": _words(rng, "", vocab), "fr": _words(rng, "", vocab)}
    ranks = 1.0 / np.arange(1, vocab + 1) ** 1.1
    probs = ranks / ranks.sum()
    for split, n in (("train", pairs), ("dev", 3000), ("test", 3000)):
        files = {lang: open(folder / f"{split}.{lang}", "w", encoding="utf-8") for lang in words}
        try:
            for start in range(0, n, 20_000):
                m = min(20_000, n - start)
                lens = rng.integers(5, 61, size=m)
                for lang, f in files.items():
                    ids = rng.choice(vocab, size=int(lens.sum()), p=probs)
                    toks = words[lang][ids]
                    bounds = np.concatenate([[0], np.cumsum(lens)])
                    f.write(
                        "".join(
                            " ".join(toks[bounds[i] : bounds[i + 1]]) + " .\n" for i in range(m)
                        )
                    )
        finally:
            for f in files.values():
                f.close()


def _run_prepare(folder: str, tokenizer: str) -> None:
    """Body of the measured child process: prints one JSON line."""
    from ..cache import ArtifactCache
    from ..corpus.dataset import CorpusConfig, prepare_corpus

    start = time.perf_counter()
    cfg = CorpusConfig(
        corpus="files", corpus_dir=folder, tokenizer=tokenizer, src_vocab=30_000, tgt_vocab=30_000
    )
    corpus = prepare_corpus(cfg, ArtifactCache(Path(folder) / "cache"))
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "seconds": round(seconds, 1),
                "peak_mb": round(peak_mb, 1),
                "train_pairs": len(corpus.train),
                "train_tokens": int(
                    corpus.stats.loc[("train", "src"), "tokens"]
                    + corpus.stats.loc[("train", "tgt"), "tokens"]
                ),
                "test_unk_rate_tgt": float(corpus.stats.loc[("test", "tgt"), "unk_rate"]),
            }
        )
    )


def run(pairs: int, tokenizer: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="rnnlib-bench-") as tmp:
        t0 = time.perf_counter()
        write_corpus(Path(tmp), pairs)
        gen = time.perf_counter() - t0
        done = subprocess.run(
            [sys.executable, "-m", "rnnlib.bench.corpus", "--child", tmp, "--tokenizer", tokenizer],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result.update({"pairs": pairs, "tokenizer": tokenizer, "generate_seconds": round(gen, 1)})
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--tokenizer", choices=("whitespace", "moses"), default="whitespace")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _run_prepare(args.child, args.tokenizer)
        return 0
    r = run(args.pairs, args.tokenizer)
    print(
        f"{r['pairs']:,} pairs ({r['train_tokens']:,} training tokens), "
        f"tokenizer={r['tokenizer']}: "
        f"prepared in {r['seconds']} s, peak memory {r['peak_mb']:.0f} MB "
        f"({'under' if r['peak_mb'] < 2048 else 'OVER'} the 2 GB goal)"
    )
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
