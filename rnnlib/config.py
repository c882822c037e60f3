"""Configuration records and the one strict loader every config class goes through.

:class:`ModelConfig` holds every size and option of a model (the presets in
:mod:`rnnlib.presets` are named instances of it). :func:`load_config` builds any config
dataclass from a mapping by field name: an unknown name is an error that lists the valid
ones, never a silently ignored key. Every config class of the library loads through it
(:class:`ModelConfig`, :class:`rnnlib.train.TrainConfig`,
:class:`rnnlib.corpus.dataset.CorpusConfig`, :class:`rnnlib.smt.system.SMTConfig` with its
nested :class:`rnnlib.smt.decoder.DecoderConfig`).

A chapter's parameters carry the names of config fields, so :func:`config_subset` picks a
config's share of them and ``load_config(cls, config_subset(cls, params))`` builds it
(:meth:`rnnlib.book.chapter.Chapter.config`).

Cache keys and ``ModelConfig.unit``
-----------------------------------
The book's artifact cache keys trained models by :meth:`ModelConfig.to_dict`
(:mod:`rnnlib.experiments.training_runs`, :mod:`rnnlib.experiments.cho2014.scorer`, the copy-task
chapter, and any ModelConfig the cache serialises). ``unit`` was added after runs were cached, so
``to_dict`` leaves it out while it is the default ``"gru"``: every GRU key stays what it was, and
a ``"tanh"`` config keys apart. A dict without ``unit`` loads as ``"gru"``.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

ARCHS = ("rnnsearch", "rnnencdec")
UNITS = ("gru", "tanh")
C = TypeVar("C")


class UnknownNameError(KeyError, TypeError, ValueError):
    """An unknown preset or ModelConfig field name (catchable as KeyError, TypeError or
    ValueError)."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""


@dataclass
class ModelConfig:
    """Every size and option of a model. Field names are what profiles and chapters override.

    ``arch``: "rnnsearch" (B) or "rnnencdec" (A, and B's baseline).
    ``maxout``: number of maxout units l (the pre-maxout layer has 2l).
    ``align``: alignment-model hidden size n' (RNNsearch only).
    ``reset``: "before" = U (r * h) (the papers) or "after" = r * (U h) (torch.nn.GRU), for every
    GRU.
    ``decoder_reset``: overrides ``reset`` for the decoder (None = same).
    ``reset_context``: the decoder's reset gate also scales the context term (A App. A.1.1 as read).
    ``deep_output_state``: "prev" = s_{i-1} (B as printed) or "current" = s_i (A).
    ``output_rank``: None = full W_o (K x l); r = factored G_l (K x r) G_r (r x l) (A).
    ``dropout``: on the maxout units (0 = papers). ``init``: "paper" (rnnlib.init) or "default".
    ``unit``: the recurrent unit of every layer, encoder and decoder: "gru" (the papers) or
    "tanh", A §2.3's ablation ``h_t = tanh(W x_t + U h_{t-1} [+ C c] + b)`` (:mod:`rnnlib.gru`);
    "tanh" has no reset gate, so it needs ``reset``, ``decoder_reset`` and ``reset_context`` at
    their defaults ("before", None, False). :meth:`to_dict` leaves ``unit`` out while it is "gru"
    (cache keys; see the module docstring).
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
    unit: str = "gru"

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
        if self.output_rank is not None and (
            not isinstance(self.output_rank, int) or self.output_rank < 1
        ):
            raise bad("output_rank", "None or a positive int")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise bad("dropout", "a float in [0, 1)")
        if self.unit not in UNITS:
            raise bad("unit", f"one of {UNITS}")
        if self.unit == "tanh":
            for f, default in (
                ("reset", "before"),
                ("decoder_reset", None),
                ("reset_context", False),
            ):
                if getattr(self, f) != default:
                    raise bad(
                        f,
                        f"{default!r} with unit='tanh' (the tanh unit has no reset gate; "
                        f"set reset='before', decoder_reset=None, reset_context=False)",
                    )

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, as cache keys use it: without ``unit`` while it is "gru" (module
        docstring)."""
        d = dataclasses.asdict(self)
        if d["unit"] == "gru":
            del d["unit"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ModelConfig":
        return load_config(cls, d, "ModelConfig.from_dict")


def parse_value(text: str) -> Any:
    """A value typed on the command line (``-p lr=1e-3``, ``--set train.lr=1e-3``), read as a
    Python literal: ``1e-3`` is a float, ``3`` an int, ``True``/``true`` and ``False``/``false``
    booleans, ``None``/``null`` nothing, ``'a b'`` a quoted string; anything else (``no``,
    ``none``, a choice such as ``min_len=none``, ``0.1,0.3``, ``a:b``) is the string as typed.
    YAML, which read these before, takes ``1e-3`` for a string (YAML 1.1 wants ``1.0e-3``) and
    ``no``/``off`` for ``False``."""
    import ast

    stripped = text.strip()
    words = {"true": True, "false": False, "null": None, "~": None}
    if stripped.lower() in words:
        return words[stripped.lower()]
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    if isinstance(value, (tuple, list, dict, set, bytes, complex)):
        return text  # a string that happens to read as a structure: "0.1,0.3"
    return value


def check_fields(cls: type, names, where: str) -> None:
    """Raise :class:`UnknownNameError` if a name in ``names`` is not a field of dataclass
    ``cls``."""
    valid = [f.name for f in dataclasses.fields(cls)]
    for name in names:
        if name not in valid:
            raise UnknownNameError(
                f"{where}: unknown {cls.__name__} field {name!r}; valid fields: {', '.join(valid)}"
            )


def nested_configs(cls: type) -> dict[str, type]:
    """The fields of dataclass ``cls`` that are config dataclasses themselves, by name
    (``SMTConfig.decoder`` -> ``DecoderConfig``)."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        kind = hints.get(f.name)
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            out[f.name] = kind
    return out


def load_config(cls: type[C], mapping: Mapping[str, Any], where: str | None = None) -> C:
    """``cls(**mapping)`` for a config dataclass, refusing names that are not its fields.

    A field whose type is a config dataclass itself (``SMTConfig.decoder``) accepts a mapping,
    loaded the same way (its unknown names are named with the path, ``SMTConfig.decoder``).
    """
    where = where or cls.__name__
    check_fields(cls, mapping, where)
    values = dict(mapping)
    for name, sub in nested_configs(cls).items():
        if isinstance(values.get(name), Mapping):
            values[name] = load_config(sub, values[name], f"{where}.{name}")
    return cls(**values)


def config_subset(cls: type, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``mapping`` whose names are fields of ``cls`` (a chapter's parameters
    name config fields directly, so one parameter dict feeds several configs).

    The fields of a nested config (``SMTConfig.decoder``) are taken from the same flat mapping
    and returned as a mapping under the nested field's name, for :func:`load_config`. A name
    that is a field at two levels would be ambiguous and is an error: a setting lives in one
    config only.
    """
    names = {f.name for f in dataclasses.fields(cls)}
    out = {k: v for k, v in mapping.items() if k in names}
    for name, sub in nested_configs(cls).items():
        out.pop(name, None)
        shared = sorted({f.name for f in dataclasses.fields(sub)} & names)
        if shared:
            raise ValueError(
                f"{cls.__name__} and {cls.__name__}.{name} ({sub.__name__}) both have the "
                f"field(s) {shared}: a setting must live in one config only"
            )
        inner = config_subset(sub, mapping)
        if inner:
            out[name] = inner
    return out
