"""Executing chapters with papermill and building the HTML book with Jupyter Book.

``rnnlib build`` = for every chapter in ``_toc.yml``: validate its parameters (all chapters
first, before any work), convert the MyST Markdown notebook to ``.ipynb`` with jupytext,
execute it with papermill into a staging copy of the book, then run
``jupyter-book build -W -n --keep-going`` on the staging copy (whose ``_config.yml`` turns
execution off: the notebooks already carry their outputs). A failing chapter stops the build
with the chapter, the cell and the error, and its executed notebook is kept for reading.

Each process that executes chapters is one *build* (:func:`this_build`: an id, its start time and
the git commit); a chapter's kernel learns it from ``$RNNLIB_BUILD`` and every claim it records
names it. Before a chapter executes, the claims records it would leave stale are deleted
(:func:`rnnlib.book.claims.reconcile`: its own, and those of chapters no longer in the book), so
``rnnlib run`` of one chapter keeps the other chapters' records and ``rnnlib build`` leaves only
its own.

Output folder layout (``--out``, default ``_build``)::

    src/                  the staging book: executed chapters (.ipynb) and the other pages
    figures/              every figure (PNG, PDF) and table (CSV) under its stable name
    results/              each chapter's record of its glued results (rnnlib.book.results)
      claims/             each chapter's claims checks (rnnlib.book.claims), naming the build
    build-log.jsonl       one line per artifact looked up (hit or computed), per chapter
    logs/<chapter>.log    everything the chapter's kernel wrote (training progress, the cache's
                          messages), appended per run; the terminal gets a summary
                          (rnnlib.book.chapter_log)
    build.json            the finished build (:func:`write_build_record`), for ``rnnlib publish``
    _build/html/          the HTML book (index.html), self-contained (:func:`publish_html`):
      figures/            the figures and tables the chapters of this build made
      results.json        every glued result, with its stable name and provenance
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from .chapter_log import ChapterLog
from .params import ParameterError, is_notebook, load_profile, resolve

# Files of the book root copied into the staging book besides the pages of the toc.
BOOK_FILES = ("_config.yml", "_toc.yml", "CITATION.cff", "references.bib")


#: what a reader is told when a chapter stops before its end (a dead kernel, Ctrl-C)
RESUMES = (
    "Nothing finished is lost: every artifact computed before it stopped is in the cache; run "
    "the same command again to go on from there."
)


class ChapterInterrupted(KeyboardInterrupt):
    """A chapter stopped by Ctrl-C; the message names it and says what rerunning does."""


class ChapterFailed(RuntimeError):
    """A chapter raised while executing; the message names the chapter, the cell and the error."""


@dataclass
class ChapterResult:
    stem: str
    seconds: float
    computed: int = 0
    cached: int = 0
    notebook: Path | None = None
    error: str | None = None
    artifacts: list = field(default_factory=list)


@dataclass(frozen=True)
class Build:
    """One build: every chapter a process executes (``rnnlib build``, ``rnnlib run``) shares it."""

    id: str  # <UTC start, to the second>-<6 random hex digits>
    started: str  # ISO 8601, UTC
    commit: str  # the book's git commit (+dirty), or "unknown"

    def as_json(self) -> str:
        return json.dumps(asdict(self))


_BUILD: Build | None = None


def new_build(root: Path) -> Build:
    """A fresh :class:`Build` of the book at ``root``, which :func:`this_build` returns from now."""
    from ..cache import git_commit

    global _BUILD
    now = datetime.now(timezone.utc)
    _BUILD = Build(
        f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}",
        now.isoformat(timespec="seconds"),
        git_commit(Path(root)) or "unknown",
    )
    return _BUILD


def write_build_record(out: Path, build: Build, profile: str, seconds: float) -> Path:
    """``out/build.json``: the finished ``build`` (its id, commit, start), its profile, its end
    and its total seconds, and the machine it ran on (:func:`rnnlib.machine.describe`), as
    ``rnnlib publish`` reads them."""
    from .. import machine
    from .results import write_json_atomic

    path = Path(out) / "build.json"
    record = asdict(build) | {
        "profile": profile,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(seconds, 1),
        "machine": machine.describe(),
    }
    write_json_atomic(path, record)
    return path


def this_build(root: Path) -> Build:
    """This process's build (made by the first call, or by :func:`new_build`)."""
    return _BUILD or new_build(root)


def toc_files(root: Path) -> list[str]:
    """Every ``file:`` entry of ``_toc.yml`` (root first), without extension, in book order."""
    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf-8"))
    found = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk({k: v for k, v in toc.items() if k != "root"})
    return found


def page_path(root: Path, entry: str) -> Path:
    for ext in (".md", ".ipynb"):
        p = Path(root) / f"{entry}{ext}"
        if p.is_file():
            return p
    raise FileNotFoundError(
        f"_toc.yml names {entry!r} but neither {entry}.md nor {entry}.ipynb exists"
    )


def book_chapters(root: Path) -> dict[str, Path]:
    """The executable chapters (MyST Markdown notebooks) of the book, by file stem, in the order
    they execute: book order, except that a chapter whose front matter says ``rnnlib: {execute:
    last}`` runs after all the others (the results chapter, which reads what the others recorded,
    comes first in the book but runs last)."""
    first, last = {}, {}
    for entry in toc_files(root):
        path = page_path(root, entry)
        if path.suffix == ".md" and is_notebook(path):
            (last if executes_last(path) else first)[path.stem] = path
    return {**first, **last}


def executes_last(path: Path) -> bool:
    """True when the chapter's front matter has ``rnnlib: {execute: last}``."""
    text = Path(path).read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---", 2)[1]) or {} if text.startswith("---") else {}
    options = front.get("rnnlib") or {}
    if not isinstance(options, dict) or options.get("execute", "in order") not in (
        "in order",
        "last",
    ):
        raise ValueError(
            f"{path}: front matter 'rnnlib: execute:' must be 'last' or 'in order', got {options!r}"
        )
    return options.get("execute") == "last"


def kernel_env(
    root: Path, out: Path, cache: Path, stem: str, build: Build | None = None
) -> dict[str, str]:
    from .claims import BUILD_ENV

    env = {
        "RNNLIB_BOOK_ROOT": str(root),
        "RNNLIB_CACHE": str(cache),
        "RNNLIB_FIGURES": str(out / "figures"),
        "RNNLIB_RESULTS": str(out / "results"),
        "RNNLIB_CHAPTER": stem,
        "RNNLIB_BUILD_LOG": str(out / "build-log.jsonl"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    if build is not None:
        env[BUILD_ENV] = build.as_json()
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    return env


def kernel_config():
    """Configuration of the kernel manager papermill starts: encrypted kernel sockets.

    The kernel talks to papermill over local TCP sockets, and ipykernel warns on every start
    that they are not encrypted. ipykernel's kernelspec declares CurveZMQ support, so with
    ``transport_encryption="auto"`` jupyter_client (8.10 has the setting) gives the kernel keys and
    the sockets are encrypted: the warning's own remedy, not a muted log. A kernelspec without
    that support, or a jupyter_client without the setting, runs as before (and warns as before).
    """
    from jupyter_client.manager import KernelManager
    from traitlets.config import Config

    if "transport_encryption" not in KernelManager.class_trait_names():
        return Config()
    return Config({"KernelManager": {"transport_encryption": "auto"}})


def execute_chapter(
    root: Path,
    stem: str,
    path: Path,
    params: dict,
    out: Path,
    cache: Path,
    progress: bool = True,
    build: Build | None = None,
) -> ChapterResult:
    """Execute one chapter into ``out/src/<rel>.ipynb`` as part of ``build`` (default:
    :func:`this_build`), first deleting the claims records it would leave stale
    (:func:`rnnlib.book.claims.reconcile`); raise :class:`ChapterFailed` on error."""
    import jupytext
    import papermill
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    rel = path.relative_to(root).with_suffix(".ipynb")
    target = out / "src" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    source_nb = out / "inputs" / rel
    source_nb.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(jupytext.read(path), source_nb)
    # papermill cannot parse annotations such as `int | None` and would warn that such
    # parameters are unknown; they were validated above, so its warnings add only noise.
    logging.getLogger("papermill").setLevel(logging.ERROR)
    from .claims import reconcile

    build = build or this_build(root)
    reconcile(out / "results", book_chapters(root), [stem])
    saved = dict(os.environ)
    os.environ.update(kernel_env(root, out, cache, stem, build))
    start = time.perf_counter()
    log = out / "build-log.jsonl"
    before = _count_lines(log)
    said = ChapterLog(out / "logs" / f"{stem}.log", stem)
    said.file.write(f"== {time.strftime('%Y-%m-%d %H:%M:%S')} chapter {stem}\n")
    try:
        papermill.execute_notebook(
            str(source_nb),
            str(target),
            parameters=params,
            kernel_name="python3",
            cwd=str(path.parent),
            progress_bar=progress,
            log_output=False,
            stdout_file=said,
            stderr_file=said,
            request_save_on_cell_execute=True,
            config=kernel_config(),
        )
    except PapermillExecutionError as e:
        cell = _cell_label(target, e.cell_index)
        raise ChapterFailed(
            f"chapter {path.relative_to(root)} failed in {cell}: {e.ename}: {e.evalue}\n"
            f"  the executed notebook with the traceback is kept at {target}"
        ) from None
    except DeadKernelError:
        raise ChapterFailed(
            f"chapter {path.relative_to(root)}: its kernel died (out of memory is the usual "
            "cause: `dmesg` says; a smaller profile or fewer workers needs less). "
            f"{RESUMES}"
        ) from None
    except KeyboardInterrupt:
        where = path.relative_to(root)
        raise ChapterInterrupted(f"chapter {where}: interrupted. {RESUMES}") from None
    finally:
        said.close()
        os.environ.clear()
        os.environ.update(saved)
    _hide_injected_parameters(
        target, {"<build>": out, "<cache>": cache, "<book>": root, "<python>": Path(sys.prefix)}
    )
    result = ChapterResult(stem, time.perf_counter() - start, notebook=target)
    for event in _read_events(log, skip=before):
        result.artifacts.append(event)
        if event.get("missing"):  # a stale entry looked up only (listed by stale_lines)
            continue
        if event["hit"]:
            result.cached += 1
        else:
            result.computed += 1
    return result


def _hide_injected_parameters(notebook: Path, places: dict[str, Path] | None = None) -> None:
    """Tag papermill's injected-parameters cell ``remove-cell``: the chapter's header shows the
    values in a table, and the raw cell would repeat them as code. ``places`` (a name such as
    ``<build>`` -> a folder of this machine): each folder's path, in papermill's metadata and in
    the text the cells printed (a library's warning names its file), is written as its name, so
    the executed notebook, which the HTML book offers for download, names no path of the
    machine that built it."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell.metadata["tags"] = tags + ["remove-cell"]
    if places:
        # the longest first, as given and resolved: a folder inside another is named as itself;
        # a path is replaced only whole (not the folder "book" inside the name "book2")
        paths = {(str(q), n) for n, p in places.items() for q in (Path(p), Path(p).resolve())}
        order = sorted(paths, key=lambda pn: len(pn[0]), reverse=True)
        patterns = [(re.compile(re.escape(path) + r"(?![\w.-])"), name) for path, name in order]

        def local(text):
            if isinstance(text, list):
                return [local(t) for t in text]
            if not isinstance(text, str):
                return text
            for pattern, name in patterns:
                text = pattern.sub(name, text)
            return text

        meta = nb.metadata.get("papermill", {})
        for key in ("input_path", "output_path"):
            if key in meta:
                meta[key] = local(meta[key])
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if "text" in output:
                    output["text"] = local(output["text"])
                if "traceback" in output:
                    output["traceback"] = local(output["traceback"])
                for mime in ("text/plain", "text/markdown", "text/html"):
                    if mime in output.get("data", {}):
                        output["data"][mime] = local(output["data"][mime])
    nbformat.write(nb, notebook)


def _cell_label(notebook: Path, index: int) -> str:
    """'cell N (first line of its source)', N counted among the chapter's own cells.

    The failing cell is the one holding an error output (papermill adds cells of its own to a
    failed notebook, so its index is not the chapter's).
    """
    try:
        import nbformat

        nb = nbformat.read(notebook, as_version=4)
        papermill_tags = {"injected-parameters", "papermill-error-cell-tag"}
        own = [c for c in nb.cells if not papermill_tags & set(c.metadata.get("tags", []))]
        failed = next(
            c
            for c in own
            if c.cell_type == "code"
            and any(o.get("output_type") == "error" for o in c.get("outputs", []))
        )
        first = next((ln for ln in failed.source.splitlines() if ln.strip()), "")
        return f"cell {own.index(failed) + 1} ({first.strip()[:70]!r})"
    except Exception:  # the label is a courtesy; the error itself must still be reported
        return f"cell {index + 1}"


def _count_lines(path: Path) -> int:
    try:
        with open(path, encoding="utf-8") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def _read_events(path: Path, skip: int) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for i, line in enumerate(f) if i >= skip and line.strip()]
    except OSError:
        return []


def stage_book(root: Path, out: Path) -> Path:
    """Copy the book's non-notebook pages and configuration into ``out/src``."""
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    for name in BOOK_FILES:
        if (root / name).is_file():
            shutil.copy2(root / name, src / name)
    for entry in toc_files(root):
        path = page_path(root, entry)
        if path.suffix == ".md" and is_notebook(path):
            continue
        dest = src / path.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    if (
        root / "_static"
    ).is_dir():  # the book's style sheets (Jupyter Book adds every _static/*.css)
        shutil.copytree(root / "_static", src / "_static", dirs_exist_ok=True)
    return src


def build_html(src: Path, out: Path) -> None:
    """``jupyter-book build`` of the staging book, warnings as errors, then :func:`publish_html`;
    raises on failure."""
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [
        str(exe) if exe.exists() else "jupyter-book",
        "build",
        str(src),
        "--path-output",
        str(out),
        "-W",
        "-n",
        "--keep-going",
        "--builder",
        "html",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    (out / "jupyter-book.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        lines = [
            ln
            for ln in (proc.stdout + proc.stderr).splitlines()
            if "WARNING" in ln or "ERROR" in ln or "Error" in ln
        ]
        raise RuntimeError(
            "jupyter-book build failed (warnings are errors):\n  "
            + "\n  ".join(lines[-20:] or (proc.stdout + proc.stderr).splitlines()[-20:])
            + f"\n  full log: {out / 'jupyter-book.log'}"
        )
    publish_html(src, out)


def publish_html(src: Path, out: Path) -> Path:
    """Make the HTML folder ``out/_build/html`` self-contained; return it.

    Jupyter Book writes only relative links, so the folder already works opened from disk or
    served under any sub-path; this adds what the pages link to outside Sphinx's own files:

    * ``figures/``: the PNG, PDF and CSV files the chapters of this build recorded (the cite
      blocks link to them), copied from ``out/figures`` (older files there are left out);
    * ``results.json``: every chapter's record (``out/results``, in book order) merged, with the
      book's title and version (``CITATION.cff``) and the git commit
      (:func:`rnnlib.book.results.merge`);
    * ``.nojekyll``, so that GitHub Pages serves the ``_static``/``_images`` folders however the
      folder is pushed there.
    """
    from ..cache import git_commit
    from .citing import book_metadata
    from .results import merge, write_json_atomic

    html = out / "_build" / "html"
    meta = book_metadata(src)
    stems = [Path(entry).name for entry in toc_files(src)]
    merged = merge(
        out / "results",
        stems,
        {"title": meta["title"], "version": meta["version"], "commit": git_commit() or "unknown"},
    )
    figures = html / "figures"
    shutil.rmtree(figures, ignore_errors=True)
    figures.mkdir(parents=True)
    for entry in merged["results"]:
        for name in entry.get("files", []):
            source = out / "figures" / name
            if not source.is_file():
                raise FileNotFoundError(
                    f"chapter {entry['chapter']} recorded {entry['kind']} {entry['name']!r} "
                    f"with the file {name}, which is not in {out / 'figures'}"
                )
            shutil.copy2(source, figures / name)
    write_json_atomic(html / "results.json", merged)
    (html / ".nojekyll").touch()
    return html


def resolve_all(
    root: Path, profile_name: str, overrides: list[str], only: list[str] | None = None
) -> tuple[dict[str, Path], dict[str, dict]]:
    chapters = book_chapters(root)
    if only:
        unknown = [c for c in only if c not in chapters]
        if unknown:
            raise ParameterError(
                f"unknown chapter(s) {unknown}; the chapters are {', '.join(chapters)}"
            )
    profile = load_profile(root, profile_name)
    params = resolve(chapters, profile, profile_name, overrides)
    if only:
        chapters = {k: v for k, v in chapters.items() if k in only}
    for stem in chapters:
        if "corpus" in params[stem]:  # the corpus block also checks that its folder exists
            from .corpus_params import corpus_config

            try:
                corpus_config(params[stem], root=root)
            except ParameterError as e:
                raise ParameterError(f"chapter {stem}: {e}") from None
    return chapters, params


def summary_table(results: list[ChapterResult], html_seconds: float | None, total: float) -> str:
    width = max([len(r.stem) for r in results] + [len("jupyter-book")])
    lines = [f"{'chapter':<{width}}  {'seconds':>8}  {'computed':>8}  {'cached':>6}"]
    for r in results:
        lines.append(f"{r.stem:<{width}}  {r.seconds:8.1f}  {r.computed:8d}  {r.cached:6d}")
    if html_seconds is not None:
        lines.append(f"{'jupyter-book':<{width}}  {html_seconds:8.1f}")
    lines.append(
        f"{'total':<{width}}  {total:8.1f}  {sum(r.computed for r in results):8d}  "
        f"{sum(r.cached for r in results):6d}"
    )
    return "\n".join(lines + stale_lines(results))


def stale_lines(results: list[ChapterResult]) -> list[str]:
    """The summary's lines on the code of the artifacts (:mod:`rnnlib.code_deps`): each one
    that other code computed, what became of it and which files changed (or which stale entry
    it was built from), and how many made before the code was recorded were adopted."""
    lines, adopted = [], 0
    for r in results:
        for e in r.artifacts:
            adopted += bool(e.get("adopted"))
            stale = e.get("stale")
            if not stale:
                continue
            if e.get("missing"):
                fate = "not used (looked up only)"
            else:
                fate = "kept (--keep-stale)" if stale.get("kept") else "recomputed"
            why = (
                f"built from {stale['built_from']}"
                if "built_from" in stale
                else "changed: " + ", ".join(stale.get("changed", []))
            )
            lines.append(f"  {e['kind']}/{e['key']} ({r.stem}): {fate}; {why}")
    if lines:
        lines.insert(0, f"artifacts made by other code than now ({len(lines)}):")
    if adopted:
        them = "artifact" if adopted == 1 else "artifacts"
        lines.append(
            f"{adopted} {them} made before the code was recorded: adopted "
            "(the code of now written into the sidecar, nothing recomputed)"
        )
    return lines
