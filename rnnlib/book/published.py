"""``rnnlib publish BUILD_OUT [--to records/published]``: the book's published reference, the
records of one finished build that every later build is compared with.

A reader who rebuilds the book compares the rebuild with it (``rnnlib compare records/published
_build``), and every build's results page does so by itself
(:func:`rnnlib.book.glance.reference_comparison`). The reference folder holds small JSON only (no
models, data or figures)::

    published.json                 the manifest (:func:`manifest`)
    results/<chapter>.json         each chapter's glued values, as recorded (without the
                                   artifacts each came from: the manifest lists them all)
    results/claims/<chapter>.json  each chapter's claims records, as recorded
    build-log.jsonl                the build log: one line per artifact looked up, with its time
    README.md                      what the folder is and how it is refreshed (kept as it is)

The manifest names the build's commit and profile, the machine its results page ran on (its
glued ``res-machine``: :func:`rnnlib.machine.label`) and the machines that computed its
artifacts (its ``res-cost`` table), its dates and total time, whether it was a build from an empty
cache, and every artifact's cache key (kind and key, the chapter that first looked it up, whether
this build computed it, and the seconds of that lookup).

**What is refused.** A build folder is published only when it is one finished build of one
profile and one commit: every chapter of the book has its record file and its executed notebook,
finished without error (papermill's metadata in ``src/chapters/<chapter>.ipynb``); every record
(results and claims) names the same profile and the same commit, and every claims record the
same build (chapters run one by one are not one build); the build log is there.
Otherwise :class:`Refused` names what is missing or mixed, and nothing is written.

**From empty.** An artifact counts as computed by the build when its first lookup in the build log
computed it (``"hit": false``); a later lookup of it (by the chapter that computed it or another)
is a hit within the same build. The build is *from empty* when no artifact's first lookup was a
hit; otherwise the manifest lists the artifacts it reused from an earlier cache and, given that
cache (``rnnlib publish --cache``), where each came from: the commit that computed it, when, in how
many seconds and on which machine (its sidecar), so a reference made from a warm cache still
gives every artifact's cost and origin.

**Time.** ``rnnlib build`` writes ``build.json`` (its id, start, end and total seconds) when it
finishes; without it (a build made before it did), the build's time runs from its first chapter's
start to its last chapter's end, or to the HTML's ``results.json`` when that was written later.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from .results import write_json_atomic

#: the manifest's file name in a reference folder
MANIFEST = "published.json"
#: where the book keeps its reference, under the book's root
FOLDER = Path("records") / "published"
#: the file ``rnnlib build`` writes into its output folder when it finishes
BUILD_RECORD = "build.json"


class Refused(Exception):
    """A build that cannot be the reference; the message names what is missing or mixed."""


# -- reading the build ----------------------------------------------------------------------------
def _read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise Refused(f"{path}: cannot be read as JSON ({err})") from None


def notebook_state(path: Path) -> str | None:
    """``None`` when the executed notebook ``path`` finished without error (papermill's
    metadata), else what is wrong with it, in words."""
    if not path.is_file():
        return "no executed notebook"
    meta = (_read_json(path).get("metadata") or {}).get("papermill") or {}
    if meta.get("exception"):
        return "its notebook stopped with an error"
    if not meta.get("end_time"):
        return "its notebook did not finish (still running, or the build stopped)"
    return None


def read_log(path: Path) -> list[dict]:
    """The build log's events (``build-log.jsonl``: kind, key, hit, seconds, chapter)."""
    if not path.is_file():
        raise Refused(f"{path}: no build log (it says which artifacts the build computed)")
    events = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise Refused(f"{path}, line {n}: not JSON ({err})") from None
    return events


def _grouped(values: dict[str, set]) -> str:
    """``{value: {chapters}}`` in words: ``cpu (data, rnnsearch), smoke (results)``."""
    return ", ".join(f"{v} ({', '.join(sorted(chs))})" for v, chs in sorted(values.items()))


def read_build(out: Path, chapters: Iterable[str]) -> tuple[dict, dict, list[dict]]:
    """``(records, claims, log)`` of the build output folder ``out``: each chapter's record file
    and claims records (by chapter) and the build log; :class:`Refused` (naming every problem)
    unless it is one finished build of one profile and one commit of every chapter in
    ``chapters``."""
    out, chapters = Path(out), list(chapters)
    results = out / "results"
    if not results.is_dir():
        raise Refused(f"{out}: not a build's output folder (no results/)")
    problems, records, claims = [], {}, {}
    for stem in chapters:
        path = results / f"{stem}.json"
        state = notebook_state(out / "src" / "chapters" / f"{stem}.ipynb")
        if not path.is_file():
            problems.append(f"chapter {stem}: no record file {path.name}")
        elif state:
            problems.append(f"chapter {stem}: {state}")
        else:
            records[stem] = _read_json(path)
        if (results / "claims" / path.name).is_file():
            claims[stem] = _read_json(results / "claims" / path.name)
    if problems:
        raise Refused(f"{out}: a partial build, not published:\n  " + "\n  ".join(problems))
    others = sorted(p.stem for p in results.glob("*.json") if p.stem not in records)
    seen = {"profiles": {}, "commits": {}, "builds": {}}
    for stem, entries in list(records.items()) + list(claims.items()):
        for e in entries:  # a claims record names its build, and the build its commit
            build = e.get("build") or {}
            for what, value in (
                ("profiles", e.get("profile")),
                ("commits", e.get("commit") or build.get("commit")),
                ("builds", build.get("id")),
            ):
                if value:
                    seen[what].setdefault(value, set()).add(stem)
    for what, values in seen.items():
        if len(values) > 1:
            problems.append(f"its chapters ran in different {what}: {_grouped(values)}")
    if problems:
        raise Refused(f"{out}: not one build, not published:\n  " + "\n  ".join(problems))
    if others:
        print(f"rnnlib publish: left out records of chapters not in the book: {others}")
    return records, claims, read_log(out / "build-log.jsonl")


# -- the manifest ---------------------------------------------------------------------------------
def artifacts(log: list[dict]) -> list[dict]:
    """Every artifact of the build log once, in order of first lookup: its kind and key, the
    chapter that first looked it up, whether that lookup computed it, and its seconds."""
    seen: dict[tuple, dict] = {}
    for e in log:
        ident = (e.get("kind"), e.get("key"))
        if ident not in seen and not e.get("missing"):  # (a stale entry looked up only)
            seen[ident] = {
                "kind": e.get("kind"),
                "key": e.get("key"),
                "chapter": e.get("chapter"),
                "computed": not e.get("hit"),
                "seconds": e.get("seconds"),
            }
    return list(seen.values())


def _when(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


def build_time(out: Path, chapters: Iterable[str], claims: dict) -> dict:
    """The build's ``{"ids", "started", "finished", "seconds", "from", "machine"}`` (see the
    module docstring, **Time**; ``machine``: :func:`rnnlib.machine.describe` of the build
    process, where ``build.json`` records it)."""
    ids = sorted({(r.get("build") or {}).get("id") for rs in claims.values() for r in rs} - {None})
    record = Path(out) / BUILD_RECORD
    if record.is_file():
        done = _read_json(record)
        if not ids or done.get("id") in ids:
            keep = ("started", "finished", "seconds", "machine")
            return {"ids": ids or [done.get("id")], **{k: done.get(k) for k in keep}} | {
                "from": BUILD_RECORD
            }
    starts, ends = [], []
    for stem in chapters:
        nb = _read_json(Path(out) / "src" / "chapters" / f"{stem}.ipynb")
        meta = (nb.get("metadata") or {}).get("papermill") or {}
        starts.append(_when(meta.get("start_time")))
        ends.append(_when(meta.get("end_time")))
    html = Path(out) / "_build" / "html" / "results.json"
    if html.is_file():
        ends.append(datetime.fromtimestamp(html.stat().st_mtime, timezone.utc))
    starts, ends = [t for t in starts if t], [t for t in ends if t]
    if not (starts and ends):
        return {
            "ids": ids,
            "started": None,
            "finished": None,
            "seconds": None,
            "from": None,
            "machine": None,
        }
    first, last = min(starts), max(ends)
    return {
        "ids": ids,
        "started": first.isoformat(timespec="seconds"),
        "finished": last.isoformat(timespec="seconds"),
        "seconds": round((last - first).total_seconds(), 1),
        "from": "the chapters' notebooks" + (" and the HTML" if html.is_file() else ""),
        "machine": None,  # the build process's machine: recorded by build.json only
    }


def _entry(records: dict, chapter: str, name: str) -> dict:
    return next((e for e in reversed(records.get(chapter, [])) if e.get("name") == name), {})


def _machines(records: dict) -> tuple[str, dict[str, str]]:
    """(the machine the results page ran on, the machines that computed each chapter's artifacts
    as its ``res-cost`` table names them)."""
    page = _entry(records, "results", "res-machine").get("value") or "not recorded"
    cost = _entry(records, "results", "res-cost").get("value") or {}
    columns = cost.get("columns") or []
    if "computed on" not in columns:
        return str(page), {}
    i = columns.index("computed on")
    return str(page), {
        str(chapter): str(row[i]) for chapter, row in zip(cost.get("index") or [], cost["data"])
    }


def reused_origins(cache: Path, reused: list[str]) -> list[dict]:
    """Where each reused artifact (``"kind/key"``) came from, read from its sidecar in ``cache``:
    the commit that computed it, when, its seconds (the computation's, or the sidecar's wall
    time) and the machine; an artifact whose sidecar is not there says so."""
    from ..machine import label

    origins = []
    for name in reused:
        path = Path(cache) / name / "meta.json"
        if not path.is_file():
            origins.append({"artifact": name, "sidecar": "not found in the cache"})
            continue
        meta = _read_json(path)
        seconds = (meta.get("extra") or {}).get("seconds", meta.get("wall_time_s"))
        origins.append(
            {
                "artifact": name,
                "commit": meta.get("git_commit"),
                "created": meta.get("created"),
                "seconds": None if seconds is None else round(float(seconds), 1),
                "machine": label(meta.get("machine")),
            }
        )
    return origins


def manifest(
    out: Path,
    records: dict,
    claims: dict,
    log: list[dict],
    now: datetime,
    cache: Path | None = None,
) -> dict:
    """The reference's ``published.json`` for the build ``out`` as :func:`read_build` read it;
    with the build's ``cache``, the origin of every artifact it reused (:func:`reused_origins`)."""
    first = next(e for entries in records.values() for e in entries)
    listed = artifacts(log)
    reused = [f"{a['kind']}/{a['key']}" for a in listed if not a["computed"]]
    page, computed_on = _machines(records)
    return {
        "what": "the published reference of the book: the records of one finished build",
        "commit": first.get("commit"),
        "profile": first.get("profile"),
        "chapters": list(records),
        "machine": page,
        "computed_on": computed_on,
        "build": build_time(out, records, claims),  # its machine: the build process's
        "from_empty": not reused,
        "reused": reused,
        "artifacts_computed": len(listed) - len(reused),
        "artifact_seconds": round(sum(a["seconds"] or 0 for a in listed if a["computed"]), 1),
        "entries": sum(len(e) for e in records.values()),
        "claims": sum(len(rs) for rs in claims.values()),
        "published": now.isoformat(timespec="seconds"),
        "reused_from": reused_origins(cache, reused) if cache is not None and reused else [],
        "artifacts": listed,
    }


# -- writing the reference -------------------------------------------------------------------------
def without_provenance(entries: list[dict], places: dict[str, Path] | None = None) -> list[dict]:
    """A chapter's record entries without each entry's ``artifacts`` (the cache keys it was
    computed from): three quarters of a record's size, and repeated in the manifest's list of
    every artifact; ``rnnlib compare`` reads the values, not the provenance. ``places`` (a name
    such as ``<build>`` -> a folder of the build machine): a text that names the folder (a
    message of the results page) names it by its name instead, so that the repository holds no
    path of the machine."""
    order = sorted(
        {(str(q), n) for n, p in (places or {}).items() for q in (Path(p), Path(p).resolve())},
        key=lambda pn: len(pn[0]),
        reverse=True,
    )

    def local(value):
        if isinstance(value, str):
            for path, name in order:
                value = value.replace(path, name)
            return value
        if isinstance(value, list):
            return [local(v) for v in value]
        if isinstance(value, dict):
            return {k: local(v) for k, v in value.items()}
        return value

    return [local({k: v for k, v in e.items() if k != "artifacts"}) for e in entries]


def publish(
    out: Path,
    to: Path,
    chapters: Iterable[str],
    now: datetime | None = None,
    cache: Path | None = None,
) -> dict:
    """Write the reference folder ``to`` from the build output folder ``out`` of the book whose
    chapters are ``chapters`` (stems); returns the manifest (with the reused artifacts' origins
    when the build's ``cache`` is given). :class:`Refused` before anything is written when the
    build cannot be the reference. The folder's own README is kept."""
    out, to = Path(out), Path(to)
    records, claims, log = read_build(out, chapters)
    meta = manifest(out, records, claims, log, now or datetime.now(timezone.utc), cache)
    # the new reference is written whole beside the old, then swapped in: an interrupted publish
    # leaves the old reference as it was, never new records under an old manifest
    new, old = to.with_name(to.name + ".new"), to.with_name(to.name + ".old")
    shutil.rmtree(new, ignore_errors=True)
    (new / "results" / "claims").mkdir(parents=True)
    for stem in records:
        places = {"<build>": out, "<book>": out.resolve().parent}
        write_json_atomic(
            new / "results" / f"{stem}.json", without_provenance(records[stem], places)
        )
        if stem in claims:
            shutil.copyfile(
                out / "results" / "claims" / f"{stem}.json",
                new / "results" / "claims" / f"{stem}.json",
            )
    shutil.copyfile(out / "build-log.jsonl", new / "build-log.jsonl")
    if (to / "README.md").is_file():
        shutil.copyfile(to / "README.md", new / "README.md")
    write_json_atomic(new / MANIFEST, meta)
    shutil.rmtree(old, ignore_errors=True)
    if to.exists():
        to.rename(old)
    new.rename(to)
    shutil.rmtree(old, ignore_errors=True)
    return meta


def read_manifest(folder: Path) -> dict | None:
    """The manifest of the reference folder ``folder``, or ``None`` when it holds none."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a reference's manifest (a JSON object)")
    return data


def summary(meta: dict) -> str:
    """The manifest in a few lines, as ``rnnlib publish`` prints it."""
    build = meta["build"]
    minutes = f"{build['seconds'] / 60:.0f} min" if build.get("seconds") else "time unknown"
    empty = (
        "from empty: every artifact computed in this build"
        if meta["from_empty"]
        else f"reusing {len(meta['reused'])} artifacts of an earlier cache"
    )
    origins = meta.get("reused_from") or []
    commits: dict[str, float] = {}
    for o in origins:
        if o.get("commit"):
            short = o["commit"][:7]
            commits[short] = commits.get(short, 0.0) + (o.get("seconds") or 0.0)
    if commits:
        empty += (
            " (computed by "
            + ", ".join(
                f"commit {c} in {s / 60:.0f} artifact-min" for c, s in sorted(commits.items())
            )
            + ")"
        )
    return "\n".join(
        [
            f"profile {meta['profile']}, commit {meta['commit']}, {len(meta['chapters'])} "
            f"chapters, {meta['entries']} glued values, {meta['claims']} claims records",
            f"built {build.get('started')} to {build.get('finished')} ({minutes}), {empty}; "
            f"{meta['artifacts_computed']} artifacts computed in "
            f"{meta['artifact_seconds'] / 60:.0f} min",
            f"results page ran on {meta['machine']}",
            "artifacts computed on "
            + (" | ".join(sorted(set(meta["computed_on"].values()))) or "not recorded"),
        ]
    )


# -- the command ----------------------------------------------------------------------------------
def add_arguments(parser) -> None:
    parser.description = (
        "Write the book's published reference (records/published) from a finished build of one "
        "profile: every chapter's glued values and claims records, the build log, and a manifest "
        "(commit, profile, machine, dates, total time, from empty or which artifacts were "
        "reused, every artifact's cache key). A partial or mixed build is refused."
    )
    parser.add_argument("build", type=Path, help="the build's output folder (e.g. _build)")
    parser.add_argument(
        "--to", type=Path, default=None, help=f"the reference folder (default: <book>/{FOLDER})"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="the build's artifact cache: the manifest then gives, for every artifact the build "
        "reused, the commit that computed it, when, its seconds and machine (from its sidecar)",
    )


def main(args) -> int:
    from ..cache import find_book_root, git_commit
    from .execute import book_chapters

    root = find_book_root()
    if root is None:
        print(
            "rnnlib publish: run this inside the book (no _toc.yml here or above)", file=sys.stderr
        )
        return 2
    to = args.to or root / FOLDER
    try:
        meta = publish(args.build, to, book_chapters(root), cache=args.cache)
    except Refused as err:
        print(f"rnnlib publish: {err}", file=sys.stderr)
        return 2
    print(f"published {args.build} to {to}:\n{summary(meta)}")
    if meta["reused"] and args.cache is None:
        print("note: the build reused artifacts; --cache <its cache> records where each came from")
    head = git_commit(root)
    if head and head != meta["commit"]:
        print(
            f"note: the build is of commit {meta['commit']}, this checkout is at {head}: commit "
            "the reference only if no cache key changed in between (a build of this checkout on "
            "the build's cache then computes nothing)"
        )
    return 0
