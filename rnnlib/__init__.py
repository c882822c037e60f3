"""rnnlib: the models, data, search and book tooling of the RNN Encoder--Decoder / RNNsearch \
replication book.

Cho et al. 2014 (the gated unit, the RNN Encoder--Decoder) and Bahdanau, Cho & Bengio 2015
(RNNsearch), in small PyTorch modules whose docstrings cite the equations they implement.
"""

__version__ = "0.1.0"
