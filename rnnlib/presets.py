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
- A §4.1.1: 1000 hidden units, rank-100 input/output matrices, 500 maxout units pooling 2;
  A §4: 15,000 words

Deviations
----------
- A's appendix says e(x) in R^500 but its main text uses rank-100 matrices ("equivalent to
  learning an embedding of dimension 100"); ``paper-cho2014`` uses 100
  (Reading the papers, ``reading-embedding-size``).
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
from typing import Any, Callable

from .config import ModelConfig, UnknownNameError, check_fields

_PAPER_B = dict(src_vocab=30000, tgt_vocab=30000, emb=620, hidden=1000, maxout=500, align=1000)
_CPU = dict(src_vocab=8000, tgt_vocab=8000, emb=128, hidden=256, maxout=128, align=256)
_SMOKE = dict(src_vocab=40, tgt_vocab=40, emb=8, hidden=16, maxout=8, align=16)
# A's decoder as we read its appendix (see rnnlib.decoders "Deviations").
_CHO2014 = dict(
    arch="rnnencdec", decoder_reset="after", reset_context=True, deep_output_state="current"
)

PRESETS: dict[str, Callable[[], ModelConfig]] = {
    "paper-rnnsearch": lambda: ModelConfig(arch="rnnsearch", **_PAPER_B),
    "paper-rnnencdec": lambda: ModelConfig(arch="rnnencdec", **_PAPER_B),
    "paper-cho2014": lambda: ModelConfig(
        src_vocab=15000,
        tgt_vocab=15000,
        emb=100,
        hidden=1000,
        maxout=500,
        align=1000,
        output_rank=100,
        **_CHO2014,
    ),
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
        raise UnknownNameError(
            f"unknown model preset {name!r}; valid presets: {', '.join(PRESETS)}"
        )
    check_fields(ModelConfig, overrides, f"preset({name!r})")
    return dataclasses.replace(PRESETS[name](), **overrides)


from .models import build_model  # noqa: E402, F401  (re-exported: presets -> models, never back)
