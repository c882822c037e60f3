"""Benchmarks that print speed and memory figures beside a reference run in the same process:
the models against straightforward reference implementations (``models``, ``reference``) or
against another version of this library (``against``: ``rnnlib bench --against DIR``),
corpus preparation (``corpus``) and phrase-based decoding (``smt``)."""
