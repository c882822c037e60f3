"""t-SNE maps of word embeddings and phrase codes (Cho et al. 2014, Figs. 4--7).

* :func:`tsne_artifact` -- a 2-D Barnes--Hut t-SNE (scikit-learn) as a cache artifact, keyed by
  the perplexity, iterations, seed and a checksum of the vectors (:func:`array_checksum`), so
  that what a figure shows can change without recomputing it; :func:`tsne_coords` reads it
  back; :func:`map_perplexity` lowers the perplexity for a map of few points;
* :func:`dense_region` -- the box around the densest group of a category on the map, and
  :func:`enlarged_regions` -- the boxes a chapter parameter asks for (A's enlarged regions,
  chosen by code instead of by hand);
* :func:`map_figure` -- the whole map coloured by category (seaborn, the category as hue) and
  one enlarged, labelled panel per region; :func:`note_figure` stands in for a map with too
  few points to draw.

Deviations
----------
- A's t-SNE settings are not printed: perplexity, iterations and seed are parameters, with
  scikit-learn's Barnes--Hut t-SNE and PCA initialisation.
- A chooses its enlarged regions by hand; :func:`enlarged_regions` chooses the densest group of
  a category.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ...cache import Artifact, ArtifactCache

#: the fewest points :func:`tsne_artifact` maps
MIN_MAP_POINTS = 5
#: the colour of unlabelled points (and the legend's name for them)
UNLABELLED = "unlabelled"
GREY = (0.75, 0.75, 0.75)


def array_checksum(X: np.ndarray) -> str:
    """sha256 of an array's shape, dtype and bytes."""
    X = np.ascontiguousarray(X)
    h = hashlib.sha256(f"{X.shape}{X.dtype}".encode())
    h.update(X.tobytes())
    return h.hexdigest()


def tsne_artifact(
    cache: ArtifactCache,
    kind: str,
    X: np.ndarray,
    perplexity: float = 30.0,
    iterations: int = 1000,
    seed: int = 0,
    config: dict | None = None,
) -> Artifact:
    """A 2-D Barnes--Hut t-SNE of ``X (N, d)`` (scikit-learn, PCA initialisation) as the
    artifact ``kind``: ``coords.npy (N, 2) float32``. Its key holds ``perplexity``,
    ``iterations``, ``seed``, ``config`` (what ``X`` is, e.g. the model's key) and the checksum
    of ``X``; reading it back (:func:`tsne_coords`) never recomputes."""
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or len(X) < 5:
        raise ValueError(f"tsne_artifact: X must be (N >= 5, d), got {X.shape}")
    if not 0 < perplexity < len(X):
        raise ValueError(
            f"tsne_artifact: perplexity={perplexity} must be in (0, {len(X)}) for {len(X)} points"
        )
    full = {
        **(config or {}),
        "perplexity": float(perplexity),
        "iterations": int(iterations),
        "seed": int(seed),
        "method": "barnes_hut",
        "init": "pca",
        "points": int(len(X)),
    }

    def make(out: Path, work: Path) -> dict:
        import time
        from sklearn.manifold import TSNE

        t = time.perf_counter()
        tsne = TSNE(
            n_components=2,
            perplexity=perplexity,
            max_iter=iterations,
            random_state=seed,
            method="barnes_hut",
            init="pca",
            learning_rate="auto",
        )
        coords = tsne.fit_transform(X)
        np.save(out / "coords.npy", coords.astype(np.float32))
        return {"seconds": time.perf_counter() - t, "kl_divergence": float(tsne.kl_divergence_)}

    return cache.build(kind, full, make, data=array_checksum(X))


def tsne_coords(art: Artifact) -> np.ndarray:
    """``(N, 2) float32``: the coordinates of a :func:`tsne_artifact`."""
    return np.load(art.file("coords.npy"))


def map_perplexity(perplexity: float, points: int) -> float:
    """``perplexity``, lowered to ``(points - 1) / 3`` for a map of few points (t-SNE needs a
    perplexity well below the number of points; scikit-learn looks at ``3 * perplexity``
    neighbours)."""
    return min(float(perplexity), (points - 1) / 3)


def map_tsne(
    cache: ArtifactCache, X: np.ndarray, perplexity: float, iterations: int, seed: int, **config
) -> Artifact | None:
    """The ``representations/tsne`` artifact of ``X (N, d)`` (:func:`tsne_artifact`, the
    perplexity lowered for a small map by :func:`map_perplexity`), ``config`` saying what ``X``
    is; ``None``: fewer than :data:`MIN_MAP_POINTS` points."""
    if len(X) < MIN_MAP_POINTS:
        return None
    return tsne_artifact(
        cache, "representations/tsne", X, map_perplexity(perplexity, len(X)), iterations, seed,
        config=config,
    )  # fmt: skip


def note_figure(text: str, figsize: tuple = (6, 1.6)):
    """A figure that only says ``text``: what stands in for a map that cannot be drawn, so the
    page says why instead of missing the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=10)
    ax.set_axis_off()
    return fig


def not_drawn(what: str, points: int):
    """The :func:`note_figure` of a map of ``points`` ``what`` (fewer than
    :data:`MIN_MAP_POINTS`)."""
    return note_figure(f"Not drawn: {points} {what}; a t-SNE map needs at least {MIN_MAP_POINTS}.")


# -- regions --------------------------------------------------------------------------------------
def dense_region(
    coords: np.ndarray, members: np.ndarray, size: int = 30, pad: float = 0.05
) -> tuple:
    """The box ``(x0, x1, y0, y1)`` around the densest group of ``members`` (a boolean mask over
    ``coords (N, 2)``): of every member's ``size`` nearest points on the map, the group with the
    largest share of members (ties: the tightest), padded by ``pad`` of its width and height."""
    members = np.asarray(members, dtype=bool)
    if not members.any():
        raise ValueError("dense_region: no point of the category is on the map")
    from sklearn.neighbors import NearestNeighbors

    size = min(size, len(coords))
    nn = NearestNeighbors(n_neighbors=size).fit(coords)
    dist, idx = nn.kneighbors(coords[members])
    share = members[idx].mean(1)
    best = np.lexsort((dist[:, -1], -share))[0]
    pts = coords[idx[best]]
    (x0, y0), (x1, y1) = pts.min(0), pts.max(0)
    dx, dy = (x1 - x0) * pad + 1e-6, (y1 - y0) * pad + 1e-6
    return (float(x0 - dx), float(x1 + dx), float(y0 - dy), float(y1 + dy))


def enlarged_regions(
    coords: np.ndarray,
    categories: Sequence[str | None],
    wanted: str,
    patterns: Sequence[str] | None = None,
    size: int = 30,
) -> tuple[list[tuple[str, tuple]], list[str]]:
    """The regions ``wanted`` asks for (category names, comma-separated; ``"pattern"``: the
    commonest of ``patterns``) as ``(name, box)`` pairs, each the :func:`dense_region` of
    ``size`` points of that category on the map ``coords (N, 2)``, and the categories asked for
    that no point of the map belongs to (no region is drawn for them)."""
    out, missing = [], []
    for name in [w.strip() for w in wanted.split(",") if w.strip()]:
        if name == "pattern" and patterns is not None and len(patterns):
            name = pd.Series(patterns).value_counts().index[0]  # the commonest pattern
            members = np.array([p == name for p in patterns])
            name = f"pattern {name}"
        else:
            members = np.array([c == name for c in categories], dtype=bool)
        if members.any():
            out.append((name, dense_region(coords, members, size=size)))
        else:
            missing.append(name)
    return out, missing


# -- the figure -----------------------------------------------------------------------------------
def category_palette(order: Sequence[str]) -> dict[str, tuple]:
    """``category -> colour``: the book's palette for the categories of ``order``, in order, and
    grey for :data:`UNLABELLED`."""
    import seaborn as sns

    from ...book import style

    colours = sns.color_palette(style.PALETTE, 10)
    return {**{c: colours[i % 10] for i, c in enumerate(order)}, UNLABELLED: GREY}


def _view(coords: np.ndarray, regions: Sequence[tuple[str, tuple]]) -> tuple:
    """The limits of the whole map: the 0.5--99.5 percentiles (a few far outliers go), widened
    to hold every region, with a margin of 5%."""
    lo, hi = np.percentile(coords, 0.5, axis=0), np.percentile(coords, 99.5, axis=0)
    for _, (x0, x1, y0, y1) in regions:  # must not shrink the map
        lo, hi = np.minimum(lo, [x0, y0]), np.maximum(hi, [x1, y1])
    margin = (hi - lo) * 0.05 + 1e-6
    return (lo[0] - margin[0], hi[0] + margin[0]), (lo[1] - margin[1], hi[1] + margin[1])


def map_figure(
    coords: np.ndarray,
    texts: Sequence[str],
    categories: Sequence[str | None],
    order: Sequence[str],
    regions: Sequence[tuple[str, tuple]],
    max_labels: int = 40,
    title: str = "",
    point_size: float = 3.0,
):
    """The whole map and one enlarged panel per region (A Figs. 4--7).

    ``coords (N, 2)``; ``texts``: the label of each point (word or phrase); ``categories``: the
    category of each point, the hue of the seaborn scatter (``None``: grey, "unlabelled");
    ``order``: the categories in the legend; ``regions``: ``(name, (x0, x1, y0, y1))`` boxes,
    drawn on the whole map and enlarged with up to ``max_labels`` points labelled (a seeded
    random choice when more are inside). One region gives a 1 x 2 figure (Fig. 4), more a 2 x 2.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    palette = category_palette(order)
    hue = [c if c in palette else UNLABELLED for c in categories]
    frame = pd.DataFrame({"x": coords[:, 0], "y": coords[:, 1], "category": hue})
    n = 1 + len(regions)
    rows, cols = (1, n) if n <= 2 else (2, 2) if n <= 4 else (int(np.ceil(n / 3)), 3)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 5.5 * rows), squeeze=False)
    axes = axes.ravel()
    ax = axes[0]
    shown_order = [c for c in [*order, UNLABELLED] if c in set(hue)]
    sns.scatterplot(
        frame, x="x", y="y", hue="category", hue_order=shown_order, palette=palette,
        s=point_size * 3, linewidth=0, ax=ax,
    )  # fmt: skip
    for k, (name, (x0, x1, y0, y1)) in enumerate(regions):
        ax.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.2, ec="black"))
        ax.annotate(str(k + 1), (x1, y1), fontsize=9, fontweight="bold")
    xlim, ylim = _view(coords, regions)
    ax.set(xlim=xlim, ylim=ylim, xticks=[], yticks=[], xlabel="", ylabel="")
    ax.set_title(title or f"all {len(coords)} points")
    ax.legend(fontsize=7, loc="best", markerscale=1.2, title=None)
    for k, (name, box) in enumerate(regions):
        _enlarged_panel(axes[k + 1], k, name, box, frame, texts, palette, max_labels)
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def _enlarged_panel(ax, k: int, name: str, box: tuple, frame, texts, palette, max_labels: int):
    """Region ``k + 1`` of :func:`map_figure`: its points, up to ``max_labels`` of them labelled
    in their category's colour (unlabelled points' labels in dark grey)."""
    import seaborn as sns

    x0, x1, y0, y1 = box
    x, y = frame["x"].to_numpy(), frame["y"].to_numpy()
    inside = np.flatnonzero((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1))
    sns.scatterplot(
        frame.iloc[inside], x="x", y="y", hue="category", palette=palette, s=12, linewidth=0,
        legend=False, ax=ax,
    )  # fmt: skip
    shown = (
        inside[:max_labels]
        if len(inside) <= max_labels
        else inside[np.random.default_rng(k).choice(len(inside), max_labels, replace=False)]
    )
    for i in shown:
        category = frame["category"].iloc[i]
        ax.annotate(
            texts[i],
            (x[i], y[i]),
            fontsize=6.5,
            color=palette[category] if category != UNLABELLED else "0.35",
            xytext=(2, 2),
            textcoords="offset points",
        )
    ax.set(xlim=(x0, x1), ylim=(y0, y1), xticks=[], yticks=[], xlabel="", ylabel="")
    ax.set_title(f"{k + 1}: {name} ({len(inside)} points, {len(shown)} labelled)", fontsize=9)
