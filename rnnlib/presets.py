"""Named model configurations: the papers' sizes and scaled CPU / smoke-test sizes.

``preset("paper-rnnsearch", hidden=512)`` returns a :class:`ModelConfig`; an unknown preset or
field name is an error that lists the valid ones. ``build_model(config)`` builds the model and
applies the papers' initialisation (:mod:`rnnlib.init`).

Sizes
-----
- ``paper-rnnsearch`` / ``paper-rnnencdec`` (B A.2.3): n = 1000 hidden, m = 620 embedding,
  l = 500 maxout units, n' = 1000 alignment units, 30,000-word shortlists.
- ``paper-cho2014`` (A §4.1.1): 1000 hidden, 100-dimensional embeddings (the "rank-100"
  input matrices), 500 maxout units, rank-100 output matrix, 15,000-word shortlists.
- ``cpu-*``: n = 256, m = 128, l = 128, n' = 256, 8,000-word vocabularies: sized so a model
  learns useful translations of ~25k short sentence pairs in minutes on two CPU cores.
- ``smoke-*``: tiny, for tests.

Equations
---------
- B A.2.3: n = 1000, m = 620, l = 500, n' = 1000; B §4.1: 30,000-word shortlists
- A §4.1.1: 1000 hidden units, rank-100 input/output matrices, 500 maxout units pooling 2; A §4: 15,000 words

Deviations
----------
- A's appendix says e(x) in R^500 but its main text uses rank-100 matrices ("equivalent to
  learning an embedding of dimension 100"); ``paper-cho2014`` uses 100 (inventory 4.2 #1).
- Vocabulary sizes count the four reserved ids ([PAD], [UNK], [BOS], [EOS]) inside the
  shortlist; the vocabulary builder decides the exact size and overrides these fields.
- ``paper-rnnencdec`` is B's baseline: A's summary ``c = tanh(V h<N>)`` and ``s_0 = tanh(V' c)``
  with B's decoder unit (reset inside ``U (r * s)``, context not reset) and B's printed deep
  output on ``s_{i-1}``, so it differs from ``paper-rnnsearch`` only where B says it does (the
  context). ``paper-cho2014`` follows A's appendix as we read it: decoder reset after the
  recurrent product and over the context, deep output on the current state, rank-100 output.
- ``cpu-*`` and ``smoke-*`` sizes are ours, not the papers'.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

ARCHS = ("rnnsearch", "rnnencdec")


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
        _check_fields(d, "ModelConfig.from_dict")
        return cls(**d)


def _check_fields(names, where: str) -> None:
    valid = [f.name for f in dataclasses.fields(ModelConfig)]
    for name in names:
        if name not in valid:
            raise UnknownNameError(f"{where}: unknown ModelConfig field {name!r}; valid fields: {', '.join(valid)}")


_PAPER_B = dict(src_vocab=30000, tgt_vocab=30000, emb=620, hidden=1000, maxout=500, align=1000)
_CPU = dict(src_vocab=8000, tgt_vocab=8000, emb=128, hidden=256, maxout=128, align=256)
_SMOKE = dict(src_vocab=40, tgt_vocab=40, emb=8, hidden=16, maxout=8, align=16)
# A's decoder as we read its appendix (see rnnlib.decoders "Deviations").
_CHO2014 = dict(arch="rnnencdec", decoder_reset="after", reset_context=True,
                deep_output_state="current")

PRESETS: dict[str, Callable[[], ModelConfig]] = {
    "paper-rnnsearch": lambda: ModelConfig(arch="rnnsearch", **_PAPER_B),
    "paper-rnnencdec": lambda: ModelConfig(arch="rnnencdec", **_PAPER_B),
    "paper-cho2014": lambda: ModelConfig(src_vocab=15000, tgt_vocab=15000, emb=100, hidden=1000,
                                         maxout=500, align=1000, output_rank=100, **_CHO2014),
    "cpu-rnnsearch": lambda: ModelConfig(arch="rnnsearch", **_CPU),
    "cpu-rnnencdec": lambda: ModelConfig(arch="rnnencdec", **_CPU),
    "cpu-cho2014": lambda: ModelConfig(**{**_CPU, "emb": 64}, output_rank=64, **_CHO2014),
    "smoke-rnnsearch": lambda: ModelConfig(arch="rnnsearch", **_SMOKE),
    "smoke-rnnencdec": lambda: ModelConfig(arch="rnnencdec", **_SMOKE),
    "smoke-cho2014": lambda: ModelConfig(**_SMOKE, output_rank=4, **_CHO2014),
}


def preset(name: str, **overrides: Any) -> ModelConfig:
    """The named preset with ``overrides`` applied by field name (unknown names are errors)."""
    if name not in PRESETS:
        raise UnknownNameError(f"unknown model preset {name!r}; valid presets: {', '.join(PRESETS)}")
    _check_fields(overrides, f"preset({name!r})")
    return dataclasses.replace(PRESETS[name](), **overrides)


def build_model(config: ModelConfig, generator=None):
    """Build the model ``config.arch`` names; with ``init="paper"`` apply :func:`rnnlib.init.init_paper`.

    ``generator``: an optional ``torch.Generator`` for the initial weights.
    """
    from .models import build_model as _build

    return _build(config, generator=generator)
