"""Every result a chapter glues, recorded as it is glued, read back by name, merged for publishing.

**Recording.** :meth:`rnnlib.book.chapter.Chapter.start` opens the chapter's record file
``<results>/<chapter>.json`` afresh (a rerun of the chapter replaces it), and every
``ch.number``, ``ch.text``, ``ch.table`` and ``ch.figure`` appends one entry to it. The file is
rewritten whole after each entry, into a temporary file that then replaces it, so a chapter that
crashes leaves a valid file with every entry made before the crash. ``<results>`` is
``$RNNLIB_RESULTS`` (``rnnlib run``/``rnnlib build`` set it to ``<out>/results``), else
``results/`` beside the figures folder. The file is a JSON list of entries::

    {"name": "rns-gap50", "kind": "number", "value": 5.12,
     "stable_name": "rnnsearch-rns-gap50-cpu-1a2b3c4d", "chapter": "rnnsearch", "profile": "cpu",
     "config_hash": "1a2b3c4d", "commit": "<git HEAD>[+dirty]", "files": [],
     "artifacts": [{"kind": "rnnsearch/run", "key": "..."}, ...]}

``kind`` is ``number``, ``text``, ``table`` or ``figure``. ``value``: the glued number, the
Markdown text, the table as ``{"index", "columns", "data", "index_names", "column_names"}``
(:func:`table_json`: a multi-level label is a list; NaN and other missing values are ``null``),
``null`` for a figure. A non-finite number (NaN, infinity) is ``null`` too. ``files``: the PNG
and PDF of a figure, the CSV of a table (names in the build's ``figures/`` folder).

``artifacts`` says what the result came from, as ``{"kind", "key"}`` of the artifact cache
(``<cache>/<kind>/<key>/``):

* a figure or table records the items of its ``artifacts=`` argument: a cached artifact, or an
  object carrying one (``.artifact``, such as a prepared corpus), by its kind and key; a config
  (a dataclass or dict, which names no cache folder) as ``{"kind": "config/<class>", "key":
  <16-hex hash of the config, null if it holds what JSON cannot>}``;
* a number or text records its own ``artifacts=`` argument the same way;
* without ``artifacts=`` (for any kind), every artifact the chapter has looked up in its cache so
  far (built or found: :attr:`rnnlib.cache.ArtifactCache.events`), in order of first use.
  That is a superset of what the result depends on: pass ``artifacts=`` to be precise.

**Loading.** :func:`load` reads a results folder (every ``<chapter>.json``) or a published
``results.json`` into :class:`Results`: ``results.value("cho-gain-test")``,
``results.table("rns-table1")`` (a DataFrame with its index and columns restored).

**Publishing.** :func:`merge` joins the record files of a build's chapters, in book order, into
the ``results.json`` that ``rnnlib build`` writes beside the HTML's ``index.html``:
``{"book": {"title", "version", "commit"}, "results": [entries...]}``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Iterable

from ..cache import Artifact, config_hash

KINDS = (
    "number",
    "text",
    "table",
    "figure",
    "params",
)  # params: the chapter's parameters, first entry


def results_folder(figures_dir: Path) -> Path:
    """``$RNNLIB_RESULTS``, else ``results/`` beside ``figures_dir``."""
    return Path(os.environ.get("RNNLIB_RESULTS") or Path(figures_dir).parent / "results")


# -- values as JSON ---------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """``value`` as plain JSON: numpy and torch scalars as Python numbers, NaN and other missing
    values as ``None``, tuples and arrays as lists; anything else unknown as its ``str``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:  # numpy arrays, tensors
        return jsonable(value.tolist())
    if hasattr(value, "item"):  # numpy / torch scalars
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    try:
        import pandas as pd

        if pd.isna(value):  # pd.NA, NaT
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def table_json(df) -> dict:
    """A DataFrame as ``{"index", "columns", "data", "index_names", "column_names"}``."""
    return {
        "index": [jsonable(v) for v in df.index],
        "columns": [jsonable(v) for v in df.columns],
        "data": [[jsonable(v) for v in row] for row in df.itertuples(index=False, name=None)],
        "index_names": [jsonable(n) for n in df.index.names],
        "column_names": [jsonable(n) for n in df.columns.names],
    }


def table_frame(value: dict):
    """The DataFrame of :func:`table_json` (missing values as NaN; multi-level labels restored)."""
    import pandas as pd

    index = _labels(value["index"], value.get("index_names") or [None])
    columns = _labels(value["columns"], value.get("column_names") or [None])
    data = value["data"]
    if len(data) != len(index) or any(len(row) != len(columns) for row in data):
        raise ValueError(
            f"a recorded table's data is not {len(index)} rows of {len(columns)} values"
        )
    frame = pd.DataFrame(
        {
            i: pd.Series([row[i] for row in data], dtype=object).infer_objects()
            for i in range(len(columns))
        },
        index=range(len(index)),
    )
    frame = frame.fillna(float("nan")) if len(columns) else frame
    frame.index, frame.columns = index, columns
    return frame


def _labels(labels: list, names: list):
    import pandas as pd

    if len(names) > 1:
        if not labels:
            return pd.MultiIndex.from_arrays([[] for _ in names], names=names)
        return pd.MultiIndex.from_tuples([tuple(v) for v in labels], names=names)
    return pd.Index(labels, name=names[0])


# -- provenance -------------------------------------------------------------------------------
def artifact_refs(items: Iterable) -> list[dict]:
    """``{"kind", "key"}`` of each item of an ``artifacts=`` argument (see the module docstring)."""
    out = []
    for item in items:
        if not isinstance(item, Artifact) and getattr(item, "artifact", None) is not None:
            item = item.artifact
        if isinstance(item, Artifact):
            ref = {"kind": item.kind, "key": item.key}
        elif isinstance(item, dict) or is_dataclass(item) and not isinstance(item, type):
            config = (
                item
                if isinstance(item, dict)
                else {f.name: getattr(item, f.name) for f in fields(item)}
            )
            try:
                key = config_hash(config, 16)
            except (TypeError, ValueError):  # holds something that is not JSON (a model, an array)
                key = None
            ref = {"kind": "config/" + type(item).__name__, "key": key}
        else:
            raise TypeError(
                f"artifacts=[...]: {type(item).__name__} is not an artifact, a config or a dict"
            )
        if ref not in out:
            out.append(ref)
    return out


def looked_up(events: Iterable[dict]) -> list[dict]:
    """``{"kind", "key"}`` of every artifact in a cache's lookup events, in order of first use."""
    out = []
    for e in events:
        ref = {"kind": e["kind"], "key": e["key"]}
        if ref not in out:
            out.append(ref)
    return out


# -- recording --------------------------------------------------------------------------------
class Recorder:
    """The record file of one run of a chapter: started empty, rewritten whole after each entry."""

    def __init__(
        self, path: Path, chapter: str, profile: str, config_hash: str, commit: str
    ) -> None:
        self.path = Path(path)
        self.common = {
            "chapter": chapter,
            "profile": profile,
            "config_hash": config_hash,
            "commit": commit,
        }
        self.entries: list[dict] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write()

    def add(
        self,
        name: str,
        kind: str,
        value: Any,
        stable_name: str,
        files: list[str] | None = None,
        artifacts: list[dict] | None = None,
    ) -> dict:
        if kind not in KINDS:
            raise ValueError(f"result kind {kind!r}: one of {', '.join(KINDS)}")
        if kind == "table":
            value = table_json(value)
        entry = {
            "name": name,
            "kind": kind,
            "value": None if kind == "figure" else jsonable(value),
            "stable_name": stable_name,
            **self.common,
            "files": list(files or []),
            "artifacts": list(artifacts or []),
        }
        self.entries.append(entry)
        self._write()
        return entry

    def _write(self) -> None:
        write_json_atomic(self.path, self.entries)


def dumps(obj: Any) -> str:
    """JSON with one entry per line: the items of a list, and of a dict's list values."""

    def compact(v):
        return json.dumps(v, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)

    if isinstance(obj, list):
        return "[\n" + ",\n".join(compact(v) for v in obj) + "\n]" if obj else "[]"
    if isinstance(obj, dict):
        return (
            "{\n"
            + ",\n".join(
                f"{compact(str(k))}: {dumps(v) if isinstance(v, list) else compact(v)}"
                for k, v in obj.items()
            )
            + "\n}"
        )
    return compact(obj)


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON (:func:`dumps`) to a temporary file beside ``path``, then replace
    ``path`` with it: a reader (or a crash) sees the old file or the new one, never a part of
    one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dumps(obj) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# -- loading ----------------------------------------------------------------------------------
class Results:
    """The recorded results of one or more chapters (see :func:`load`)."""

    def __init__(self, entries: list[dict], source: str = "", book: dict | None = None) -> None:
        self.entries = list(entries)
        self.source = source
        self.book = book or {}
        self._by_name: dict[str, list[dict]] = {}
        for e in self.entries:
            self._by_name.setdefault(e["name"], []).append(e)

    def names(self) -> list[str]:
        """Every recorded name, in record order."""
        return list(self._by_name)

    def chapters(self) -> list[str]:
        """The chapters loaded, in record order."""
        return list(dict.fromkeys(e["chapter"] for e in self.entries))

    def entry(self, name: str, chapter: str | None = None) -> dict:
        """The entry recorded as ``name`` (by ``chapter`` if given); a KeyError names what was
        loaded."""
        found = [
            e for e in self._by_name.get(name, []) if chapter is None or e["chapter"] == chapter
        ]
        if not found:
            where = f" by chapter {chapter!r}" if chapter is not None else ""
            raise KeyError(
                f"no result named {name!r}{where} in {self.source or 'the records'}; "
                f"the chapters loaded are {', '.join(self.chapters()) or 'none'}"
            )
        if len({e["chapter"] for e in found}) > 1:
            raise KeyError(
                f"the result name {name!r} is recorded by chapters "
                f"{', '.join(e['chapter'] for e in found)}: pass chapter="
            )
        return found[-1]

    def value(self, name: str, chapter: str | None = None) -> Any:
        """The glued value of a number or text (a number recorded as NaN comes back as NaN)."""
        e = self.entry(name, chapter)
        if e["kind"] not in ("number", "text"):
            raise ValueError(
                f"result {name!r} is a {e['kind']}, not a number or text"
                + ("; read it with .table()" if e["kind"] == "table" else "")
            )
        if e["kind"] == "number" and e["value"] is None:
            return float("nan")
        return e["value"]

    def values(self, chapter: str) -> dict[str, Any]:
        """Every number and text ``chapter`` glued, by name (as :meth:`value` gives each)."""
        if chapter not in self.chapters():
            raise KeyError(
                f"no results of chapter {chapter!r} in {self.source or 'the records'}; "
                f"the chapters loaded are {', '.join(self.chapters()) or 'none'}"
            )
        return {
            e["name"]: self.value(e["name"], chapter)
            for e in self.entries
            if e["chapter"] == chapter and e["kind"] in ("number", "text")
        }

    def table(self, name: str, chapter: str | None = None):
        """The glued table as a pandas DataFrame (index and columns restored, gaps as NaN)."""
        e = self.entry(name, chapter)
        if e["kind"] != "table":
            raise ValueError(f"result {name!r} is a {e['kind']}, not a table")
        return table_frame(e["value"])

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self.entries)


def load(folder: Path) -> Results:
    """The results under ``folder``: a build's results folder (one ``<chapter>.json`` per chapter),
    an HTML folder holding ``results.json``, or that file itself."""
    folder = Path(folder)
    if folder.is_file():
        data = _read(folder)
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise ValueError(f"{folder}: not a results.json (no 'results' list)")
        return Results(data["results"], str(folder), data.get("book"))
    if not folder.is_dir():
        raise FileNotFoundError(
            f"results folder {folder} does not exist (a build writes it as <out>/results)"
        )
    merged = folder / "results.json"  # in a records folder, the record of a chapter named 'results'
    if merged.is_file() and isinstance(_read(merged), dict):
        return load(merged)
    entries = []
    for path in sorted(folder.glob("*.json")):
        entries += _entries(path)
    return Results(entries, str(folder))


def _read(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None


def _entries(path: Path) -> list[dict]:
    data = _read(path)
    if not isinstance(data, list) or any(
        not isinstance(e, dict) or "name" not in e or "chapter" not in e for e in data
    ):
        raise ValueError(
            f"{path}: not a chapter's record file (a list of entries with 'name' and 'chapter')"
        )
    return data


def merge(folder: Path, chapters: Iterable[str], book: dict) -> dict:
    """``{"book": book, "results": [...]}``: the record files of ``chapters`` under ``folder``, in
    that order (a chapter without a record file records nothing)."""
    entries = []
    for chapter in chapters:
        path = Path(folder) / f"{chapter}.json"
        if path.is_file():
            entries += _entries(path)
    return {"book": book, "results": entries}


__all__ = [
    "KINDS",
    "Recorder",
    "Results",
    "artifact_refs",
    "jsonable",
    "load",
    "looked_up",
    "merge",
    "results_folder",
    "table_frame",
    "table_json",
    "write_json_atomic",
]
