"""Reading the rebuild spread a ``spread`` build left in the cache: lookups that never compute."""

import pytest

from rnnlib.cache import ArtifactCache, NotCached
from rnnlib.experiments.spread import further_cached, origin_text


def write(text, calls):
    def make(out, work):
        calls.append(text)
        (out / "result.txt").write_text(text)

    return make


def test_lookup_only_returns_what_is_cached_and_computes_nothing(tmp_path):
    cache = ArtifactCache(tmp_path)
    calls = []
    cache.build("demo/x", {"n": 1}, write("one", calls))
    with cache.lookup_only():
        found = cache.build("demo/x", {"n": 1}, write("SHOULD NOT RUN", calls))
        with pytest.raises(NotCached, match="demo/x/.* is not in the cache"):
            cache.build("demo/x", {"n": 2}, write("SHOULD NOT RUN", calls))
    assert found.file("result.txt").read_text() == "one" and calls == ["one"]
    assert not any((tmp_path / ".tmp").glob("*"))
    assert not cache.work_dir("demo/x", {"n": 2}).exists()
    cache.build("demo/x", {"n": 2}, write("two", calls))  # outside the block: computed again
    assert calls == ["one", "two"]


def test_further_cached_reads_replicates_up_to_the_first_one_missing_anything(tmp_path):
    cache = ArtifactCache(tmp_path)
    calls = []

    def replicate(r):  # two artifacts per replicate, as a system's alignment and its MERT run
        a = cache.build("demo/align", {"r": r}, write(f"a{r}", calls))
        b = cache.build("demo/tune", {"r": r}, write(f"t{r}", calls))
        return a.file("result.txt").read_text() + b.file("result.txt").read_text()

    for r in (1, 2, 3, 5):
        replicate(r)
    cache.build("demo/align", {"r": 4}, write("a4", calls))  # replicate 4 half built
    before = list(calls)
    assert further_cached(cache, replicate, 2) == ["a2t2", "a3t3"]  # stops at 4, never reaches 5
    assert further_cached(cache, replicate, 2, stop=3) == ["a2t2"]
    assert further_cached(cache, replicate, 6) == []
    assert calls == before  # nothing was computed, replicate 4 stays half built
    assert cache.build("demo/tune", {"r": 4}, write("t4", calls)).from_cache is False


def test_origin_text_says_how_many_replicates_came_from_the_cache():
    assert origin_text(1, 0, "seed") == "1 seed, built by this build"
    assert origin_text(3, 0, "alignment") == "3 alignments, built by this build"
    text = origin_text(1, 2, "alignment")
    assert text.startswith("3 alignments: 1 built by this build and 2 read from the cache")
    assert "`spread`" in text


def test_across_judges_the_chapters_check_on_every_replicate_and_keeps_a_lone_one():
    from rnnlib import verdicts
    from rnnlib.experiments.spread import across

    def check(diff):
        c = verdicts.intervals_above([("gap", diff, diff - 0.1, diff + 0.1)])
        return verdicts.controlled(c, "none", verdicts.intervals_above([("gap", 0.0, -0.1, 0.1)]))

    first = check(1.0)
    assert across(first, []) is first
    unmeasurable = verdicts.not_measurable("built that way")
    assert across(unmeasurable, [(2, unmeasurable)]) is unmeasurable
    both = across(first, [(2, check(-1.0))], unit="seed")
    verdict = verdicts.evaluate(both)
    assert verdict.verdict == verdicts.NOISE and "seed 2: does not hold" in verdict.reason
    assert "seed 1: holds" in verdict.reason
