"""B Fig. 1, the RNNsearch decoder generating the t-th target word y_t from a source sentence
(x_1, ..., x_T), drawn by code with the paper's symbols. Bottom to top: the source words; the
forward and backward encoder states (→h_j, ←h_j), whose concatenation is the annotation h_j
(Eq. 7); the weights α_{t,j} (Eq. 6) into a weighted sum, the context c_t (Eq. 5); the decoder
states s_{t-1} → s_t and the words y_{t-1}, y_t (Eq. 4).

Equations
---------
- B Eq. 4: s_t = f(s_{t-1}, y_{t-1}, c_t); Eq. 5: c_t = sum_j alpha_tj h_j;
  Eq. 6: alpha_tj = softmax_j e_tj
- B Eq. 7 (App. A.2.1): h_j = [→h_j ; ←h_j]

Deviations
----------
- The layout is ours (the paper's figure is an image); the symbols and arrows are the paper's.
"""

from __future__ import annotations

#: the source positions drawn: (x coordinate, subscript); an ellipsis sits between 3 and T
_COLUMNS = ((0.0, "1"), (1.0, "2"), (2.0, "3"), (3.6, "T"))


def _box(ax, x, y, text, w=0.56, h=0.42, fill="white", radius=None):
    from matplotlib.patches import Circle, FancyBboxPatch

    if radius is not None:
        ax.add_patch(Circle((x, y), radius, facecolor=fill, edgecolor="black", lw=1))
    else:
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle="round,pad=0.02",
                facecolor=fill,
                edgecolor="black",
                lw=1,
            )
        )
    ax.text(x, y, text, ha="center", va="center", fontsize=11)


def _arrow(ax, start, end, shrink=(12, 12), **kw):
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops=dict(
            arrowstyle="-|>",
            color="black",
            lw=kw.pop("lw", 1),
            shrinkA=shrink[0],
            shrinkB=shrink[1],
            **kw,
        ),
    )


def rnnsearch_diagram(ax) -> None:
    """Draw B's Fig. 1 on ``ax`` (its limits and aspect are set here; the axes are hidden)."""
    y_x, y_fwd, y_bwd, y_sum, y_s, y_y = 0.0, 1.1, 2.0, 3.7, 4.8, 5.8
    dx = 0.22  # the forward state sits left of its column, the backward state right of it
    top = 0.21  # half the height of a box
    for x, j in _COLUMNS:
        _box(ax, x, y_x, rf"$x_{{{j}}}$", radius=0.27)
        _box(ax, x - dx, y_fwd, rf"$\overrightarrow{{h}}_{{{j}}}$", fill="#eeeeee")
        _box(ax, x + dx, y_bwd, rf"$\overleftarrow{{h}}_{{{j}}}$", fill="#d8d8d8")
        _arrow(ax, (x - 0.12, y_x + 0.24), (x - 0.12, y_fwd - top), shrink=(0, 1))
        _arrow(ax, (x + 0.12, y_x + 0.24), (x + 0.12, y_bwd - top), shrink=(0, 1))
    for (xa, _), (xb, _) in zip(_COLUMNS, _COLUMNS[1:]):
        style = dict(linestyle=":") if xb - xa > 1.2 else {}
        _arrow(ax, (xa - dx + 0.28, y_fwd), (xb - dx - 0.28, y_fwd), shrink=(1, 1), **style)
        _arrow(ax, (xb + dx - 0.28, y_bwd), (xa + dx + 0.28, y_bwd), shrink=(1, 1), **style)
        if style:
            ax.text((xa + xb) / 2, y_x, r"$\cdots$", ha="center", va="center", fontsize=12)
    x_sum = 1.8
    _box(ax, x_sum, y_sum, r"$+$", radius=0.24)
    for x, j in _COLUMNS:
        start = (x, y_bwd + top)
        _arrow(ax, start, (x_sum, y_sum), shrink=(2, 14), lw=1.2)
        f = 0.3  # the weight's label near the bottom of its line, where the lines are apart
        mx, my = x + f * (x_sum - x), start[1] + f * (y_sum - start[1])
        right = x >= x_sum
        ax.text(
            mx + (0.1 if right else -0.1),
            my,
            rf"$\alpha_{{t,{j}}}$",
            ha="left" if right else "right",
            va="center",
            fontsize=11,
        )
    x_prev, x_now = 0.8, 2.8
    _box(ax, x_prev, y_s, r"$s_{t-1}$", w=0.7)
    _box(ax, x_now, y_s, r"$s_t$", w=0.7)
    _box(ax, x_prev, y_y, r"$y_{t-1}$", radius=0.34)
    _box(ax, x_now, y_y, r"$y_t$", radius=0.34)
    _arrow(ax, (x_prev + 0.35, y_s), (x_now - 0.35, y_s), shrink=(1, 1))
    _arrow(ax, (x_sum, y_sum), (x_now, y_s), shrink=(12, 14))
    _arrow(ax, (x_prev, y_s + top), (x_prev, y_y - 0.34), shrink=(1, 1))
    _arrow(ax, (x_now, y_s + top), (x_now, y_y - 0.34), shrink=(1, 1))
    _arrow(ax, (x_prev, y_y), (x_now - 0.2, y_s), shrink=(16, 12))
    ax.text(
        -0.7,
        (y_fwd + y_bwd) / 2,
        "annotations\n" + r"$h_j = [\overrightarrow{h}_j; \overleftarrow{h}_j]$",
        ha="right",
        va="center",
        fontsize=9,
    )
    ax.text(
        x_sum + 0.35, y_sum, r"$c_t = \sum_j \alpha_{t,j} h_j$", ha="left", va="center", fontsize=9
    )
    ax.set_xlim(-2.5, 4.3)
    ax.set_ylim(-0.5, 6.3)
    ax.set_aspect("equal")
    ax.axis("off")


def rnnsearch_figure(width: float = 6.5, height: float = 5.5):
    """B's Fig. 1 as a figure of its own (``width`` x ``height`` inches), for the chapter to
    glue: :func:`rnnsearch_diagram` on one axes."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height))
    rnnsearch_diagram(ax)
    return fig
