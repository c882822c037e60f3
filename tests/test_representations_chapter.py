"""The representations chapter (paper A, Figs. 4-7 and §2.3) as the smoke build ran it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from rnnlib.book import results

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def chapter(smoke_book):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, results.load(out / "results").values(
        "representations"
    )  # every number and text the chapter glued


def _one(out: Path, item: str, ext: str) -> Path:
    found = sorted((out / "figures").glob(f"representations-{item}-smoke-*.{ext}"))
    assert len(found) == 1, f"expected one {ext} of {item}, found {found}"
    return found[0]


def coloured_marks(png: Path) -> dict[int, int]:
    """The hues of a figure's saturated pixels and how many pixels each covers: the points, lines
    and bars drawn in a palette's colours (axes, text and grey unlabelled points are not
    saturated; antialiased edges keep their colour's hue). Hues are binned in 24 sectors."""
    import matplotlib.colors as mcolors
    import matplotlib.image as mimage

    rgb = mimage.imread(png)[..., :3].reshape(-1, 3).astype(float)
    if rgb.max() > 1:
        rgb = rgb / 255
    hsv = mcolors.rgb_to_hsv(rgb)
    strong = hsv[(hsv[:, 1] > 0.35) & (hsv[:, 2] > 0.25)]
    bins, counts = np.unique((strong[:, 0] * 24).astype(int) % 24, return_counts=True)
    return {int(b): int(c) for b, c in zip(bins, counts)}


def drawn_colours(png: Path, min_pixels: int = 40) -> int:
    """How many distinct palette hues :func:`coloured_marks` finds on at least ``min_pixels``
    pixels each."""
    return sum(c >= min_pixels for c in coloured_marks(png).values())


def test_the_network_is_the_cho2014_chapters_phrase_scorer(chapter):
    out, values = chapter
    events = [json.loads(line) for line in (out / "build-log.jsonl").read_text().splitlines()]
    scorers = {
        c: [e for e in events if e["kind"] == "cho2014/scorer" and e["chapter"] == c]
        for c in ("cho2014", "representations")
    }
    assert scorers["representations"], "the representations chapter read no cho2014/scorer artifact"
    key = scorers["cho2014"][0]["key"]
    assert values["rep-scorer-key"].strip("`") == key
    mine = [e for e in scorers["representations"] if e["key"] == key]
    assert mine and all(e["hit"] for e in mine)  # read, not trained a second time
    # the only other scorers it makes are the §2.3 ablation's: tanh units, and the GRU stopped at
    # the same count; and the same three for each further alignment it read (none in a
    # build from an empty cache)
    further = int(values["rep-rebuilds-n"]) - 1
    assert len({e["key"] for e in scorers["representations"]} - {key}) == 2 + 3 * further
    assert not any(e["kind"] == "representations/scorer" for e in events)


#: the palette colours each map must show at least: Figs. 4-7 colour the points by category or
#: class (the seaborn hue); grey (unlabelled), axes and text do not count
FIGURE_COLOURS = {"rep-fig4": 3, "rep-fig5": 2, "rep-fig6": 2, "rep-fig7": 2}


def test_every_figure_of_the_paper_is_drawn(chapter):
    """Each map shows points in the palette's colours, not only axes, text and grey: a map whose
    points were not drawn, or drawn without their category's hue, fails. The gates figure (black
    points) is an image of its 10 x 4 inch canvas."""
    import matplotlib.image as mimage

    out, values = chapter
    for item, colours in FIGURE_COLOURS.items():
        png = _one(out, item, "png")
        assert drawn_colours(png) >= colours, (item, coloured_marks(png))
    height, width = mimage.imread(_one(out, "rep-gates", "png")).shape[:2]
    assert width / height == pytest.approx(10 / 4, rel=0.15)


def test_purity_table_sets_each_representation_beside_chance_and_its_baselines(chapter):
    out, values = chapter
    table = pd.read_csv(_one(out, "rep-purity", "csv")).set_index("representation")
    assert list(table.index) == [
        "trained network",
        "untrained network",
        "untrained network, second initialisation",
        "bag of words",
        "bag of words, network's size",
        "random vectors",
        "chance",
        "bag of words, leak kept",
    ]
    assert ((table >= 0) & (table <= 1)).all().all()
    # chance, worked out from the word categories table: a random other labelled word shares a
    # word's category with probability (n_c - 1) / (N - 1); a category with fewer than
    # min_members (2) words is left out of the measure. The measure also leaves out a neighbour
    # that is the same word in another case (the word defines its label), which the formula
    # counts: they agree to within a hundredth (the exclusion itself is tested in
    # test_representations_claims.py)
    words = pd.read_csv(_one(out, "rep-word-categories", "csv")).set_index("category")["words"]
    n_c = words[words >= 2].to_numpy(dtype=float)
    chance = float((n_c * (n_c - 1)).sum() / (n_c.sum() * (n_c.sum() - 1)))
    assert table.loc["chance", "words: category"] == pytest.approx(chance, abs=0.01)
    assert float(values["rep-word-chance"]) == pytest.approx(chance, abs=0.01)
    assert float(values["rep-word-trained"]) == table.loc["trained network", "words: category"]
    for key in ("words", "sem", "pat"):  # the claim's verdict and the second one, both glued
        for glue in (f"rep-verdict-{key}", f"rep-bow-{key}"):
            assert values[glue].startswith("**"), values[glue]
        assert values[f"rep-result-{key}"] in ("measured", "not measured")
        control = values[f"rep-control-{key}"]
        assert control.startswith("**") or control.startswith("nothing"), control


def test_every_claim_of_the_chapter_is_recorded_with_the_verdict_its_prose_shows(chapter):
    from rnnlib.book import claims
    from rnnlib import verdicts

    out, values = chapter
    recorded = {
        r.claim: r for r in claims.load_checks(out / "results") if r.chapter == "representations"
    }
    glued = {
        "C-A-F4-1": "rep-verdict-words",
        "C-A-F5-1": "rep-verdict-sem",
        "C-A-F5-2": "rep-verdict-pat",
        "C-A-GRU-2": "rep-verdict-gates",
        "C-A-GRU-1": "rep-verdict-ablation",
    }
    assert set(recorded) == set(glued)
    for claim, key in glued.items():
        verdict = verdicts.evaluate(
            recorded[claim].check
        )  # evaluated again from the recorded evidence
        assert values[key] == claims.markdown(verdict) == values[f"claim-{claim}"]
        if recorded[claim].check.rule == "intervals_above":
            for _, diff, low, high in recorded[claim].check.evidence["tests"]:
                assert low <= diff <= high
            # every check has a control, and on the smoke corpus no control holds where the
            # claim is above its floor (below it, the smoke network learned nothing, and which
            # phrases the sample holds moves with eflomal's unseeded alignment)
            assert recorded[claim].check.control is not None
            check = recorded[claim].check
            below = check.floor is not None and verdicts._below_floor(check.floor)
            assert verdict.control != verdicts.HOLDS or below, (claim, verdict)


def test_the_tanh_ablation_is_compared_at_the_same_updates(chapter):
    out, values = chapter
    table = pd.read_csv(_one(out, "rep-ablation-samples", "csv"))
    assert list(table.columns) == [
        "source",
        "held-out target",
        "GRU: most frequent sample",
        "tanh: most frequent sample",
    ]
    smoke = yaml.safe_load((ROOT / "profiles" / "smoke.yml").read_text(encoding="utf-8"))
    assert len(table) == smoke["chapters"]["representations"]["ablation_sources"]  # one a source
    # the GRU's curve and the tanh network's, each in a hue of its own
    assert drawn_colours(_one(out, "rep-ablation", "png")) >= 2
    assert (
        float(values["rep-abl-gap-low"])
        <= float(values["rep-abl-gap"])
        <= float(values["rep-abl-gap-high"])
    )
    assert int(values["rep-abl-updates"]) <= int(values["rep-updates"])


def test_gate_statistics_are_the_evidence_of_the_gates_claim(chapter):
    """The glued correlations and intervals are those the claim C-A-GRU-2 was judged on: minus
    the reset correlation (its interval flipped) and the update correlation, one point per hidden
    unit of the scorer; the phrases read are the profile's ``gate_phrases``."""
    from rnnlib.book import claims
    from rnnlib import verdicts

    out, values = chapter
    assert 0 < float(values["rep-reset-active-mean"]) < 1
    assert 0 < float(values["rep-update-active-mean"]) < 1
    (record,) = [
        r
        for r in claims.load_checks(out / "results")
        if r.chapter == "representations" and r.claim == "C-A-GRU-2"
    ]
    check = record.check
    if check.rule == "across_rebuilds":  # judged on several alignments: the first is the page's
        check = verdicts.Check.from_dict(check.evidence["checks"][0][1])
    assert check.rule == "intervals_above", check
    (reset_name, *reset), (update_name, *update) = check.evidence["tests"]
    assert reset_name.startswith("−Spearman(reset") and update_name.startswith("Spearman(update")
    glued_reset = [-float(values[f"rep-rho-reset{s}"]) for s in ("", "-high", "-low")]
    glued_update = [float(values[f"rep-rho-update{s}"]) for s in ("", "-low", "-high")]
    np.testing.assert_allclose(reset, glued_reset, atol=0.005 + 1e-12)
    np.testing.assert_allclose(update, glued_update, atol=0.005 + 1e-12)
    assert reset[1] <= reset[2] and update[1] <= update[2]  # low <= high
    assert "one point per hidden unit (16)" in check.note  # smoke-cho2014: 16 units
    assert int(values["rep-gate-phrases"]) == 200  # profiles/smoke.yml: gate_phrases


# -- the chapter on the user's files, in a language the category rules do not read ---------------

#: a lowercase, non-English source: no word of the English lists, no capital (so no name); "7" is
#: the only labelled word (a number), in a few sentences
SOURCE_WORDS = (
    "maison chat chien petit grand dort court voit rouge vieux homme femme enfant fleuve".split()
)


def write_unlabelled_corpus(folder: Path) -> Path:
    """train/dev/test .en/.fr of 200/30/30 lines; the target side is a word-for-word code."""
    import random

    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 200), ("dev", 30), ("test", 30)):
        src = []
        for i in range(n):
            words = [rng.choice(SOURCE_WORDS) for _ in range(rng.randint(4, 14))]
            if i % 20 == 3:
                words.insert(rng.randrange(len(words)), "7")
            src.append(" ".join(words))
        tgt = [" ".join(w[::-1] + "x" for w in line.split()) for line in src]
        (folder / f"{split}.en").write_text("\n".join(src) + "\n", encoding="utf-8")
        (folder / f"{split}.fr").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return folder


def run_on_files(chapter: str, tmp_path: Path, cache: Path):
    """Run ``chapters/<chapter>.md`` (smoke) on :func:`write_unlabelled_corpus`'s files with the
    artifact cache ``cache`` (the session's, fixture ``session_cache``: a corpus or system another
    test computed on the same files is reused, whichever ran first); check that no cell failed and
    that every name its Markdown shows is glued. Returns the output folder."""
    import os
    import subprocess
    import sys

    import nbformat
    from test_corpus_params import glue_names_used, glued

    root = Path(__file__).resolve().parents[1]
    folder = write_unlabelled_corpus(tmp_path / "my corpus")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "rnnlib.cli",
        "run",
        f"chapters/{chapter}.md",
        "--profile",
        "smoke",
        "--no-progress",
        "--out",
        str(out),
        "--cache",
        str(cache),
        "-p",
        "corpus=files",
        "-p",
        f"corpus_dir={folder}",
        "-p",
        "tokenizer=whitespace",
    ]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    nb = nbformat.read(out / "src" / "chapters" / f"{chapter}.ipynb", as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{errors[0]['ename']}: {errors[0]['evalue']}"
    missing = glue_names_used(
        (root / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
    ) - set(glued(nb))
    assert not missing, f"not glued with corpus=files: {sorted(missing)}"
    return out


def test_on_files_with_nearly_empty_categories_claims_are_not_measurable_and_nothing_raises(
    tmp_path, session_cache
):
    from rnnlib.book import claims
    from rnnlib import verdicts

    out = run_on_files("representations", tmp_path, session_cache)
    values = results.load(out / "results").values("representations")
    assert "your own files" in values["rep-corpus"] and "Bible" not in values["rep-corpus"]
    assert values["rep-names"].startswith("no word of the training text is a name")
    recorded = {
        r.claim: r for r in claims.load_checks(out / "results") if r.chapter == "representations"
    }
    for claim, key, column in (
        ("C-A-F4-1", "words", "words: category"),
        ("C-A-F5-1", "sem", "phrases: semantic class"),
    ):
        verdict = verdicts.evaluate(recorded[claim].check)
        assert verdict.verdict == verdicts.UNMEASURABLE and verdict.reason.startswith(column), (
            verdict
        )
        assert values[f"rep-verdict-{key}"] == claims.markdown(verdict) == values[f"claim-{claim}"]
        assert values[f"rep-result-{key}"] == "not measured"
        assert values[f"rep-control-{key}"].startswith("nothing")  # nothing judged, no control
    # the one number word is too few to measure, and the words' paragraph names it
    assert "*number* (1)" in values["rep-left-words"], values["rep-left-words"]
    verdict = values["rep-verdict-words"]  # its reason names every class left out
    assert "number (1)" in verdict and "place (0)" in verdict, verdict
    assert "no point has a category" in verdicts.evaluate(recorded["C-A-F4-1"].check).reason
    # the patterns (tags of the first two words: WORD, NUM) are still a measure, with a verdict of
    # its own: measured, in the table, and the verdict the prose shows
    patterns = verdicts.evaluate(recorded["C-A-F5-2"].check)
    # the rule has its evidence: without the floor it judges (no NaN, no missing test)
    unfloored = dataclasses.replace(recorded["C-A-F5-2"].check, floor=None, control=None)
    assert verdicts.evaluate(unfloored).verdict in (verdicts.HOLDS, verdicts.FAILS, verdicts.NOISE)
    # measured: a rule's verdict, or not measurable only for the network's floor
    assert patterns.verdict != verdicts.UNMEASURABLE or "below the floor" in patterns.reason
    assert values["rep-verdict-pat"] == claims.markdown(patterns) == values["claim-C-A-F5-2"]
    assert values["rep-result-pat"] == "measured"
    table = pd.read_csv(_one(out, "rep-purity", "csv")).set_index("representation")
    assert table["words: category"].isna().all() and table["phrases: semantic class"].isna().all()
    assert table["phrases: pattern"].notna().all()
    assert float(values["rep-pat-trained"]) == table.loc["trained network", "phrases: pattern"]
    for item in ("rep-fig4", "rep-fig5", "rep-fig6", "rep-fig7", "rep-gates"):
        assert _one(out, item, "png").stat().st_size > 1000
    assert (
        "*place*" in values["rep-word-regions"]
    )  # no region for a category without words, and said so


def test_a_rebuild_measures_what_the_chapter_measured_and_reads_only_what_is_cached(
    chapter, session_cache
):
    """The rebuild spread: the measures each further alignment is judged on are the chapter's
    own. The first alignment measured again by rebuild() gives the chapter's trained purities
    (their neighbours are deterministic) and its ablation gap (the cached tanh network); and a
    build of one alignment reads the further ones the cache holds (none from an empty cache),
    computing nothing."""
    from rnnlib.book.execute import resolve_all
    from rnnlib.cache import ArtifactCache
    from rnnlib.experiments.cho2014 import setting as cho_setting
    from rnnlib.book.params import typed
    from rnnlib.experiments.representations import rebuilds as representation_rebuilds
    from rnnlib.experiments.representations.setting import Params

    _, values = chapter
    root = Path(__file__).resolve().parents[1]
    cho = cho_setting.cho2014_params(root, "smoke")
    resolved = resolve_all(root, "smoke", {}, only=["representations"])[1]["representations"]
    params = typed(Params, resolved, "representations")
    cache = ArtifactCache(session_cache)
    corpus = cho_setting.cho2014_corpus(cache, cho)
    again = representation_rebuilds.rebuild(cache, corpus, cho, params, 1)
    for col, (_, _, num) in representation_rebuilds.PURITY_CLAIMS.items():
        measured = again.purity_values[col]["trained network"]
        assert round(measured, 3) == pytest.approx(float(values[f"rep-{num}-trained"]), abs=1e-9)
    assert round(float(again.ablation.interval[0]), 2) == pytest.approx(
        float(values["rep-abl-gap"])
    )
    before = len(cache.events)
    found = representation_rebuilds.rebuilds(cache, corpus, {**cho, "cached_spread": True}, params)
    assert all(e["hit"] for e in cache.events[before:])  # read, never computed
    assert len(found) == int(values["rep-rebuilds-n"]) - 1  # what the chapter read (from empty: 0)
    if not found:
        assert "one alignment" in str(values["rep-rebuilds-text"])
