"""Configuration records and the one strict loader every config class goes through.

:class:`ModelConfig` holds every size and option of a model (the presets in
:mod:`rnnlib.presets` are named instances of it). :func:`load_config` builds any config
dataclass from a mapping by field name: an unknown name is an error that lists the valid
ones, never a silently ignored key.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

ARCHS = ("rnnsearch", "rnnencdec")
C = TypeVar("C")


class UnknownNameError(KeyError, TypeError, ValueError):
    """An unknown preset or ModelConfig field name (catchable as KeyError, TypeError or ValueError)."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""


@dataclass
class ModelConfig:
    """Every size and option of a model. Field names are what profiles and chapters override.

    ``arch``: "rnnsearch" (B) or "rnnencdec" (A, and B's baseline).
    ``maxout``: number of maxout units l (the pre-maxout layer has 2l).
    ``align``: alignment-model hidden size n' (RNNsearch only).
    ``reset``: "before" = U (r * h) (the papers) or "after" = r * (U h) (torch.nn.GRU), for every GRU.
    ``decoder_reset``: overrides ``reset`` for the decoder (None = same).
    ``reset_context``: the decoder's reset gate also scales the context term (A App. A.1.1 as read).
    ``deep_output_state``: "prev" = s_{i-1} (B as printed) or "current" = s_i (A).
    ``output_rank``: None = full W_o (K x l); r = factored G_l (K x r) G_r (r x l) (A).
    ``dropout``: on the maxout units (0 = papers). ``init``: "paper" (rnnlib.init) or "default".
    """

    arch: str = "rnnsearch"
    src_vocab: int = 30000
    tgt_vocab: int = 30000
    emb: int = 620
    hidden: int = 1000
    maxout: int = 500
    align: int = 1000
    reset: str = "before"
    decoder_reset: str | None = None
    reset_context: bool = False
    deep_output_state: str = "prev"
    output_rank: int | None = None
    dropout: float = 0.0
    init: str = "paper"

    def __post_init__(self) -> None:
        def bad(field: str, allowed: Any) -> ValueError:
            return ValueError(f"ModelConfig.{field}={getattr(self, field)!r}; expected {allowed}")

        if self.arch not in ARCHS:
            raise bad("arch", f"one of {ARCHS}")
        for f in ("reset",) + (("decoder_reset",) if self.decoder_reset is not None else ()):
            if getattr(self, f) not in ("before", "after"):
                raise bad(f, "'before' or 'after'")
        if self.deep_output_state not in ("prev", "current"):
            raise bad("deep_output_state", "'prev' or 'current'")
        if self.init not in ("paper", "default"):
            raise bad("init", "'paper' or 'default'")
        for f in ("src_vocab", "tgt_vocab"):
            if not isinstance(getattr(self, f), int) or getattr(self, f) < 5:
                raise bad(f, "an int >= 5 (4 reserved ids and at least one word)")
        for f in ("emb", "hidden", "maxout", "align"):
            if not isinstance(getattr(self, f), int) or getattr(self, f) < 1:
                raise bad(f, "a positive int")
        if self.output_rank is not None and (not isinstance(self.output_rank, int) or self.output_rank < 1):
            raise bad("output_rank", "None or a positive int")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise bad("dropout", "a float in [0, 1)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ModelConfig":
        return load_config(cls, d, "ModelConfig.from_dict")


def check_fields(cls: type, names, where: str) -> None:
    """Raise :class:`UnknownNameError` if a name in ``names`` is not a field of dataclass ``cls``."""
    valid = [f.name for f in dataclasses.fields(cls)]
    for name in names:
        if name not in valid:
            raise UnknownNameError(f"{where}: unknown {cls.__name__} field {name!r}; "
                                   f"valid fields: {', '.join(valid)}")


def load_config(cls: type[C], mapping: Mapping[str, Any], where: str | None = None) -> C:
    """``cls(**mapping)`` for a config dataclass, refusing names that are not its fields."""
    check_fields(cls, mapping, where or cls.__name__)
    return cls(**mapping)


def config_subset(cls: type, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``mapping`` whose names are fields of ``cls`` (a chapter's parameters
    name config fields directly, so one parameter dict feeds several configs)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in mapping.items() if k in names}
