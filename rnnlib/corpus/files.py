"""The user's own parallel corpus: plain-text files, one sentence per line.

Two layouts, per split (``train``, ``dev``, ``test``):

* ``pair``: ``<dir>/<split>.<lang>`` for each language, e.g. ``train.en`` and ``train.fr``
  (the name pattern is a parameter, default ``"{split}.{lang}"``); line ``i`` of one file
  translates line ``i`` of the other.
* ``tsv``: ``<dir>/<split>.tsv`` with ``source<TAB>target`` on every line, in the order
  ``src_lang``, ``tgt_lang``.

Files are streamed, never held whole in memory. Bad input stops with a
:class:`CorpusFileError` naming the file and the line (byte offsets count from 1, like line
numbers): a missing file, an empty file, a compressed file (recognised by its magic bytes
whatever its name), bytes that are not UTF-8, files whose line counts differ, a TSV line
without exactly one tab. A pair where either side is empty (after stripping spaces) is passed
on with that side ``""``: the prepared corpus skips it and lists it by file and line.

Deviations: none (the papers' WMT'14 files can be read as they are; no cleaning rule is
applied to user files, only the stripping of spaces at both ends of a line).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Iterator

from ..cache import config_hash, file_sha256

SPLITS = ("train", "dev", "test")


class CorpusFileError(ValueError):
    """Bad user corpus input; the message starts with ``<file>:<line>:`` where a line applies."""


@dataclass
class FileSpec:
    """Where the files of one split are."""

    split: str
    paths: tuple[Path, ...]  # (src, tgt) for ``pair``, (tsv,) for ``tsv``


#: magic bytes at the start of a compressed file -> (format, how to decompress it)
COMPRESSED = {
    b"\x1f\x8b": ("gzip", "gunzip -k"),
    b"BZh": ("bzip2", "bunzip2 -k"),
    b"\xfd7zXZ\x00": ("xz", "unxz -k"),
    b"\x28\xb5\x2f\xfd": ("zstd", "unzstd"),
}


def _compression(path: Path) -> tuple[str, str] | None:
    with open(path, "rb") as f:
        head = f.read(6)
    return next((v for magic, v in COMPRESSED.items() if head.startswith(magic)), None)


def locate(
    folder: Path, layout: str, src_lang: str, tgt_lang: str, pattern: str = "{split}.{lang}"
) -> list[FileSpec]:
    """The files of every split; raises :class:`CorpusFileError` for a missing or empty file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CorpusFileError(f"{folder}: the corpus folder (corpus_dir) does not exist")
    if layout not in ("pair", "tsv"):
        raise CorpusFileError(f"corpus_layout={layout!r}: choose 'pair' or 'tsv'")
    specs = []
    for split in SPLITS:
        if layout == "pair":
            paths = tuple(
                folder / pattern.format(split=split, lang=lang) for lang in (src_lang, tgt_lang)
            )
        else:
            paths = (folder / f"{split}.tsv",)
        for p in paths:
            if not p.is_file():
                raise CorpusFileError(f"{p}: file not found (the {split} split needs it)")
            if p.stat().st_size == 0:
                raise CorpusFileError(f"{p}: the file is empty")
            packed = _compression(p)
            if packed:
                raise CorpusFileError(
                    f"{p}: this is a {packed[0]}-compressed file (it starts with {packed[0]}'s "
                    f"magic bytes), not plain text: decompress it first ({packed[1]} {p.name}) "
                    "and give the plain file that name"
                )
        specs.append(FileSpec(split, paths))
    return specs


def checksum(specs: list[FileSpec]) -> str:
    """A hash of every file's content (the ``data=`` of the prepared corpus)."""
    return config_hash(
        {f"{s.split}:{i}": file_sha256(p) for s in specs for i, p in enumerate(s.paths)}, 16
    )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without the newline)``, decoding each line strictly as UTF-8."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise CorpusFileError(
                    f"{path}:{number}: bytes that are not UTF-8 at byte {e.start + 1} "
                    f"of the line ({raw[max(0, e.start - 10) : e.start + 10]!r})"
                ) from None
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]  # a UTF-8 byte-order mark
            yield number, text.rstrip("\r\n")


def read_pairs(spec: FileSpec) -> Iterator[tuple[int, str | None, str | None]]:
    """``(line number, source, target)`` for every line of one split, spaces stripped at both
    ends; an empty line gives an empty side (``""``), for the caller to skip."""
    if len(spec.paths) == 2:
        src_path, tgt_path = spec.paths
        for a, b in zip_longest(_lines(src_path), _lines(tgt_path)):
            if a is None or b is None:
                longer, shorter, at = (
                    (tgt_path, src_path, b[0]) if a is None else (src_path, tgt_path, a[0])
                )
                raise CorpusFileError(
                    f"{longer}:{at}: line {at} has no partner: {shorter} has only "
                    f"{at - 1} lines (the two files must have equal line counts)"
                )
            yield a[0], a[1].strip(), b[1].strip()
    else:
        (path,) = spec.paths
        for number, line in _lines(path):
            if not line.strip():
                yield number, "", ""
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                raise CorpusFileError(
                    f"{path}:{number}: expected 'source<TAB>target', found {len(fields) - 1} tabs"
                )
            yield number, fields[0].strip(), fields[1].strip()
