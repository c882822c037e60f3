"""The phrase-based SMT baseline of Cho et al. (2014) and Bahdanau et al. (2015) ("Moses").

Modules: :mod:`~rnnlib.smt.align` (word alignment), :mod:`~rnnlib.smt.phrases` (phrase table),
:mod:`~rnnlib.smt.lm` (Kneser-Ney n-gram LM), :mod:`~rnnlib.smt.decoder` (stack decoder),
:mod:`~rnnlib.smt.stack_search` (its beam search) and :mod:`~rnnlib.smt.compiled` (that search
compiled with Cython, the fast path),
:mod:`~rnnlib.smt.tune` (MERT), :mod:`~rnnlib.smt.features` (extra phrase-pair features),
:mod:`~rnnlib.smt.system` (the whole baseline through the artifact cache),
:mod:`~rnnlib.bench.smt` (decoding speed).
"""
