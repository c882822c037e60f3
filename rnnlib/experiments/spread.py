"""The rebuild spread that a ``spread`` build left in the cache.

The rebuild spread is how far the book's numbers move when the phrase-based systems are built on
other word alignments and the networks trained with other seeds. The ``cpu`` profile builds the
phrase-based systems on one eflomal alignment and trains paper B's "-50" pair with one seed: the
further alignments and seeds that measure how far a rebuild moves the book's numbers cost hours
more (the ``spread`` profile's description gives each part's time). The ``spread`` profile
(``cpu`` with three of each) builds them into the same cache. A chapter run with
``cached_spread`` then reads, beside the replicates it builds itself, every further one the
cache already holds (:func:`further_cached`) and computes none: its page states the spread
measured by that build, and its verdicts account for it. A ``cpu`` page built from an empty
cache reads none and says how to measure the spread.

* :func:`further_cached` -- replicates ``start, start + 1, ...`` for as long as the cache holds
  all of each;
* :func:`origin_text` -- how many replicates a page reads, and where they came from;
* :func:`with_mean_sd` -- a replicates table with its ``mean`` and ``sd`` rows;
* :func:`across` -- a claim's check on the chapter's own replicate, judged on every replicate
  (:func:`rnnlib.verdicts.across_rebuilds`).
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

import pandas as pd

from .. import verdicts
from ..cache import ArtifactCache, NotCached

T = TypeVar("T")

#: the most further replicates a chapter looks for (the chapters' own ``[1, 20]`` range)
MAX_CACHED = 20


def further_cached(
    cache: ArtifactCache, make: Callable[[int], T], start: int, stop: int = MAX_CACHED + 1
) -> list[T]:
    """``[make(start), make(start + 1), ...]``, each called under
    :meth:`ArtifactCache.lookup_only` (nothing is computed), up to the first replicate the cache
    lacks any artifact of, and below ``stop``. ``make(r)`` builds replicate ``r`` (an alignment
    index, a seed, ...) as the chapter would."""
    out: list[T] = []
    for r in range(start, stop):
        try:
            with cache.lookup_only():
                out.append(make(r))
        except NotCached:
            break
    return out


def origin_text(built: int, read: int, unit: str) -> str:
    """Where a page's replicates come from (Markdown), e.g. "3 alignments: 1 built here and 2
    read from the cache, where a `spread` build left them"."""
    total = built + read
    plural = unit if total == 1 else f"{unit}s"
    if not read:
        return f"{total} {plural}, built by this build"
    return (
        f"{total} {plural}: {built} built by this build and {read} read from the cache, where a "
        "`spread` build left them (`cached_spread`)"
    )


def across(
    first: verdicts.Check,
    others: Sequence[tuple[int, verdicts.Check]],
    unit: str = "alignment",
    first_index: int = 1,
) -> verdicts.Check:
    """``first`` (the chapter's own check, on ``unit`` ``first_index``) judged on every
    replicate with ``others`` (``(index, check)``); ``first`` itself when there is no other, or
    when its rule is ``not_measurable`` (a claim no replicate can measure, by how it is built)."""
    if not others or first.rule == "not_measurable":
        return first
    items = [(f"{unit} {first_index}", first)] + [(f"{unit} {k}", c) for k, c in others]
    return verdicts.across_rebuilds(items, note=f"one check per {unit} (the rebuild spread)")


def with_mean_sd(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (one row per replicate) with rows ``mean`` and ``sd`` (sample standard
    deviation) below when it has several replicates; as it is with one."""
    if len(table) > 1:
        values = table.copy()
        table.loc["mean"] = values.mean()
        table.loc["sd"] = values.std(ddof=1)
    return table
