"""Gates and memory (Cho et al. 2014, §2.3, C-A-GRU-2): how often each hidden unit's reset and
update gates are active against how long the unit remembers (:mod:`.probes`), in the trained
network and, as the control, the untrained one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ... import stats, verdicts
from ...book import claims
from .floor import LearnedFloor
from .probes import gate_activity, perturbation_memory
from .setting import Params

GATES_EXTRA = ["gate_phrases", "memory_lag", "min_phrase_len"]


@dataclass
class GateMemory:
    """A §2.3's prediction measured (:func:`gate_memory`): ``phrases``: the test phrases read;
    ``min_len``: their fewest words; ``activity``: per hidden unit ``(n,)``, the share of steps
    with an active reset (``reset_active``) and update gate (``update_active``); ``memory``:
    ``(n,)`` the share of a change to the first word left ``lag`` words later; ``rho``, ``pvalue``:
    Spearman's rank correlation of each activity with the memory and its p-value;
    ``interval``: the 95% bootstrap interval of each ``rho`` over the units (keys ``"reset"``,
    ``"update"``); ``control``: the same for the untrained network on the same phrases (``None``:
    not measured)."""

    phrases: list[list[str]]
    min_len: int
    lag: int
    activity: dict[str, np.ndarray]
    memory: np.ndarray
    rho: dict[str, float]
    pvalue: dict[str, float]
    interval: dict[str, tuple[float, float]]
    control: GateMemory | None = None


def _gate_stats(model, vocab, phrases, min_len: int, P: Params) -> GateMemory:
    """The gates, memory and correlations of ``model`` over ``phrases`` (see
    :func:`gate_memory`)."""
    from scipy.stats import spearmanr

    lag, seed, n_boot = P.memory_lag, P.seed, P.n_boot
    activity = gate_activity(model, vocab, phrases)
    memory = perturbation_memory(model, vocab, phrases, lag=lag, seed=seed)
    rho, pvalue, interval = {}, {}, {}
    for gate in ("reset", "update"):
        rho[gate], pvalue[gate] = (float(x) for x in spearmanr(activity[f"{gate}_active"], memory))
    for gate in ("reset", "update"):
        _, low, high = stats.bootstrap_spearman(activity[f"{gate}_active"], memory, n_boot, seed)
        interval[gate] = (low, high)
    return GateMemory(phrases, min_len, lag, activity, memory, rho, pvalue, interval)


def gate_memory(
    corpus,
    model: torch.nn.Module,
    P: Params,
    rng: np.random.Generator,
    untrained: torch.nn.Module | None = None,
) -> GateMemory:
    """The encoder's gates and memory over ``gate_phrases`` phrases of ``max(min_phrase_len,
    memory_lag)``--7 words drawn with ``rng`` from the test sentences (the unique n-grams, sorted),
    and the rank correlations of each gate's activity with the memory (scipy's ``spearmanr``;
    intervals from :func:`rnnlib.stats.bootstrap_spearman`, ``n_boot``, ``seed``). With
    ``untrained`` (the network before training), the same on the same phrases as ``control``."""
    min_len = max(P.min_phrase_len, P.memory_lag)
    sentences = [line.split() for line in corpus.text("test", "src")]
    grams = sorted(
        {tuple(s[i : i + n]) for s in sentences for n in range(min_len, 8)
         for i in range(len(s) - n + 1)}
    )  # fmt: skip
    size = min(P.gate_phrases, len(grams))
    phrases = [list(grams[i]) for i in np.sort(rng.choice(len(grams), size=size, replace=False))]
    gates = _gate_stats(model, corpus.src_vocab, phrases, min_len, P)
    if untrained is not None:
        gates.control = _gate_stats(untrained, corpus.src_vocab, phrases, min_len, P)
    return gates


def gates_figure(gates: GateMemory):
    """One point per hidden unit: how often its reset gate (left) or update gate (right) is
    active, against its memory (seaborn scatter), with the rank correlation in each title; the
    untrained network's units in grey when ``gates`` has its control."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    panels = (
        ("reset", "share of steps with an active reset gate (r < 0.5)"),
        ("update", "share of steps with an active update gate (z > 0.5)"),
    )
    for ax, (gate, label) in zip(axes, panels):
        title = f"one point per hidden unit; Spearman {gates.rho[gate]:.2f}"
        if gates.control is not None:
            c = gates.control
            sns.scatterplot(
                x=c.activity[f"{gate}_active"], y=c.memory, s=10, color="0.7", alpha=0.6,
                linewidth=0, ax=ax, label="untrained network",
            )  # fmt: skip
            title += f" (untrained: {c.rho[gate]:.2f})"
        x = gates.activity[f"{gate}_active"]
        sns.scatterplot(
            x=x, y=gates.memory, s=10, color="black", alpha=0.6, linewidth=0, ax=ax,
            label="trained network" if gates.control is not None else None,
        )  # fmt: skip
        ax.set_xlabel(label, fontsize=9)
        ax.set_ylabel(f"memory after {gates.lag} words")
        ax.set_title(title, fontsize=9)
        if gates.control is not None:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def numbers(gates: GateMemory) -> dict:
    """The phrases read and their fewest words, each correlation with its p-value, the mean
    activity of each gate and the ends of each correlation's interval; with the control, its
    correlations and intervals (``rep-rho-<gate>-untrained[-low|-high]``)."""
    act = gates.activity
    out = {
        "rep-gate-phrases": len(gates.phrases),
        "rep-gate-min": gates.min_len,
        "rep-rho-reset": (gates.rho["reset"], 2),
        "rep-p-reset": (gates.pvalue["reset"], 4),
        "rep-rho-update": (gates.rho["update"], 2),
        "rep-p-update": (gates.pvalue["update"], 4),
        "rep-reset-active-mean": (act["reset_active"].mean(), 3),
        "rep-update-active-mean": (act["update_active"].mean(), 3),
        "rep-rho-reset-low": (gates.interval["reset"][0], 2),
        "rep-rho-reset-high": (gates.interval["reset"][1], 2),
        "rep-rho-update-low": (gates.interval["update"][0], 2),
        "rep-rho-update-high": (gates.interval["update"][1], 2),
    }
    if gates.control is not None:
        c = gates.control
        for gate in ("reset", "update"):
            out[f"rep-rho-{gate}-untrained"] = (c.rho[gate], 2)
            out[f"rep-rho-{gate}-untrained-low"] = (c.interval[gate][0], 2)
            out[f"rep-rho-{gate}-untrained-high"] = (c.interval[gate][1], 2)
    return out


def _gate_tests(gates: GateMemory) -> list[tuple[str, float, float, float]]:
    (r_lo, r_hi), (z_lo, z_hi) = gates.interval["reset"], gates.interval["update"]
    rho_r, rho_z = gates.rho["reset"], gates.rho["update"]
    return [
        ("−Spearman(reset activity, memory)", -rho_r, -r_hi, -r_lo),
        ("Spearman(update activity, memory)", rho_z, z_lo, z_hi),
    ]


def claim_gru_2(gates: GateMemory, floor: LearnedFloor | None = None) -> claims.ClaimCheck:
    """C-A-GRU-2. Paper A, §2.3: "Those units that learn to capture short-term dependencies will
    tend to have reset gates that are frequently active, but those that capture longer-term
    dependencies will have update gates that are mostly active."

    Judged as -rho(reset activity, memory) and rho(update activity, memory) both above 0
    beyond their bootstrap intervals; not measurable when an activity or the memory does not
    vary across the units. Control (required): the same rule on the untrained network's gates
    and memory over the same phrases (what the GRU's equations give without training); floor:
    ``floor``. Its verdict is glued as ``rep-verdict-gates``."""
    tests = _gate_tests(gates)
    if not np.isfinite([x for t in tests for x in t[1:]]).all():
        reason = "a gate's activity or the memory does not vary across the hidden units"
        return claims.ClaimCheck("C-A-GRU-2", verdicts.not_measurable(reason), "rep-verdict-gates")
    if gates.control is None:
        raise ValueError("claim_gru_2: the control needs the untrained network's gates")
    check = verdicts.intervals_above(
        tests,
        note=f"one point per hidden unit ({len(gates.memory)}); active: r < 0.5, z > 0.5; "
        f"memory after {gates.lag} words over {len(gates.phrases)} test phrases; 95% bootstrap "
        "intervals over the units: cover the sampling of the units, not the training seed (one "
        "run) nor the phrases read (one sample)",
    )
    control = verdicts.intervals_above(_gate_tests(gates.control))
    what = "the untrained network's gates and memory on the same phrases"
    check = verdicts.controlled(check, what, control)
    if floor is not None:
        check = floor.apply(check)
    return claims.ClaimCheck("C-A-GRU-2", check, glue="rep-verdict-gates")
