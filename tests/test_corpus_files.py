"""The user's own parallel files: both layouts, and a clear error naming the file and line for
every kind of bad input."""

import pytest

from rnnlib.cache import ArtifactCache
from rnnlib.corpus.dataset import CorpusConfig, prepare_corpus
from rnnlib.corpus.files import CorpusFileError

TRAIN = [
    ("the house is small .", "la maison est petite ."),
    ("the cat sleeps .", "le chat dort ."),
    ("a small cat .", "un petit chat ."),
] * 5
DEV = [("the house .", "la maison ."), ("a cat .", "un chat .")]
TEST = [("the small house .", "la petite maison ."), ("the cat .", "le chat .")]


def write_pairs(folder, splits=None, pattern="{split}.{lang}"):
    splits = splits or {"train": TRAIN, "dev": DEV, "test": TEST}
    for split, pairs in splits.items():
        for k, lang in enumerate(("en", "fr")):
            (folder / pattern.format(split=split, lang=lang)).write_text(
                "".join(p[k] + "\n" for p in pairs), encoding="utf-8"
            )
    return folder


def prep(folder, tmp_path, **kw):
    cfg = CorpusConfig(
        corpus="files", corpus_dir=str(folder), tokenizer=kw.pop("tokenizer", "whitespace"), **kw
    )
    return prepare_corpus(cfg, ArtifactCache(tmp_path / "cache"))


def test_pair_files_are_read_and_encoded(tmp_path):
    c = prep(write_pairs(tmp_path), tmp_path)
    assert (len(c.train), len(c.dev), len(c.test)) == (15, 2, 2)
    # train pairs equal to a dev/test side are dropped: none here
    assert c.tgt_vocab.decode(c.test.tgt[0]) == ["la", "petite", "maison", "."]
    assert c.detok("test") == ["la petite maison .", "le chat ."]
    assert c.label("dev", 1) == "dev.en:2"


def test_tsv_layout_and_empty_lines_are_skipped_and_counted(tmp_path):
    for split, pairs in {"train": TRAIN, "dev": DEV, "test": TEST}.items():
        lines = [f"{a}\t{b}" for a, b in pairs]
        if split == "train":
            lines[3:3] = ["", "only source\t ", "\t"]
        (tmp_path / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    c = prep(tmp_path, tmp_path, corpus_layout="tsv", tokenizer="moses")
    assert len(c.train) == 15 and c.filters.loc["train", "missing_side"] == 3
    assert c.rows("train")[3] == 7  # file line numbers survive the skipped lines


def test_pattern_for_other_file_names(tmp_path):
    write_pairs(tmp_path, pattern="news-{split}.{lang}")
    c = prep(tmp_path, tmp_path, corpus_pattern="news-{split}.{lang}")
    assert len(c.dev) == 2


def test_missing_file(tmp_path):
    write_pairs(tmp_path)
    (tmp_path / "test.fr").unlink()
    with pytest.raises(CorpusFileError, match=r"test\.fr: file not found"):
        prep(tmp_path, tmp_path)


def test_empty_file(tmp_path):
    write_pairs(tmp_path)
    (tmp_path / "dev.en").write_bytes(b"")
    with pytest.raises(CorpusFileError, match=r"dev\.en: the file is empty"):
        prep(tmp_path, tmp_path)


def test_differing_line_counts_name_the_file_and_line(tmp_path):
    write_pairs(tmp_path)
    with open(tmp_path / "train.fr", "a", encoding="utf-8") as f:
        f.write("une ligne de trop .\n")
    with pytest.raises(
        CorpusFileError,
        match=r"train\.fr:16: line 16 has no partner: .*train\.en has only 15 lines",
    ):
        prep(tmp_path, tmp_path)


def test_bytes_that_are_not_utf8(tmp_path):
    write_pairs(tmp_path)
    lines = (tmp_path / "train.fr").read_bytes().split(b"\n")
    lines[6] = "la maison est très petite .".encode("latin-1")
    (tmp_path / "train.fr").write_bytes(b"\n".join(lines))
    with pytest.raises(CorpusFileError, match=r"train\.fr:7: bytes that are not UTF-8"):
        prep(tmp_path, tmp_path)


@pytest.mark.parametrize(
    "line, found",
    [
        (b"la maison\x00\x00\x07 est petite .", r"U\+0000 NUL at byte 10 .* \(and 2 more"),
        (b"la \xc3\xa9cole\x0cest petite .", r"U\+000C form feed at byte 10 of the line \("),
        (b"la maison\rest petite .", r"U\+000D carriage return .* CR only"),
        (b"caf\xc3\xa9 \xc2\x85 bar", r"U\+0085 next line at byte 7 "),  # C1, as UTF-8
        (b"x\x1b[31mred\x1b[0m", r"U\+001B escape at byte 2 .* binary content"),
    ],
)
def test_bytes_that_are_not_text_inside_a_line_are_refused(tmp_path, line, found):
    write_pairs(tmp_path)
    lines = (tmp_path / "train.fr").read_bytes().split(b"\n")
    lines[6] = line
    (tmp_path / "train.fr").write_bytes(b"\n".join(lines))
    with pytest.raises(CorpusFileError, match=r"train\.fr:7: bytes that are not text: the "):
        prep(tmp_path, tmp_path)
    with pytest.raises(CorpusFileError, match=found):
        prep(tmp_path, tmp_path)


def test_tabs_and_line_endings_are_text(tmp_path):
    write_pairs(tmp_path)
    text = (tmp_path / "train.en").read_text(encoding="utf-8").replace("\n", "\r\n")
    (tmp_path / "train.en").write_text("\ufeff" + text.replace("small", "small\t"), newline="")
    (tmp_path / "dev.en").write_bytes((tmp_path / "dev.en").read_bytes().rstrip(b"\n"))
    c = prep(tmp_path, tmp_path)
    assert len(c.train) == 15 and c.src_vocab.decode(c.train.src[0]) == [
        "the", "house", "is", "small", "."
    ]  # fmt: skip


def test_a_utf16_file_is_refused_for_its_nul_bytes(tmp_path):
    write_pairs(tmp_path)
    text = (tmp_path / "test.en").read_text(encoding="utf-8")
    (tmp_path / "test.en").write_bytes(text.encode("utf-16-le"))  # no byte-order mark
    with pytest.raises(CorpusFileError, match=r"test\.en:1: .*U\+0000 NUL at byte 2 .*UTF-16"):
        prep(tmp_path, tmp_path)


def test_tsv_line_without_a_tab(tmp_path):
    for split in ("train", "dev", "test"):
        bad = "c d" if split == "train" else "c\td"
        (tmp_path / f"{split}.tsv").write_text(f"a\tb\n{bad}\n", encoding="utf-8")
    with pytest.raises(CorpusFileError, match=r"train\.tsv:2: expected 'source<TAB>target'"):
        prep(tmp_path, tmp_path, corpus_layout="tsv")


def test_missing_folder_and_all_empty_split(tmp_path):
    with pytest.raises(CorpusFileError, match="does not exist"):
        prep(tmp_path / "nowhere", tmp_path)
    write_pairs(tmp_path, {"train": TRAIN, "dev": [("", "")], "test": TEST})
    with pytest.raises(ValueError, match="the dev split has no usable pairs"):
        prep(tmp_path, tmp_path)


def test_cli_prepares_files_and_reports_bad_input(tmp_path, capsys):
    from rnnlib.cli import main

    write_pairs(tmp_path)
    argv = [
        "corpus",
        "--corpus",
        "files",
        "--corpus-dir",
        str(tmp_path),
        "--tokenizer",
        "whitespace",
        "--cache",
        str(tmp_path / "cache"),
        "--show",
        "stats",
        "examples",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "train=15, dev=2, test=2" in out and "[test.en:1]" in out
    (tmp_path / "dev.fr").unlink()
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert "dev.fr: file not found" in err and out == ""  # errors go to stderr


def test_lowercase_applies_to_tokens_and_references(tmp_path):
    pairs = [("The House .", "La Maison ."), ("A cat .", "Un chat .")]
    write_pairs(
        tmp_path,
        {
            "train": pairs * 3,
            "dev": [("THE CAT .", "LE CHAT .")],
            "test": [("A Dog .", "Un Chien .")],
        },
    )
    c = prep(tmp_path, tmp_path, lowercase=True)
    assert c.text("train", "src")[0] == "the house ." and c.detok("test") == ["un chien ."]
    assert "House" not in c.src_vocab and "house" in c.src_vocab
