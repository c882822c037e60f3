"""Cho et al. 2014, Figures 1 and 2, drawn by code with the paper's symbols (plain matplotlib).

:func:`figure_1` and :func:`figure_2` are the chapter's figures, each on a panel of its own.
:func:`encoder_decoder_diagram` (Fig. 1): the encoder reads ``x_1 ... x_T`` into the summary
``c``; the decoder generates ``y_1 ... y_T'``, each step conditioned on ``c`` and the previous
word. :func:`gated_unit_diagram` (Fig. 2): the hidden unit with reset gate ``r``, update gate
``z``, candidate ``h~`` and output ``h``.

Equations
---------
- A Sec. 2.2: h_t = f(h_{t-1}, y_{t-1}, c); P(y_t | y_{t-1}, ..., y_1, c) = g(h_t, y_{t-1}, c)
- A Eqs. 5-8: r = sigma(W_r x + U_r h), z = sigma(W_z x + U_z h), h = z h_{t-1} + (1 - z) h~,
  h~ = tanh(W x + U (r * h_{t-1}))

Deviations
----------
- The layout is ours (the paper's figures are images); the symbols and arrows are the paper's.
"""

from __future__ import annotations


def _node(ax, x, y, text, r=0.28, fill="white"):
    from matplotlib.patches import Circle

    ax.add_patch(Circle((x, y), r, facecolor=fill, edgecolor="black", lw=1))
    ax.text(x, y, text, ha="center", va="center", fontsize=12)


def _arrow(ax, start, end, shrink=14, **kw):
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops=dict(
            arrowstyle="-|>", color="black", lw=1, shrinkA=shrink, shrinkB=shrink, **kw
        ),
    )


def encoder_decoder_diagram(ax) -> None:
    """Fig. 1 on ``ax``: encoder (bottom), the summary ``c`` (middle), decoder (top)."""
    xs = [0.0, 1.0, 2.6]
    labels = ["1", "2", "T"]
    for x, k in zip(xs, labels):
        _node(ax, x, 0.0, f"$x_{{{k}}}$", fill="#eeeeee")
    for a, b in zip(xs, xs[1:]):
        _arrow(ax, (a, 0.0), (b, 0.0))
    ax.text(1.8, 0.0, r"$\cdots$", ha="center", va="center", fontsize=14)
    _node(ax, 1.3, 1.3, "$c$", r=0.32, fill="#dddddd")
    _arrow(ax, (xs[-1], 0.0), (1.3, 1.3))
    ys = [0.0, 1.0, 2.6]
    top = ["1", "2", "T'"]
    for x, k in zip(ys, top):
        _node(ax, x, 2.6, f"$y_{{{k}}}$", fill="white")
        _arrow(ax, (1.3, 1.3), (x, 2.6), alpha=0.6)
    for a, b in zip(ys, ys[1:]):
        _arrow(ax, (a, 2.6), (b, 2.6))
    ax.text(1.8, 2.6, r"$\cdots$", ha="center", va="center", fontsize=14)
    ax.text(-0.7, 0.0, "Encoder", ha="right", va="center", fontsize=11)
    ax.text(-0.7, 2.6, "Decoder", ha="right", va="center", fontsize=11)
    ax.set_xlim(-1.8, 3.2)
    ax.set_ylim(-0.6, 3.2)
    ax.set_aspect("equal")
    ax.axis("off")


def gated_unit_diagram(ax) -> None:
    """Fig. 2 on ``ax``: input ``x`` feeds ``r``, ``z`` and ``h~``; ``r`` gates ``h`` into ``h~``;
    ``z`` mixes the old ``h`` and ``h~`` into the new ``h``."""
    _node(ax, 0.0, 0.0, "$x$", fill="#eeeeee")
    _node(ax, 1.2, 1.2, "$r$")
    _node(ax, 1.2, -1.2, "$z$")
    _node(ax, 2.4, 0.0, r"$\tilde h$")
    _node(ax, 3.8, 0.0, "$h$", r=0.34)
    _arrow(ax, (0.0, 0.0), (1.2, 1.2))
    _arrow(ax, (0.0, 0.0), (1.2, -1.2))
    _arrow(ax, (0.0, 0.0), (2.4, 0.0))
    _arrow(ax, (1.2, 1.2), (2.4, 0.0))
    _arrow(ax, (2.4, 0.0), (3.8, 0.0))
    _arrow(ax, (1.2, -1.2), (3.8, 0.0))
    ax.annotate(
        "",
        xy=(3.95, 0.3),
        xytext=(3.65, 0.3),
        arrowprops=dict(arrowstyle="-|>", color="black", lw=1, connectionstyle="arc3,rad=-2.5"),
    )
    ax.set_xlim(-0.5, 4.5)
    ax.set_ylim(-1.7, 1.7)
    ax.set_aspect("equal")
    ax.axis("off")


def _panel(draw):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    draw(ax)
    return fig


def figure_1():
    """A Fig. 1, the RNN Encoder-Decoder (:func:`encoder_decoder_diagram`): a new figure."""
    return _panel(encoder_decoder_diagram)


def figure_2():
    """A Fig. 2, the gated hidden unit (:func:`gated_unit_diagram`): a new figure."""
    return _panel(gated_unit_diagram)


__all__ = ["encoder_decoder_diagram", "figure_1", "figure_2", "gated_unit_diagram"]
