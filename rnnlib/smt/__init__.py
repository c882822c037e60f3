"""The phrase-based SMT baseline of Cho et al. (2014) and Bahdanau et al. (2015) ("Moses").

Modules: :mod:`~rnnlib.smt.align` (word alignment), :mod:`~rnnlib.smt.phrases` (phrase table),
:mod:`~rnnlib.smt.lm` (Kneser-Ney n-gram LM), :mod:`~rnnlib.smt.decoder` (stack decoder),
:mod:`~rnnlib.smt.stack_search` (its beam search and n-best lists),
:mod:`~rnnlib.smt.tune` (MERT) and :mod:`~rnnlib.smt.envelope` (its line search's envelopes),
:mod:`~rnnlib.smt.compiled` (the search and the envelopes compiled with Cython, the fast paths),
:mod:`~rnnlib.smt.features` (extra phrase-pair features),
:mod:`~rnnlib.smt.system` (the whole baseline through the artifact cache),
:mod:`~rnnlib.bench.smt` (decoding speed).
"""
