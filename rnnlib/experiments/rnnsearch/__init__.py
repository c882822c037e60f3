"""Paper B's experiment (chapter ``rnnsearch``): RNNsearch against RNNencdec, Bahdanau et al. 2015.

One module per item the chapter shows, each holding that item's computation, drawing and claims,
above the modules they share: the setting (:mod:`.setting`), the training runs
(:mod:`.training`), the test translations (:mod:`.translations`), the untrained network and the
floor (:mod:`.controls`) and the further seeds (:mod:`.seeds`).

Artifacts keep the kinds and configs the chapter has always used (``rnnsearch/run``,
``rnnsearch/dev_nll``, ``rnnsearch/translations``, ``rnnsearch/alignments``); the controls add
``rnnsearch/dev_nll_init``, ``rnnsearch/init_translations`` and ``rnnsearch/test_nll``; the source
gain of Fig. 2 in nats (:mod:`.source_gain`) adds ``rnnsearch/source_gain``. Every
claim carries a control (:func:`rnnlib.verdicts.controlled`) and, where it reads a model's
translations, the floor :data:`rnnlib.verdicts.BLEU_FLOOR`. Every interval comes from
:mod:`rnnlib.stats`; the claims' checks come back as :class:`rnnlib.book.claims.ClaimCheck`, so
that the chapter records them in its own cells and order.

Deviations
----------
- Every departure from the paper's recipe is a chapter parameter, listed by
  :func:`rnnlib.experiments.rnnsearch.recipe.departures`.
"""
