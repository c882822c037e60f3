"""The per-sentence material the simulations resample: two "systems" scored sentence by sentence,
the sentences' Bible chapters and their source lengths.

A :class:`Pool` holds, for ``N`` test sentences, sacreBLEU's sufficient statistics of two
systems ``x`` and ``y`` against one reference (``(N, 10)`` each), the chapter each sentence
belongs to (``blocks (N,)``) and its source length in tokens (``lengths (N,)``). A simulated
test set draws whole chapters of the pool with replacement (:func:`draw_test`), so the
dependence of a chapter's verses stays in every test set, and the simulations make two systems
of equal or known quality out of ``x`` and ``y`` (:mod:`rnnlib.calibration.rules`).

Two sources:

* :func:`pool_from_prepared` -- the book's own Bible: the test split of a prepared corpus
  (:mod:`rnnlib.corpus`) holds, beside the reference (``test.tgt.txt``), the same verses in two
  further French versions (``test.ref1.txt``, ``test.ref2.txt``): two human translations of
  every verse, scored against the reference, are two translation systems with the Bible's own
  chapter structure, vocabulary and lengths (their BLEU against the reference is about 40 and
  48, above the book's systems: the shape of the statistics, not their level, is what is used).
* :func:`synthetic_pool` -- a small deterministic generator for the tests: chapters of varying
  size, each with its own length and its own quality shared by both systems (a chapter effect),
  n-gram matches drawn binomially from it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..resampling import chapter_blocks
from .fast_bleu import ORDER, corpus_bleu, counts_of, resample_counts


@dataclass(frozen=True)
class Pool:
    """``x``, ``y``: ``(N, 10)`` sacreBLEU statistics of two systems per sentence; ``blocks``:
    ``(N,)`` chapter ids 0..B-1; ``lengths``: ``(N,)`` source tokens; ``source``: in words."""

    x: np.ndarray
    y: np.ndarray
    blocks: np.ndarray
    lengths: np.ndarray
    source: str

    def __post_init__(self) -> None:
        n = len(self.blocks)
        if self.x.shape != (n, 2 + 2 * ORDER) or self.y.shape != self.x.shape:
            raise ValueError(f"Pool: statistics {self.x.shape}, {self.y.shape} for {n} sentences")
        if self.lengths.shape != (n,):
            raise ValueError(f"Pool: {self.lengths.shape} lengths for {n} sentences")

    @property
    def members(self) -> list[np.ndarray]:
        """The sentence indices of each chapter."""
        return [np.flatnonzero(self.blocks == b) for b in range(int(self.blocks.max()) + 1)]

    def checksum(self) -> str:
        """16 hex digits of the pool's numbers (the data an artifact computed from it read)."""
        h = hashlib.sha256()
        for a in (self.x, self.y, self.blocks, self.lengths):
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        return h.hexdigest()[:16]

    def bleu(self) -> tuple[float, float]:
        """Corpus BLEU of ``x`` and of ``y`` over the whole pool."""
        return float(corpus_bleu(self.x.sum(0))), float(corpus_bleu(self.y.sum(0)))


def pool_from_prepared(folder: Path) -> Pool:
    """The test split of a prepared Bible corpus (``folder``: a ``corpus/prepared`` artifact):
    ``x`` the version of ``test.ref1.txt``, ``y`` that of ``test.ref2.txt``, both scored against
    ``test.tgt.txt``; chapters from ``test.keys.npy``; lengths from ``test.src.tok``."""
    from .. import bleu

    folder = Path(folder)
    read = lambda name: (folder / name).read_text(encoding="utf-8").splitlines()  # noqa: E731
    refs, one, two = read("test.tgt.txt"), read("test.ref1.txt"), read("test.ref2.txt")
    _, x = bleu.sufficient_stats(one, refs)
    _, y = bleu.sufficient_stats(two, refs)
    lengths = np.array([len(line.split()) for line in read("test.src.tok")])
    blocks = chapter_blocks(np.load(folder / "test.keys.npy"))
    what = f"the {len(refs)} test verses of the prepared Bible, two further French versions"
    return Pool(x, y, blocks, lengths, what)


def synthetic_pool(n_chapters: int = 50, mean_size: int = 30, seed: int = 0) -> Pool:
    """A deterministic pool of about ``n_chapters * mean_size`` sentences in ``n_chapters``
    chapters: each chapter draws a mean source length and a quality (the chance that an n-gram
    matches, on the logit scale, normal around about 25 BLEU) shared by both systems, ``y`` a
    little behind ``x``; each sentence adds its own noise, and its matches are binomial."""
    rng = np.random.default_rng(seed)
    sizes = np.maximum(3, rng.poisson(mean_size, n_chapters))
    blocks = np.repeat(np.arange(n_chapters), sizes)
    chapter_len = rng.uniform(15, 40, n_chapters)
    chapter_q = rng.normal(0.3, 0.35, n_chapters)
    n = len(blocks)
    lengths = np.maximum(2, rng.poisson(chapter_len[blocks]))
    ref_len = np.maximum(2, rng.poisson(1.1 * lengths))

    def system(shift: float) -> np.ndarray:
        sys_len = np.maximum(1, np.round(ref_len * rng.normal(0.97, 0.12, n))).astype(int)
        quality = chapter_q[blocks] + shift + rng.normal(0, 0.5, n)
        out = np.zeros((n, 2 + 2 * ORDER))
        out[:, 0], out[:, 1] = sys_len, ref_len
        for k in range(ORDER):
            total = np.maximum(sys_len - k, 0)
            p = 1 / (1 + np.exp(-(quality - 1.1 * k)))
            out[:, 2 + k] = rng.binomial(total, p)
            out[:, 2 + ORDER + k] = total
        return out

    x, y = system(0.0), system(-0.1)
    return Pool(
        x, y, blocks, lengths.astype(float), f"synthetic, {n_chapters} chapters (seed {seed})"
    )


@dataclass
class Draw:
    """One simulated test set: ``idx (n,)`` rows of the pool; ``unit (n,)`` the unit two systems
    are exchanged by (a drawn chapter, or each sentence: see :func:`draw_test`); ``counts
    (R, n)``: the multiplicities of the sentence bootstrap's ``R`` resamples (the book's)."""

    idx: np.ndarray
    unit: np.ndarray
    chapter: np.ndarray
    counts: np.ndarray
    by: str = "chapter"
    key: tuple = ()
    memo: dict = field(default_factory=dict)

    @property
    def block_counts(self) -> np.ndarray:
        """``(R, n)``: the multiplicities of the block bootstrap's resamples (whole drawn
        chapters drawn with replacement, as many as there are; drawn once per test set)."""
        if "blocks" not in self.memo:
            m, r = int(self.chapter.max()) + 1, self.counts.shape[0]
            picks = np.random.default_rng([*self.key, 101]).integers(0, m, (r, m), dtype=np.int32)
            self.memo["blocks"] = counts_of(picks, m)[:, self.chapter]
        return self.memo["blocks"]

    @property
    def n_blocks(self) -> int:
        """The number of blocks :attr:`block_counts` resamples: the drawn chapters."""
        return int(self.chapter.max()) + 1

    def stratum_counts(self, sizes: tuple[int, ...]) -> list[np.ndarray]:
        """Per stratum of ``sizes`` sentences, ``(R, size)`` multiplicities of a bootstrap that
        resamples within each stratum (drawn once per test set and sizes)."""
        key = ("strata", tuple(int(s) for s in sizes))
        if key not in self.memo:
            r, rng = self.counts.shape[0], np.random.default_rng([*self.key, 102, *key[1]])
            self.memo[key] = [resample_counts(s, r, rng) for s in key[1]]
        return self.memo[key]


def draw_test(pool: Pool, n_target: int, n_boot: int, seed, by: str = "chapter") -> Draw:
    """A test set of about ``n_target`` sentences: ``round(n_target / mean chapter size)`` whole
    chapters of the pool drawn with replacement (each drawn copy its own chapter), and the
    counts of ``n_boot`` sentence-bootstrap resamples of it, from ``default_rng(seed)``
    (``seed``: a list of ints; the lazily drawn resamples of :class:`Draw` extend it). ``by``:
    ``"chapter"`` -- the unit by which simulated systems differ is the drawn chapter (their
    differences are as dependent within a chapter as they can be); ``"sentence"`` -- each
    sentence (independent)."""
    rng = np.random.default_rng(seed)
    if by not in ("chapter", "sentence"):
        raise ValueError(f"draw_test: by is 'chapter' or 'sentence', not {by!r}")
    members = pool.members
    m = max(2, int(round(n_target * len(members) / len(pool.blocks))))
    picked = rng.integers(0, len(members), m)
    idx = np.concatenate([members[b] for b in picked])
    chapter = np.repeat(np.arange(m), [len(members[b]) for b in picked])
    unit = chapter if by == "chapter" else np.arange(len(idx))
    counts = resample_counts(len(idx), n_boot, rng)
    return Draw(idx, unit, chapter, counts, by, tuple(np.atleast_1d(seed).tolist()))


__all__ = ["Draw", "Pool", "draw_test", "pool_from_prepared", "synthetic_pool"]
