"""What the RNN Encoder--Decoder learned (chapter ``representations``; Cho et al. 2014, §2.3,
§4.4, Figs. 4--7): the word embeddings, phrase codes and gates of the ``cho2014`` chapter's phrase
scorer, the clustering and gating claims measured against their baselines and controls, and the
gating ablation (tanh units in place of the gated ones).

Deviations
----------
- The categories are rules over the corpus and short English word lists, not a tagger; a word
  category or semantic class of fewer than ``min_members`` points is left out of the measure,
  and a measure with nothing left to compare is not measurable.
- A judges the maps by eye; the chapter judges each clustering claim by the purity of the
  trained representation against chance and against the same network untrained (both with a
  bootstrap interval over the labelled points in which each point's neighbours stay as
  computed), a neighbour sharing the word that defines the point's label not counted; the bag of
  words gives a second verdict beside the claim's. Every claim carries a control (the untrained
  network in the trained one's place, or its gates) and the floor (the scorer beats the unigram
  model of its targets).
- "Active" gates and a unit's memory are ours (:mod:`.probes`).
- The gating ablation's deviations are :mod:`.gating_ablation`'s.
"""
