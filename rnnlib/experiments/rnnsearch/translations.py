"""The test translations of every system: the five models' beam search on All and on the No UNK
subset with ``[UNK]`` forbidden (``rnnsearch/translations``), the untrained network's greedy
translations (``rnnsearch/init_translations``) and the phrase-based system of chapter
``baseline``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from ...cache import Artifact, config_hash
from ..baseline import baseline_params, baseline_system
from ..training_runs import decode_run, read_lines
from .controls import UNTRAINED, init_config, untrained_model
from .setting import NAMES, SUBSETS, RNNsearchExperiment
from .training import Runs, star_is_search50


@dataclass
class Translations:
    """The test translations of every system: ``decoded`` ((name, subset) -> artifact of
    :func:`rnnlib.experiments.training_runs.decode_run`), their ``hyps`` (detokenized lines),
    the phrase-based system's ``base`` lines (or ``None``) and its evaluation artifact, the
    references ``refs`` per subset, the No UNK mask ``known (n_test,)`` and the ``trained``
    runs the translations come from."""

    trained: list[Artifact]
    decoded: dict[tuple[str, str], Artifact]
    hyps: dict[tuple[str, str], list[str]]
    refs: dict[str, list[str]]
    known: np.ndarray
    base: list[str] | None = None
    base_evaluation: Artifact | None = None
    systems: list[str] = field(default_factory=list)
    star_same: bool = False  # RNNsearch-50⋆ is RNNsearch-50 (:func:`star_is_search50`)
    untrained: list[str] | None = None  # the untrained RNNsearch's greedy translations (All)
    untrained_decoded: Artifact | None = None

    def of(self, name: str, subset: str = "all") -> list[str]:
        """The translations of system ``name`` on ``subset`` (``all`` or ``no_unk``)."""
        if name in ("phrase-based", UNTRAINED):  # one decode of All, its No UNK part
            lines = self.base if name == "phrase-based" else self.untrained
            return lines if subset == "all" else [h for h, k in zip(lines, self.known) if k]
        return self.hyps[(name, subset)]

    @property
    def cited(self) -> list[Artifact]:
        """What Table 1, the paired tests, Fig. 2 and Table 3 are computed from: the runs, their
        translations, the untrained network's and the phrase-based system's evaluation."""
        base = [self.base_evaluation] if self.base is not None else []
        init = [self.untrained_decoded] if self.untrained_decoded is not None else []
        every = self.trained + list(self.decoded.values()) + base + init
        return list({(a.kind, a.key): a for a in every}.values())  # ⋆'s may be RNNsearch-50's


def decode(ex: RNNsearchExperiment, art: Artifact, model: torch.nn.Module, subset: str) -> Artifact:
    """The beam-search translations (``rnnsearch/translations``) by the model of run ``art`` of
    the evaluated test sentences, All or No UNK (``subset``; ``[UNK]`` forbidden there)."""
    index = ex.test if subset == "all" else ex.test[ex.known]
    which = {
        "run": art.key,
        "sentences": len(index),
        "test_index": config_hash([int(i) for i in index]),
    }
    return decode_run(
        ex.cache,
        "rnnsearch/translations",
        which,
        model,
        [ex.corpus.test.src[i] for i in index],
        ex.to_words,
        ex.corpus.detokenize,
        data=ex.corpus.checksum,
        beam_size=ex.P.beam_size,
        batch_size=ex.P.decode_batch,
        forbid_unk=subset == "no_unk",
        **ex.search_options(),
    )


def translations(ex: RNNsearchExperiment, runs: Runs) -> Translations:
    """The beam-search translations of the evaluated test sentences by the five models
    (``rnnsearch/translations``), on All and on the No UNK subset with ``[UNK]`` forbidden,
    the greedy translations of All by the untrained RNNsearch (``rnnsearch/init_translations``,
    the controls' system), and the phrase-based system of chapter ``baseline`` (when
    ``baseline`` is on and it translated at least ``n_test`` sentences)."""
    p, corpus, known = ex.P, ex.corpus, ex.known
    decoded = {}
    same = star_is_search50(runs)
    for name in NAMES:
        for subset in SUBSETS:
            if name == "RNNsearch-50*" and same:  # the same parameters: the same translations
                decoded[(name, subset)] = decoded[("RNNsearch-50", subset)]
                continue
            decoded[(name, subset)] = decode(ex, runs.runs[name], runs.model(ex, name), subset)
    hyps = {key: read_lines(art.file("text.txt")) for key, art in decoded.items()}
    init = decode_run(
        ex.cache,
        "rnnsearch/init_translations",
        {**init_config(ex), "sentences": ex.n_test},
        untrained_model(ex),
        [corpus.test.src[i] for i in ex.test],
        ex.to_words,
        corpus.detokenize,
        data=corpus.checksum,
        beam_size=1,
        batch_size=p.decode_batch,
        **ex.search_options(),
    )
    refs = ex.test_refs
    out = Translations(
        list(runs.runs.values()),
        decoded,
        hyps,
        {"all": refs, "no_unk": [r for r, k in zip(refs, known) if k]},
        known,
        systems=list(NAMES),
        star_same=same,
        untrained=read_lines(init.file("text.txt")),
        untrained_decoded=init,
    )
    if p.baseline:
        result = baseline_system(corpus, baseline_params(ex.root, p.profile, asdict(p)), ex.cache)
        out.base_evaluation = result.evaluation
        base_text = read_lines(result.evaluation.file("test.txt"))
        if len(base_text) >= ex.n_test:
            out.base = base_text[: ex.n_test]
            out.systems.append("phrase-based")
    return out
