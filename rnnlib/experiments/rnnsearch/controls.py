"""The controls' system and the floor: the network at initialisation (the run's seed and model
config), its dev NLL (``rnnsearch/dev_nll_init``), and the BLEU floor every claim that reads a
system's translations is judged against (:data:`rnnlib.verdicts.BLEU_FLOOR`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ... import verdicts
from ...models import build_model
from ...smt.rnn_scorer import score_pairs
from ...verdicts import BLEU_FLOOR
from .setting import RNNsearchExperiment

#: the controls' system: the untrained RNNsearch (greedy search; :func:`untrained_model`)
UNTRAINED = "untrained RNNsearch"
#: the control of a comparison of two systems' BLEU: the worse system against itself (a
#: difference of exactly 0 on every resample: the rule must not hold). The untrained network is
#: no control there: against a system at the floor it can come out ahead by a hundredth of BLEU
IDENTICAL_WHAT = "two identical systems: the worse system"


def untrained_model(ex: RNNsearchExperiment, arch: str = "rnnsearch") -> torch.nn.Module:
    """The network of ``arch`` at initialisation, as a run of the chapter starts it (the run's
    seed, the run's model config: :func:`rnnlib.experiments.training_runs.train_run`), in eval
    mode. The "-30" and "-50" models of one architecture start from the same parameters."""
    torch.manual_seed(ex.train_config(1).seed)
    return build_model(ex.model_config(arch)).to(ex.device).eval()


def init_config(ex: RNNsearchExperiment, arch: str = "rnnsearch") -> dict:
    """What names the untrained network in an artifact's key."""
    return {"init": arch, "model": ex.model_config(arch).to_dict(), "seed": ex.train_config(1).seed}


def untrained_dev_nll(ex: RNNsearchExperiment) -> np.ndarray:
    """``(len(dev),)``: per-sentence dev NLL of the untrained RNNsearch
    (``rnnsearch/dev_nll_init``), the control of C-B-T2-1."""

    def make(out: Path, work: Path) -> None:
        nll = -score_pairs(untrained_model(ex), ex.dev, batch_size=ex.P.decode_batch)
        np.save(out / "nll.npy", nll)

    config = {**init_config(ex), "sentences": len(ex.dev)}
    found = ex.cache.build("rnnsearch/dev_nll_init", config, make, data=ex.corpus.checksum)
    return np.load(found.file("nll.npy"))


def bleu_floor(check, values: list[tuple[str, float]], what: str, reads=None):
    """``check`` measurable only where every system it reads reaches :data:`BLEU_FLOOR`;
    ``reads``: per value, the labels of the tests that read it
    (:func:`rnnlib.verdicts.floored`)."""
    return verdicts.floored(check, values, BLEU_FLOOR, "BLEU", what, reads=reads)


def dlh(res: dict) -> tuple[float, float, float]:
    return res["diff"], res["low"], res["high"]
