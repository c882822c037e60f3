"""Reserved token ids shared by the corpus, the models and the searches.

The papers feed an all-zero embedding as the "previous word" of the first decoder step
(Cho et al. 2014, Appendix A: ``e(y_0) = 0``); ``BOS`` is the id that stands for it, and
models must give it a zero embedding. ``EOS`` ends every target sentence.
"""

PAD = 0
UNK = 1
BOS = 2
EOS = 3
SPECIALS = ("[PAD]", "[UNK]", "[BOS]", "[EOS]")
