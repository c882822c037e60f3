"""Word alignment for the phrase-based baseline: eflomal both ways, then grow-diag-final-and.

The baseline of Cho et al. (2014, Sec. 5.1, "Moses with default settings") aligns the bitext
with GIZA++ in both directions and symmetrises the two one-to-many alignments with the
*grow-diag-final-and* heuristic (Koehn et al. 2003; Koehn 2010, Sec. 4.5.3). We use eflomal
(Östling & Tiedemann 2016), an MCMC aligner with the same HMM+fertility model family, which
gives both directions in one run.

Alignments are lists of ``(i, j)`` links, ``i`` a source position and ``j`` a target position
(0-based), one list per sentence pair.

Deviations
----------
* eflomal instead of GIZA++ (faster; the alignment model family is the same).
* eflomal's sampler takes no seed, so two runs give slightly different links. The pipeline
  stores the links as an artifact, so every later stage is reproducible from that artifact.
* eflomal lowercases tokens for alignment (its default); the phrase table keeps the case.
"""

from __future__ import annotations

import os
import tempfile
from typing import Sequence

Links = list[tuple[int, int]]


def eflomal_align(
    src: Sequence[Sequence[str]],
    tgt: Sequence[Sequence[str]],
    *,
    model: int = 3,
    rel_iterations: float = 1.0,
    n_samplers: int = 2,
    null_prior: float = 0.2,
) -> tuple[list[Links], list[Links]]:
    """Align ``src[k]`` with ``tgt[k]`` in both directions with eflomal.

    Returns ``(forward, reverse)``: two lists (one entry per pair) of ``(i, j)`` links with
    ``i`` indexing ``src[k]`` and ``j`` indexing ``tgt[k]``. Forward links give each target
    word at most one source word; reverse links give each source word at most one target word.
    Pairs with an empty side get no links.
    """
    from eflomal import Aligner

    if len(src) != len(tgt):
        raise ValueError(
            f"eflomal_align: {len(src)} source sentences but {len(tgt)} target sentences"
        )
    keep = [k for k in range(len(src)) if len(src[k]) and len(tgt[k])]
    fwd: list[Links] = [[] for _ in src]
    rev: list[Links] = [[] for _ in src]
    if not keep:
        return fwd, rev
    aligner = Aligner(
        model=model, rel_iterations=rel_iterations, n_samplers=n_samplers, null_prior=null_prior
    )
    with tempfile.TemporaryDirectory(prefix="rnnlib-eflomal-") as tmp:
        f_path, r_path = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        aligner.align(
            [" ".join(src[k]) for k in keep],
            [" ".join(tgt[k]) for k in keep],
            links_filename_fwd=f_path,
            links_filename_rev=r_path,
            quiet=True,
        )
        for path, out in ((f_path, fwd), (r_path, rev)):
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            for n, k in enumerate(keep):
                out[k] = parse_links(lines[n], len(src[k]), len(tgt[k]), where=f"{path}:{n + 1}")
    return fwd, rev


def parse_links(
    line: str, src_len: int | None = None, tgt_len: int | None = None, where: str = "links"
) -> Links:
    """``"0-0 1-2"`` -> ``[(0, 0), (1, 2)]``, checking bounds when lengths are given."""
    links = []
    for item in line.split():
        i, _, j = item.partition("-")
        try:
            a, b = int(i), int(j)
        except ValueError:
            raise ValueError(f"{where}: bad link {item!r} (expected 'i-j')") from None
        if (src_len is not None and not 0 <= a < src_len) or (
            tgt_len is not None and not 0 <= b < tgt_len
        ):
            raise ValueError(f"{where}: link {item!r} outside a {src_len}x{tgt_len} sentence pair")
        links.append((a, b))
    return links


def format_links(links: Links) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def grow_diag_final_and(fwd: Links, rev: Links, src_len: int, tgt_len: int) -> Links:
    """Symmetrise two directional alignments (Koehn 2010, Fig. 4.11, with the "and" final step).

    Start from the intersection; repeatedly add union links that neighbour (also diagonally)
    an accepted link and whose source *or* target word is still unaligned; finally add union
    links whose source *and* target words are both still unaligned (forward links first,
    then reverse). Returns the sorted link list.
    """
    f, r = set(fwd), set(rev)
    union = f | r
    align = f & r
    src_done = [False] * src_len
    tgt_done = [False] * tgt_len
    for i, j in align:
        src_done[i] = tgt_done[j] = True
    grew = True
    while grew:
        grew = False
        for i, j in sorted(align):
            for di, dj in _NEIGHBOURS:
                a, b = i + di, j + dj
                if (a, b) in union and (a, b) not in align and (not src_done[a] or not tgt_done[b]):
                    align.add((a, b))
                    src_done[a] = tgt_done[b] = True
                    grew = True
    for links in (fwd, rev):  # final-and
        for a, b in sorted(links):
            if not src_done[a] and not tgt_done[b]:
                align.add((a, b))
                src_done[a] = tgt_done[b] = True
    return sorted(align)


def symmetrise(
    src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], fwd: list[Links], rev: list[Links]
) -> list[Links]:
    """grow-diag-final-and for every sentence pair."""
    return [grow_diag_final_and(f, r, len(s), len(t)) for s, t, f, r in zip(src, tgt, fwd, rev)]


def align(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], **eflomal_kw) -> list[Links]:
    """eflomal in both directions + grow-diag-final-and: one link list per sentence pair."""
    fwd, rev = eflomal_align(src, tgt, **eflomal_kw)
    return symmetrise(src, tgt, fwd, rev)


__all__ = [
    "align",
    "eflomal_align",
    "format_links",
    "grow_diag_final_and",
    "parse_links",
    "symmetrise",
]
