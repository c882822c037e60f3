"""Decoding speed of the phrase-based baseline (sentences and source words per second).

Use from Python with a built :class:`~rnnlib.smt.decoder.Decoder`::

    stats = measure(decoder, test_sentences)

or from the shell, on the artifacts of :mod:`rnnlib.smt.system`::

    rnnlib smt-bench --phrase-table .../phrase_table.npz --lm .../lm.arpa \
        --weights .../weights.json --source test.tok.en [--workers 2] [--stack-size 50]

``test.tok.en`` holds one tokenized sentence per line. With ``--against-python`` it decodes the
sentences with the compiled search (:mod:`rnnlib.smt.compiled`, the default) and with the plain
Python one, alternately in one process (ABBA rounds, one worker), and prints both and their
ratio, after checking that their n-best lists are identical. With ``--scales 1,10,100`` it
decodes them with the weights scaled to unit L1 norm over the tuned ones (as MERT leaves them,
:func:`rnnlib.smt.tune.unit_scale`) and then multiplied by each factor, in ABBA rounds, and
prints each scale's seconds and how many 1-best translations score below those of scale 1 under
the same weights: the beam threshold is a fixed log distance, so larger weights prune more.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Sequence

from ..smt.decoder import Decoder, DecoderConfig


def measure(decoder: Decoder, sentences: Sequence[Sequence[str]]) -> dict:
    """Decode ``sentences`` once (1-best) and time it. Returns a JSON-able dict."""
    start = time.perf_counter()
    cpu0 = os.times()
    out = decoder.translate_corpus(sentences, 1)
    seconds = time.perf_counter() - start
    cpu1 = os.times()
    words = sum(len(s) for s in sentences)
    return {
        "sentences": len(sentences),
        "source_words": words,
        "seconds": seconds,
        "sentences_per_s": len(sentences) / max(seconds, 1e-9),
        "words_per_s": words / max(seconds, 1e-9),
        "workers": decoder.config.workers,
        "stack_size": decoder.config.stack_size,
        "ttable_limit": decoder.config.ttable_limit,
        "distortion_limit": decoder.config.distortion_limit,
        "parent_cpu_s": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system),
        "children_cpu_s": (cpu1.children_user - cpu0.children_user)
        + (cpu1.children_system - cpu0.children_system),
        "output_words": sum(len(o[0].words) for o in out),
        "load_average_1min": os.getloadavg()[0],
    }


def against_python(
    decoder: Decoder, sentences: Sequence[Sequence[str]], rounds: int = 2, nbest: int = 1
) -> dict:
    """Seconds to decode ``sentences`` (``nbest``-best, one worker) with the compiled search and
    with :mod:`rnnlib.smt.stack_search`, in ``rounds`` ABBA rounds in this process; both
    implementations' totals, the ratio of the totals and the median of the rounds' ratios (the
    plain one's time over the compiled one's). Raises if their n-best lists differ."""
    from ..smt import stack_search
    from ..smt.compiled import search_module

    compiled = search_module()
    if compiled is stack_search:
        raise RuntimeError("the compiled search is not available here (see the warning above)")
    modules = {"compiled": compiled, "python": stack_search}
    workers, decoder.config.workers = decoder.config.workers, 1
    seconds = {"compiled": [], "python": []}
    outputs = {}
    try:
        for r in range(rounds):
            for name in list(modules) if r % 2 == 0 else list(modules)[::-1]:
                decoder.use_search(modules[name])
                start = time.perf_counter()
                out = decoder.translate_corpus(sentences, nbest)
                seconds[name].append(time.perf_counter() - start)
                outputs.setdefault(
                    name, [[(t.words, t.features.tolist(), t.score) for t in lst] for lst in out]
                )
    finally:
        decoder.use_search(compiled)
        decoder.config.workers = workers
    same = outputs["compiled"] == outputs["python"]
    if not same:
        raise RuntimeError("the compiled and the plain search gave different n-best lists")
    ratios = [p / c for p, c in zip(seconds["python"], seconds["compiled"])]
    return {
        "sentences": len(sentences),
        "nbest": nbest,
        "rounds": rounds,
        "identical_output": same,
        "compiled_s": seconds["compiled"],
        "python_s": seconds["python"],
        "compiled_sentences_per_s": len(sentences) * rounds / sum(seconds["compiled"]),
        "python_sentences_per_s": len(sentences) * rounds / sum(seconds["python"]),
        "speedup_total": sum(seconds["python"]) / sum(seconds["compiled"]),
        "speedup_median_round": statistics.median(ratios),
        "load_average_1min": os.getloadavg()[0],
    }


def scales(
    decoder: Decoder, sentences: Sequence[Sequence[str]], factors: Sequence[float], rounds: int = 2
) -> dict:
    """Seconds to decode ``sentences`` (1-best, one worker) with the decoder's weights scaled to
    unit L1 norm over the tuned ones and multiplied by each of ``factors`` (``rounds`` rounds, the
    order reversed every other round), and, per factor, the 1-best model scores ``w . h``
    under the unit-scaled weights against those of the smallest factor: how many sentences score
    lower (a search error the loosest pruning avoids) or higher, and the mean difference."""
    import numpy as np

    from ..smt.tune import unit_scale

    factors = sorted(float(f) for f in factors)
    if not factors or factors[0] <= 0:
        raise ValueError(f"scales: factors must be > 0, got {factors}")
    free = ~np.asarray(decoder.fixed, dtype=bool)
    unit = unit_scale(np.asarray(decoder.weights, dtype=np.float64), free)
    workers, decoder.config.workers = decoder.config.workers, 1
    seconds: dict[float, list[float]] = {f: [] for f in factors}
    model: dict[float, np.ndarray] = {}
    try:
        decoder.translate_corpus(sentences[:2], 1)  # the weight-independent caches, once
        for r in range(rounds):
            for f in factors if r % 2 == 0 else factors[::-1]:
                decoder.set_weights(unit * f)
                start = time.perf_counter()
                out = decoder.translate_corpus(sentences, 1)
                seconds[f].append(time.perf_counter() - start)
                model[f] = np.array([float(lst[0].features @ unit) for lst in out])
    finally:
        decoder.set_weights(unit)
        decoder.config.workers = workers
    base = model[factors[0]]
    rows = []
    for f in factors:
        d = model[f] - base
        rows.append(
            {
                "factor": f,
                "seconds": sum(seconds[f]) / rounds,
                "lower_model_score": int((d < -1e-9).sum()),
                "higher_model_score": int((d > 1e-9).sum()),
                "mean_difference": float(d.mean()),
            }
        )
    return {
        "sentences": len(sentences),
        "rounds": rounds,
        "stack_size": decoder.config.stack_size,
        "beam_threshold": decoder.config.beam_threshold,
        "scales": rows,
        "load_average_1min": os.getloadavg()[0],
    }


def build_decoder(
    phrase_table: Path, lm: Path, weights: Path | None, sentences, config: DecoderConfig
) -> Decoder:
    """A decoder over ``phrase_table`` filtered to the phrases of ``sentences``."""
    from ..smt.lm import load_kenlm
    from ..smt.phrases import PhraseTable

    pt = PhraseTable.load(phrase_table)
    wanted = {
        tuple(s[i:j])
        for s in sentences
        for i in range(len(s))
        for j in range(i + 1, min(len(s), i + config.max_phrase_len) + 1)
    }
    dec = Decoder(pt.lookup(sources=wanted), load_kenlm(lm), config=config)
    if weights is not None:
        named = json.loads(Path(weights).read_text())["weights"]
        # a weight MERT does not tune (the unknown-word penalty) may be absent from older files
        fixed = {dec.feature_names[k]: float(v) for k, v in enumerate(dec.weights) if dec.fixed[k]}
        missing = [n for n in dec.feature_names if n not in named and n not in fixed]
        if missing:
            raise ValueError(f"{weights}: no weight for feature(s) {missing}")
        dec.set_weights([named.get(n, fixed.get(n)) for n in dec.feature_names])
    return dec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rnnlib smt-bench", description=__doc__.splitlines()[0])
    p.add_argument("--phrase-table", type=Path, required=True)
    p.add_argument("--lm", type=Path, required=True)
    p.add_argument(
        "--weights",
        type=Path,
        default=None,
        help="weights.json of smt/tuned (default: Moses' start)",
    )
    p.add_argument("--source", type=Path, required=True, help="one tokenized sentence per line")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--stack-size", type=int, default=DecoderConfig.stack_size)
    p.add_argument("--ttable-limit", type=int, default=DecoderConfig.ttable_limit)
    p.add_argument("--distortion-limit", type=int, default=DecoderConfig.distortion_limit)
    p.add_argument("--limit", type=int, default=None, help="first N sentences only")
    p.add_argument(
        "--against-python",
        action="store_true",
        help="compare the compiled search with the plain Python one (ABBA rounds, one worker)",
    )
    p.add_argument("--rounds", type=int, default=4, help="with --against-python: ABBA rounds")
    p.add_argument("--nbest", type=int, default=1, help="with --against-python: n-best size")
    p.add_argument(
        "--scales",
        default=None,
        help="comma-separated factors (e.g. 1,10,100): decode with the unit-scaled weights "
        "times each, and count the search errors of each against the smallest",
    )
    args = p.parse_args(argv)
    if args.rounds < 1 or args.nbest < 1:
        p.error("--rounds and --nbest must be >= 1")
    factors = None
    if args.scales is not None:
        try:
            factors = [float(x) for x in args.scales.split(",") if x.strip()]
        except ValueError:
            p.error(f"--scales: comma-separated numbers, got {args.scales!r}")
        if not factors or min(factors) <= 0:
            p.error(f"--scales: factors must be > 0, got {args.scales!r}")
    given = {"--phrase-table": args.phrase_table, "--lm": args.lm, "--source": args.source}
    given["--weights"] = args.weights
    missing = [f"{flag} {path}" for flag, path in given.items() if path and not path.exists()]
    if missing:
        p.error(f"no such file: {'; '.join(missing)}")
    sents = [line.split() for line in args.source.read_text(encoding="utf-8").splitlines()][
        : args.limit
    ]
    cfg = DecoderConfig(
        stack_size=args.stack_size,
        ttable_limit=args.ttable_limit,
        distortion_limit=args.distortion_limit,
        workers=args.workers,
    )
    dec = build_decoder(args.phrase_table, args.lm, args.weights, sents, cfg)
    if args.against_python:
        print(json.dumps(against_python(dec, sents, args.rounds, args.nbest), indent=2))
    elif factors is not None:
        print(json.dumps(scales(dec, sents, factors, args.rounds), indent=2))
    else:
        print(json.dumps(measure(dec, sents), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
