"""How often each of the book's rules is wrong, measured by simulation.

Every claim of the book is judged by a rule of :mod:`rnnlib.verdicts` on intervals of
:mod:`rnnlib.stats`, with a control and a floor. This package runs each rule, as the chapters
apply it, on thousands of simulated test sets shaped like the book's -- whole Bible chapters of
per-sentence BLEU statistics drawn with replacement (:mod:`rnnlib.calibration.pool`), two
systems of equal or known quality made of two translations of every verse
(:mod:`rnnlib.calibration.systems`) -- and counts how often it says "holds" where the claim is
false, how often where it is true, and how often its 95% intervals cover the truth
(:mod:`rnnlib.calibration.run`; the rules: :mod:`rnnlib.calibration.rules`,
:mod:`rnnlib.calibration.more_rules`, :mod:`rnnlib.calibration.lines`; the arithmetic on arrays:
:mod:`rnnlib.calibration.fast_bleu`).
"""

from .pool import Pool, draw_test, pool_from_prepared, synthetic_pool
from .run import DESIGNS, RULES, calibrate, plan_of, table

__all__ = [
    "DESIGNS",
    "Pool",
    "RULES",
    "calibrate",
    "draw_test",
    "plan_of",
    "pool_from_prepared",
    "synthetic_pool",
    "table",
]
