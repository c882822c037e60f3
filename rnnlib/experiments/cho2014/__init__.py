"""Paper A's experiment (chapter ``cho2014``): the RNN Encoder-Decoder as a phrase score.

Cho et al. (2014) train their RNN Encoder-Decoder on the unique phrase pairs of a phrase-based
system's table and add its ``log p(f | e)`` of every pair to the log-linear model (A Eq. 9);
MERT tunes all the weights again (A Table 1). Each module of this package is one item of the
chapter, in its order, with that item's computation, drawing and claims; the network itself
(which the representations chapter, A §4.4, reads too) is :mod:`.scorer`.

Every interval comes from :mod:`rnnlib.stats` (Fig. 3's joint bootstrap from
:func:`rnnlib.stats.bootstrap_rounds`; Table 1's from :func:`rnnlib.stats.seeds_and_sentences`,
Clark et al. 2011), but those of C-A-T1-1, C-A-T1-2 and C-A-T1-4: the same rule with whole Bible
chapters resampled (:mod:`.intervals`), on the primary held-out set (:mod:`.primary`). Every
claim's check carries a control: for C-A-T1-1, C-A-T1-2 and C-A-T1-4 the extra tuning alone
(the Baseline tuned on; +RNN's n-best lists re-tuned without the CSLM, :mod:`.equal_effort`),
an n-best oracle for the word penalty's null claim; the network's claims the same rule on the
untrained network (its initialisation with the run's seed), and a floor (the network ahead of
the target unigram model on held-out pairs).

Devices: the chapter's ``device`` parameter (``auto``: CUDA when there is one, else the CPU;
:func:`rnnlib.device.resolve_device`) is where the scorer trains, scores and samples and where
its checkpoints load. The scorer's cache key carries the device as
:func:`.scorer.train_key` writes it: a run on the CPU keeps the key it had before the chapter
had the parameter (``"device": "auto"``, :class:`~rnnlib.train.TrainConfig`'s default, which
resolved to the CPU), a run on a GPU keys ``"cuda"``.

Deviations
----------
- The scorer's optimiser is a parameter (``rnn_optimizer``, ``rnn_lr``, ``rnn_clip``; the
  defaults are A §4.1's Adadelta at lr 1 without clipping). The ``cpu`` profile trains with
  Adam at 3e-3 and clipping at 1 (the paper's Adadelta was behind it on held-out pairs:
  ``profiles/README.md``).
- A second network, the same one trained on pairs drawn by their phrase-table counts
  (``rnn_check_optimiser`` switches it on; ``rnn_check_updates`` long, 1,000 on ``cpu``), is
  C-A-F3-3's counterfactual (:mod:`.counts`); the paper trained no such network.
- Model selection: the network kept is the one with the lowest NLL on held-out phrase pairs
  (A gives no stopping rule); never test BLEU.
- The feature is A's reading, log p(f | e) of the whole phrase, ``<end>`` included,
  unnormalised; a "+RNN per word" row divides it by the target's words plus ``<end>``, which
  A's text does not support, so no claim reads it.
- MERT: the rows that add a score start from the Baseline's tuned weights of the same seed with
  the new weight at 0 (``mert_start="baseline"``; ``"defaults"`` keeps Moses' defaults), with
  ``mert_restarts`` random restarts per decoding; the +RNN system is tuned from Moses' defaults
  too, with ``mert_default_seeds`` further MERT runs in a row of its own, which no claim reads.
- The dev set is split: MERT tunes on its first part, and the claims read the held-out rest;
  A's dev column is its tuning set. C-A-T1-1, C-A-T1-2 and C-A-T1-4 read one held-out set
  (the held-out dev part and test together) against the Bible's three French versions (A: one
  reference); MERT tunes on the first.
- The CSLM rows rescore n-best lists instead of scoring partial translations in the search
  (see :mod:`rnnlib.smt.rescore`, :mod:`rnnlib.smt.cslm`).
- Other choices: see :mod:`rnnlib.smt.rnn_scorer` and the chapter's departures table.
"""
