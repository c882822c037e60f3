"""The papers' weight initialisation (A §4.1.1 / App. A; B App. B.1).

Applied by :func:`rnnlib.presets.build_model` unless ``ModelConfig.init == "default"``.

Equations
---------
- B.1 / A §4.1.1: recurrent matrices U, U_z, U_r (encoder both directions, decoder) random
  orthogonal (the tanh unit of A §2.3, ``unit="tanh"``: its one recurrent matrix U)
- B.1: W_a and U_a ~ N(0, 0.001^2)
- B.1: v_a and all bias vectors = 0
- B.1 / A §4.1.1: every other weight ~ N(0, 0.01^2)

Deviations
----------
- Orthogonal matrices are drawn as the Q factor of a Gaussian matrix
  (``torch.nn.init.orthogonal_``), which has the same (Haar) distribution as the left singular
  vectors A describes.
- Each n x n recurrent matrix U_r, U_z, U is made orthogonal on its own (A and B say the
  recurrent weight matrices are orthogonal, not how the three of a unit relate).
- The embedding row of [BOS] is set to zero (it is also masked at every use: e(y_0) = 0).
- A initialises its (non-recurrent) weights like B; A names no special scale for any layer.
- B.1's "V_a" (zero) is read as the alignment vector v_a, which appears nowhere else
  (Reading the papers, ``reading-v-a``); with v_a = 0 the first attention weights are uniform.
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import AdditiveAttention
from .gru import GRUCell, TanhCell
from .specials import BOS

STD = 0.01
STD_ALIGN = 0.001


@torch.no_grad()
def init_paper(model: nn.Module, generator: torch.Generator | None = None) -> nn.Module:
    """Re-initialise every parameter of ``model`` in place as the papers do; returns ``model``."""
    for p in model.parameters():
        if p.dim() >= 2:
            nn.init.normal_(p, 0.0, STD, generator=generator)
        else:
            p.zero_()  # biases, v_a
    for m in model.modules():
        if isinstance(m, (GRUCell, TanhCell)):
            for U in m.recurrent_blocks():
                nn.init.orthogonal_(U, generator=generator)
        elif isinstance(m, AdditiveAttention):
            nn.init.normal_(m.W_a.weight, 0.0, STD_ALIGN, generator=generator)
            nn.init.normal_(m.U_a.weight, 0.0, STD_ALIGN, generator=generator)
            m.v_a.zero_()
    decoder = getattr(model, "decoder", None)
    if decoder is not None and hasattr(decoder, "embed"):
        decoder.embed.weight[BOS].zero_()
    return model
