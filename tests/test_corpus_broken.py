"""A user's own corpus with broken lines: each case is built at run time, and the test checks
the verdict (dropped and listed, or refused) and what the message says."""

import bz2
import gzip
import lzma
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from rnnlib.cache import ArtifactCache
from rnnlib.corpus.dataset import CopiedCorpus, CorpusConfig, NoUsablePairs, prepare_corpus
from rnnlib.corpus.files import CorpusFileError

ROOT = Path(__file__).resolve().parents[1]
WORDS = "the a house cat dog small big sleeps runs sees red old man woman child river".split()


def write_corpus(folder: Path, n_train: int = 40, words: tuple[int, int] = (3, 12)) -> Path:
    """train/dev/test .en/.fr of n_train/8/8 lines; the French side is a word-for-word code."""
    import random

    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("dev", 8), ("test", 8)):
        en = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(*words))) + f" {split}{i} ."
            for i in range(n)
        ]
        fr = [" ".join(w[::-1] for w in line.split()) for line in en]
        (folder / f"{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
        (folder / f"{split}.fr").write_text("\n".join(fr) + "\n", encoding="utf-8")
    return folder


def set_line(path: Path, number: int, text: str) -> None:
    """Replace line ``number`` (from 1) of ``path``."""
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[number - 1] = text
    path.write_text("\n".join(lines), encoding="utf-8")


def prep(folder: Path, cache: Path, **kw):
    cfg = CorpusConfig(corpus="files", corpus_dir=str(folder), **kw)
    return prepare_corpus(cfg, ArtifactCache(cache))


def leftovers(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))


# -- dropped by the length guard, and named -------------------------------------------------------


def test_a_one_mib_line_is_dropped_by_the_guard_and_named(tmp_path):
    folder = write_corpus(tmp_path / "c")
    set_line(folder / "train.en", 10, "word " * (1 << 18))  # 1 MiB, 262,144 tokens
    c = prep(folder, tmp_path / "cache")  # the Moses tokenizer never sees it
    assert len(c.train) == 39 and c.filters.loc["train", "guard"] == 1
    assert c.skipped("train").to_dict("records") == [
        {"split": "train", "reason": "guard", "where": "train.en:10"}
    ]
    assert c.stats.loc[("train", "src"), "len_max"] < 20 and "word" not in c.src_vocab
    assert not c.near_duplicates("test").any()
    # the guard is a parameter: without it the line is a training pair
    off = prep(folder, tmp_path / "cache", length_guard=None, tokenizer="whitespace")
    assert len(off.train) == 40 and off.stats.loc[("train", "src"), "len_max"] == 1 << 18


def test_a_one_mib_token_is_dropped_and_the_file_of_its_side_named(tmp_path):
    folder = write_corpus(tmp_path / "c")
    set_line(folder / "train.fr", 4, "x" * (1 << 20))
    c = prep(folder, tmp_path / "cache")
    assert len(c.train) == 39 and list(c.skipped(reason="guard")["where"]) == ["train.fr:4"]
    assert c.tgt_vocab.stoi.keys().isdisjoint({"x" * (1 << 20)})


def test_the_token_guard_applies_to_every_split(tmp_path):
    folder = write_corpus(tmp_path / "c")
    set_line(folder / "test.en", 2, "a " * 1500)  # 3,000 characters, 1,500 tokens
    c = prep(folder, tmp_path / "cache", length_guard=1000)
    assert (len(c.test), c.filters.loc["test", "guard"]) == (7, 1)
    assert list(c.skipped("test")["where"]) == ["test.en:2"]
    assert len(prep(folder, tmp_path / "cache", length_guard=2000).test) == 8


# -- refused, with a message that says what to do, and nothing left in the cache ------------------


def test_every_pair_too_long_says_how_many_and_which_parameter(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=20, words=(60, 70))
    cache = tmp_path / "cache"
    with pytest.raises(NoUsablePairs) as e:
        prep(folder, cache, max_len=50)
    msg = str(e.value)
    assert msg.startswith(
        "the train split has no usable pairs: of 20 pairs read, 20 dropped "
        "(a side longer than max_len=50 tokens: train.en:1, train.en:2, train.en:3, ...)"
    )
    assert (
        "0 of 20 training pairs left have at most 50 tokens on both sides: "
        "raise max_len or set it to None" in msg
    )
    assert e.value.split == "train" and e.value.counts["too_long"] == 20
    assert leftovers(cache) == []  # not even an empty work folder


def test_only_empty_sides_says_so_and_names_the_lines(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=5)
    (folder / "train.fr").write_text("\n" * 5, encoding="utf-8")
    with pytest.raises(
        NoUsablePairs,
        match=r"of 5 pairs read, 5 dropped \(an empty side: train\.fr:1, "
        r"train\.fr:2, train\.fr:3, \.\.\.\)$",
    ):
        prep(folder, tmp_path / "cache")


def test_all_pairs_past_the_guard_names_length_guard(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=3)
    (folder / "dev.en").write_text("".join("b " * 30 + "\n" for _ in range(8)), encoding="utf-8")
    with pytest.raises(
        NoUsablePairs,
        match=r"the dev split has no usable pairs: of 8 pairs read, 8 dropped \(a "
        r"side longer than the length guard, 20 tokens or 200 characters: "
        r"dev\.en:1, .*raise length_guard or set it to None",
    ):
        prep(folder, tmp_path / "cache", length_guard=20)


@pytest.mark.parametrize(
    "compress, name", [(gzip.compress, "gzip"), (bz2.compress, "bzip2"), (lzma.compress, "xz")]
)
def test_a_compressed_file_under_a_plain_name_is_recognised(tmp_path, compress, name):
    folder = write_corpus(tmp_path / "c")
    (folder / "dev.fr").write_bytes(compress((folder / "dev.fr").read_bytes()))
    cache = tmp_path / "cache"
    with pytest.raises(
        CorpusFileError, match=rf"dev\.fr: this is a {name}-compressed file .* decompress it first"
    ):
        prep(folder, cache)
    assert leftovers(cache) == []


def test_byte_offsets_count_from_one_like_line_numbers(tmp_path):
    folder = write_corpus(tmp_path / "c")
    lines = (folder / "train.en").read_bytes().split(b"\n")
    lines[2] = b"abc\xff def"
    (folder / "train.en").write_bytes(b"\n".join(lines))
    with pytest.raises(
        CorpusFileError, match=r"train\.en:3: bytes that are not UTF-8 at byte 4 of the line"
    ):
        prep(folder, tmp_path / "cache")


def test_binary_bytes_deep_in_a_file_are_refused_and_leave_no_entry(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=400)
    cache = tmp_path / "cache"
    good = prep(folder, cache)  # an entry of the same config, built before the file broke
    before = leftovers(cache)
    entry = [str(good.path.relative_to(cache))] + sorted(
        str(p.relative_to(cache)) for p in good.path.rglob("*")
    )
    clean = (folder / "train.fr").read_bytes()
    lines = clean.split(b"\n")
    lines[349] = b"data\x00\x00\x00*\x00\x10" + lines[349]  # valid UTF-8, not text
    (folder / "train.fr").write_bytes(b"\n".join(lines))
    with pytest.raises(CorpusFileError) as e:
        prep(folder, cache)  # dev and test were read and written: the train split stops it
    assert str(e.value).startswith(
        f"{folder / 'train.fr'}:350: bytes that are not text: the control character "
        "U+0000 NUL at byte 5 of the line (and 4 more on the line)"
    )
    after = leftovers(cache)  # no new entry, no work folder; the old entry untouched
    assert set(after) <= set(before) and [p for p in after if p.startswith(entry[0])] == entry
    (folder / "train.fr").write_bytes(clean)
    again = prep(folder, cache)
    assert again.path == good.path and len(again.train) == len(good.train)


# -- skipped, counted and listed ------------------------------------------------------------------


def test_one_sided_empty_lines_are_listed_by_file_and_line(tmp_path):
    folder = write_corpus(tmp_path / "c")
    set_line(folder / "train.en", 3, "")
    set_line(folder / "train.fr", 8, "   ")
    c = prep(folder, tmp_path / "cache")
    assert len(c.train) == 38 and c.filters.loc[
        "train", ["read", "missing_side", "kept"]
    ].tolist() == [40, 2, 38]
    assert list(c.skipped("train", "missing_side")["where"]) == ["train.en:3", "train.fr:8"]
    assert c.label("train", 2) == "train.en:4"  # line numbers survive the skipped lines


def test_a_failed_make_leaves_its_work_only_if_it_wrote_there(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")

    def fails(out, work, keep):
        if keep:
            (work / "checkpoint").write_text("1")
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        cache.build("demo/x", {"n": 1}, lambda out, work: fails(out, work, False))
    assert leftovers(cache.root) == []
    with pytest.raises(RuntimeError):
        cache.build("demo/x", {"n": 2}, lambda out, work: fails(out, work, True))
    assert [p for p in leftovers(cache.root) if p.endswith("checkpoint")]  # resumable state is kept


# -- the data chapter on a corpus whose every pair is longer than the papers' filters --------------


@pytest.mark.slow  # runs a chapter in a process of its own: about 10 s
def test_data_chapter_shows_zero_for_a_filter_no_pair_passes(tmp_path):
    folder = write_corpus(tmp_path / "long", n_train=30, words=(55, 65))
    set_line(folder / "train.fr", 5, "")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    cmd = [
        sys.executable,
        "-m",
        "rnnlib.cli",
        "run",
        "chapters/data.md",
        "--profile",
        "smoke",
        "--no-progress",
        "--out",
        str(tmp_path / "out"),
        "--cache",
        str(tmp_path / "cache"),
        "-p",
        "corpus=files",
        "-p",
        f"corpus_dir={folder}",
        "-p",
        "tokenizer=whitespace",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "without encryption" not in proc.stderr  # the kernel's sockets are encrypted
    nb = nbformat.read(tmp_path / "out" / "src" / "chapters" / "data.ipynb", as_version=4)
    glued = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = {
                    k.split("/", 2)[-1] if k.startswith("application/papermill") else k: v
                    for k, v in o["data"].items()
                }
    assert (
        glued["corpus-pairs-le50-pct"]["text/plain"]
        == glued["corpus-pairs-le30-pct"]["text/plain"]
        == "0.0"
    )
    # the prose speaks of these files and this tokenizer, not of the Bible
    assert glued["corpus-intro"]["text/markdown"] == "your own files, English → French"
    assert "train.en + train.fr" in glued["corpus-split-books"]["text/html"]
    assert glued["corpus-token-unit"]["text/markdown"] == "tokens (the words between spaces)"
    skipped = glued["corpus-skipped"]["text/html"]  # a table: the first pairs each filter dropped
    assert "empty line skipped" in skipped and "train.fr:5" in skipped


# -- a target file that is a copy of the source -------------------------------------------------


def test_a_target_file_copied_from_the_source_is_refused_naming_the_files(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=20)
    (folder / "train.fr").write_bytes((folder / "train.en").read_bytes())
    cache = tmp_path / "cache"
    with pytest.raises(CopiedCorpus) as e:
        prep(folder, cache)
    assert str(e.value).startswith(
        "train.en and train.fr: 20 of 20 training pairs read (100%) have the same text on both "
        "sides (train.en:1 = train.fr:1, train.en:2 = train.fr:2, train.en:3 = train.fr:3, ...)"
    )
    assert leftovers(cache) == []  # nothing of the refused build is kept


def test_a_few_identical_pairs_are_translations_and_stay(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=20)
    for line in (3, 7):  # a name and a number read the same in both languages
        set_line(folder / "train.en", line, "Jerusalem 1948 .")
        set_line(folder / "train.fr", line, "Jerusalem 1948 .")
    c = prep(folder, tmp_path / "cache")
    assert len(c.train) == 20
    assert c.filters.loc["train", "kept"] == 20


def test_a_corpus_mostly_copied_is_refused_even_with_some_real_translations(tmp_path):
    folder = write_corpus(tmp_path / "c", n_train=20)
    en = (folder / "train.en").read_text(encoding="utf-8").split("\n")
    fr = (folder / "train.fr").read_text(encoding="utf-8").split("\n")
    mixed = en[:11] + fr[11:]  # 11 of 20 copied
    (folder / "train.fr").write_text("\n".join(mixed), encoding="utf-8")
    with pytest.raises(CopiedCorpus, match=r"11 of 20 training pairs read \(55%\)"):
        prep(folder, tmp_path / "cache")


def test_the_corpus_command_reports_bad_input_on_stderr_naming_the_files(tmp_path, capsys):
    import argparse

    from rnnlib.corpus import cli

    folder = write_corpus(tmp_path / "c", n_train=20)
    (folder / "train.fr").write_bytes((folder / "train.en").read_bytes())
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(
        ["--corpus", "files", "--corpus-dir", str(folder), "--cache", str(tmp_path / "cache")]
    )
    assert cli.main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("rnnlib corpus: error: train.en and train.fr: 20 of 20 training pairs")
