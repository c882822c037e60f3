"""Benchmarks that print speed and memory figures beside a reference run in the same process:
the models against straightforward reference implementations (``models``, ``reference``),
corpus preparation (``corpus``) and phrase-based decoding (``smt``)."""
