"""What a chapter notebook calls: its parameters, its artifacts, its figures, tables and numbers.

A chapter starts with::

    ch = Chapter.start("copy_task", globals())   # validates the parameters, shows the header

builds its configs from its parameters (``ch.config(TrainConfig, ...)``: parameter names are
config field names), asks the cache for what is expensive (``ch.artifact``) and shows results
only through ``ch.figure``, ``ch.table`` and ``ch.number``: each saves or glues (myst-nb
``glue``) the value under a stable, citable name that carries the profile and the chapter's
config hash, so numbers in prose and tables are always the ones the code computed. Each of
these calls also records the result in the chapter's record file (:mod:`rnnlib.book.results`:
name, value, provenance), which ``rnnlib build`` publishes as ``results.json``. The "how to
cite" block of a figure or table lists the parameters its artifacts' configs depend on
(``ch.figure(name, fig, artifacts=[model_art], extra=["beam_size"])``), links its files and gives
BibTeX entries for it and for the paper it reproduces (:mod:`rnnlib.book.citing`).

Environment (set by ``rnnlib run`` / ``rnnlib build``; sensible defaults otherwise):
``RNNLIB_BOOK_ROOT`` (the folder with ``_toc.yml``), ``RNNLIB_CACHE`` (artifact cache),
``RNNLIB_FIGURES`` (where PNG and PDF files go), ``RNNLIB_RESULTS`` (the record files; default
``results/`` beside the figures folder), ``RNNLIB_CHAPTER`` (for the build log).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from ..config import config_subset, load_config
from . import citing, style
from ..cache import Artifact, ArtifactCache, config_hash, find_book_root, git_commit
from .params import ParameterError, chapter_specs, typed
from .results import Recorder, artifact_refs, looked_up, results_folder


def _display_markdown(text: str) -> None:
    from IPython.display import Markdown, display

    display(Markdown(text))


def _glue(name: str, value: Any) -> None:
    from myst_nb import glue

    glue(name, value, display=False)


def parameters_dropdown(params: dict[str, Any], defaults: dict[str, Any]) -> str:
    """A chapter's parameters as a MyST dropdown, collapsed: its title says how many differ from
    the chapter's defaults (those of its parameters cell, which a profile or ``-p`` overrides),
    and the table lists those first, with their default beside the value."""
    changed = [k for k in params if params[k] != defaults.get(k, params[k])]
    order = changed + [k for k in params if k not in changed]
    rows = "\n".join(
        f"| `{k}` | `{params[k]!r}` | " + (f"`{defaults[k]!r}`" if k in changed else "same") + " |"
        for k in order
    )
    title = f"Parameters: {len(params)}, of which {len(changed)} differ from the chapter's defaults"
    if changed:
        title += " (" + ", ".join(changed[:6]) + (", …" if len(changed) > 6 else "") + ")"
    return (
        f":::{{admonition}} {title}\n:class: dropdown\n\n"
        f"| parameter | value | default |\n|---|---|---|\n{rows}\n:::\n"
    )


@dataclass
class Chapter:
    """A running chapter: ``name`` (file stem), validated ``params``, its cache and figure folder,
    and the recorder of its results (``None``: results are not recorded)."""

    name: str
    params: dict[str, Any]
    root: Path
    cache: ArtifactCache
    figures_dir: Path
    names: list[str] = field(default_factory=list)
    recorder: Recorder | None = None
    _commit: str | None = field(default=None, repr=False)

    # -- start --------------------------------------------------------------------------------
    @classmethod
    def start(cls, name: str, namespace: dict[str, Any], show: bool = True) -> "Chapter":
        """Validate the chapter's parameters as found in ``namespace`` (the notebook's globals).

        The declared parameters are read from ``chapters/<name>.md`` itself, so a value that
        papermill injected is checked exactly as ``rnnlib run`` checks it. A parameter of an
        included block (``# include: corpus``) that the notebook does not define (it was run
        by hand, not by papermill) gets its default, set in ``namespace`` too.
        """
        root = find_book_root()
        if root is None:
            raise RuntimeError(
                "cannot find the book root (a folder with _toc.yml) above "
                f"{Path.cwd()}; set RNNLIB_BOOK_ROOT"
            )
        specs = chapter_specs(root / "chapters" / f"{name}.md")
        params = {}
        for pname, spec in specs.items():
            if pname not in namespace and spec.block is not None:
                namespace[pname] = spec.default
            if pname not in namespace:
                raise ParameterError(
                    f"chapter {name}: parameter '{pname}' is not defined in the notebook"
                )
            params[pname] = spec.check(namespace[pname], f"chapter {name}")
        os.environ.setdefault("RNNLIB_CHAPTER", name)
        style.use()  # every figure of the book looks like one book
        figures = Path(os.environ.get("RNNLIB_FIGURES") or root / "_build" / "figures")
        figures.mkdir(parents=True, exist_ok=True)
        ch = cls(name, params, root, ArtifactCache(), figures)
        ch.recorder = Recorder(
            results_folder(figures) / f"{name}.json", name, ch.profile, ch.config_hash, ch.commit
        )  # a rerun of the chapter starts its record afresh
        ch.recorder.add(
            "params", "params", ch.params, ch.stable_name("params")
        )  # what the results ran with
        if show:
            ch.header()
        return ch

    @property
    def profile(self) -> str:
        return self.params["profile"]

    def typed(self, cls: type) -> Any:
        """The chapter's parameters as one frozen ``cls`` (:func:`rnnlib.book.params.typed`)."""
        return typed(cls, self.params, self.name)

    @property
    def commit(self) -> str:
        """The git commit of the book (``+dirty`` with uncommitted changes), read once."""
        if self._commit is None:
            self._commit = git_commit(self.root) or "unknown"
        return self._commit

    @property
    def config_hash(self) -> str:
        """Hash of the chapter name and every parameter but the profile's name (8 hex digits)."""
        return config_hash(
            {
                "chapter": self.name,
                "params": {k: v for k, v in self.params.items() if k != "profile"},
            },
            8,
        )

    def stable_name(self, item: str) -> str:
        """``<chapter>-<item>-<profile>-<config hash>``: the citable name of a figure or table."""
        return f"{self.name}-{item}-{self.profile}-{self.config_hash}"

    def header(self) -> None:
        """Show the profile, the config hash and the commit this chapter ran with, and its
        parameters in a dropdown, collapsed (:func:`parameters_dropdown`)."""
        specs = chapter_specs(self.root / "chapters" / f"{self.name}.md")
        defaults = {k: spec.default for k, spec in specs.items()}
        _display_markdown(
            f"**Ran with profile `{self.profile}`**, config hash `{self.config_hash}`, "
            f"rnnlib commit `{self.commit[:12]}`.\n\n{parameters_dropdown(self.params, defaults)}"
        )

    # -- configs and artifacts ----------------------------------------------------------------
    def config(self, cls: type, **overrides: Any):
        """The config ``cls`` (a dataclass) from the chapter's parameters of the same names
        (:func:`rnnlib.config.config_subset`), with ``overrides`` by field name on top; an
        unknown name is an error (:func:`rnnlib.config.load_config`)."""
        return load_config(
            cls,
            {**config_subset(cls, self.params), **overrides},
            f"chapter {self.name}: {cls.__name__}",
        )

    def artifact(
        self,
        kind: str,
        config: dict,
        make: Callable[[Path, Path], dict | None],
        data: str | None = None,
    ) -> Artifact:
        """The cached artifact for ``config`` (see :meth:`rnnlib.cache.ArtifactCache.build`)."""
        return self.cache.build(kind, config, make, data=data)

    # -- results ------------------------------------------------------------------------------
    def _claim(self, glue_name: str) -> None:
        if glue_name in self.names:
            raise ValueError(f"chapter {self.name}: the name {glue_name!r} is used twice")
        self.names.append(glue_name)

    def _record(
        self,
        glue_name: str,
        kind: str,
        value: Any,
        files: list[str] = (),
        artifacts: list | None = None,
    ) -> None:
        """Append the result to the chapter's record file (:mod:`rnnlib.book.results`): its
        ``artifacts``, or without them every artifact the chapter has looked up so far."""
        if self.recorder is None:
            return
        refs = artifact_refs(artifacts) if artifacts is not None else looked_up(self.cache.events)
        self.recorder.add(glue_name, kind, value, self.stable_name(glue_name), list(files), refs)

    def figure(
        self,
        glue_name: str,
        fig,
        artifacts: list | None = None,
        extra: list[str] | None = None,
        paper: str | None = None,
    ) -> dict[str, Path]:
        """Save ``fig`` as PNG and PDF under its stable name and glue it as ``glue_name``.

        Show it in the chapter's Markdown with ``{glue:figure} <glue_name>`` and
        ``:name: <glue_name>``. ``artifacts`` (what the figure is drawn from) and ``extra`` (the
        parameters the drawing itself uses) choose the parameters its "how to cite" block
        lists (:meth:`cited_params`); ``artifacts`` is also the provenance recorded for it.
        ``paper``: the paper it reproduces, ``"A"``, ``"B"``, ``"AB"`` or ``""`` for none, for
        the BibTeX of its cite block (default: from the chapter's part, see
        :mod:`rnnlib.book.citing`). Returns the paths of both files.
        """
        import matplotlib.pyplot as plt

        paper = self._check_paper(glue_name, "figure", paper)
        self._claim(glue_name)
        stem = self.stable_name(glue_name)
        paths = {}
        for ext in ("png", "pdf"):
            paths[ext] = self.figures_dir / f"{stem}.{ext}"
            fig.savefig(
                paths[ext],
                dpi=150 if ext == "png" else None,
                bbox_inches="tight",
                metadata=None if ext == "png" else {"Title": stem},
            )
        _glue(glue_name, fig)
        plt.close(fig)
        files = [paths["png"].name, paths["pdf"].name]
        self._record(glue_name, "figure", None, files, artifacts)
        self._cite(glue_name, "Figure", files, self.cited_params(artifacts, extra), paper)
        return paths

    def table(
        self,
        glue_name: str,
        df,
        artifacts: list | None = None,
        extra: list[str] | None = None,
        paper: str | None = None,
    ) -> Path:
        """Glue a pandas DataFrame as ``glue_name`` and save it as CSV under its stable name.

        The book shows missing values (a number a paper does not give) as an em dash; the CSV
        keeps them empty. ``artifacts``, ``extra`` and ``paper``: as for :meth:`figure`.
        """
        paper = self._check_paper(glue_name, "table", paper)
        self._claim(glue_name)
        stem = self.stable_name(glue_name)
        path = self.figures_dir / f"{stem}.csv"
        df.to_csv(path)
        _glue(glue_name, BookTable(df))
        self._record(glue_name, "table", df, [path.name], artifacts)
        self._cite(glue_name, "Table", [path.name], self.cited_params(artifacts, extra), paper)
        return path

    def cited_params(
        self, artifacts: list | None = None, extra: list[str] | None = None
    ) -> list[str]:
        """The chapter parameters a figure or table depends on, in declaration order.

        A parameter is listed when its name is a key, at any depth, of the config of one of
        ``artifacts`` (an :class:`~rnnlib.cache.Artifact`, an object with an ``artifact``
        such as a prepared corpus, a config dataclass or a dict), or when it is named in
        ``extra`` (a parameter the figure itself uses, or one an artifact's data depends on
        without its config naming it). With neither given, every parameter is listed. An
        ``extra`` name that is no parameter of the chapter is an error.
        """
        if artifacts is None and extra is None:
            return [k for k in self.params if k != "profile"]
        unknown = [n for n in extra or () if n not in self.params]
        if unknown:
            raise ParameterError(
                f"chapter {self.name}: extra={unknown} names no parameter of the chapter; "
                f"it declares {', '.join(self.params)}"
            )
        keys = set(extra or ())
        for item in artifacts or ():
            keys |= _config_keys(_config_of(item))
        return [k for k in self.params if k in keys and k != "profile"]

    def number(
        self, glue_name: str, value: Any, digits: int | None = None, artifacts: list | None = None
    ) -> Any:
        """Glue a number (rounded to ``digits``) for ``{glue:}`` in prose; returns the glued value.

        ``artifacts``: what it was computed from, recorded as its provenance (default: every
        artifact the chapter has looked up so far; see :mod:`rnnlib.book.results`)."""
        self._claim(glue_name)
        if digits is not None:
            value = round(float(value), digits)
        elif hasattr(value, "item"):
            value = value.item()
        _glue(glue_name, value)
        self._record(glue_name, "number", value, artifacts=artifacts)
        return value

    def glue(self, numbers: dict[str, Any], artifacts: list | None = None) -> dict[str, Any]:
        """Glue an item's numbers at once: ``numbers`` maps each glue name to a value or to
        ``(value, digits)`` (see :meth:`number`), or to a short Markdown text (a ``str``, glued
        by :meth:`text`), as an item module's ``numbers(...)`` or ``texts(...)`` returns them;
        returns the glued values by name. The one convention for an item's numbers in every
        chapter: ``ch.glue(figure_2.numbers(...))``."""
        glued = {}
        for name, value in numbers.items():
            if isinstance(value, str):
                glued[name] = self.text(name, value, artifacts=artifacts)
                continue
            value, digits = value if isinstance(value, tuple) else (value, None)
            glued[name] = self.number(name, value, digits, artifacts=artifacts)
        return glued

    def text(self, glue_name: str, markdown: str, artifacts: list | None = None) -> str:
        """Glue a short Markdown text computed from results (a verdict, a list of names), for
        ``{glue:md}`` in prose; returns it. ``artifacts``: as for :meth:`number`."""
        from IPython.display import Markdown

        self._claim(glue_name)
        _glue(glue_name, Markdown(markdown))
        self._record(glue_name, "text", markdown, artifacts=artifacts)
        return markdown

    def _check_paper(self, glue_name: str, what: str, paper: str | None) -> str:
        """The papers a figure or table reproduces: ``paper`` checked, or the chapter's."""
        if paper is None:
            return citing.chapter_papers(self.root, self.name)
        return citing.check_paper(paper, f"chapter {self.name}: {what} {glue_name!r}")

    def _cite(
        self, glue_name: str, what: str, files: list[str], params: list[str], paper: str
    ) -> None:
        """A "how to cite" block shown under the cell that made the figure or table: the citation
        in words, links to its files and to ``results.json`` (relative: they resolve in the built
        HTML folder, where ``rnnlib build`` copies the ``figures/``), and BibTeX entries for the
        item and for the papers it reproduces (``paper``: their letters)."""
        settings = ", ".join(f"{k}={self.params[k]!r}" for k in params if k != "profile")
        title, version = book_citation(self.root)
        stem = self.stable_name(glue_name)
        up = "../" * len(
            Path("chapters", self.name).parent.parts
        )  # the page's folder -> the HTML root
        links = ", ".join(f'<a href="{up}figures/{f}">{f}</a>' for f in files)
        bibtex = "\n\n".join(
            [
                citing.item_bibtex(
                    self.root, stem, what, self.name, self.profile, self.config_hash, self.commit
                ),
                *citing.paper_bibtex(self.root, paper),
            ]
        )
        _display_markdown(
            f":::{{admonition}} How to cite this {what.lower()}: `{stem}`\n"
            f":class: dropdown\n\n"
            f"{title}, version {version} (rnnlib commit `{self.commit[:12]}`), {what.lower()} "
            f"`{stem}`: chapter `{self.name}`, profile `{self.profile}`, "
            f"config hash `{self.config_hash}`"
            + (f"; parameters {settings}" if settings else "")
            + f'. Files: {links}; its entry in <a href="{up}results.json">results.json</a>.\n\n'
            f"```bibtex\n{bibtex}\n```\n:::\n"
        )


def _config_of(item: Any) -> Any:
    """The config an item of ``artifacts`` stands for (see :meth:`Chapter.cited_params`)."""
    if isinstance(item, Artifact):
        return item.config
    if isinstance(item, dict) or is_dataclass(item) and not isinstance(item, type):
        return item
    if getattr(item, "artifact", None) is not None:
        return _config_of(item.artifact)
    raise TypeError(
        f"artifacts=[...]: {type(item).__name__} is not an artifact, a config or a dict"
    )


def _config_keys(config: Any) -> set[str]:
    """Every key of a config, at any depth (dicts, dataclasses, lists of them)."""
    if is_dataclass(config) and not isinstance(config, type):
        config = {f.name: getattr(config, f.name) for f in fields(config)}
    if isinstance(config, dict):
        return set(map(str, config)) | {k for v in config.values() for k in _config_keys(v)}
    if isinstance(config, (list, tuple)):
        return {k for v in config for k in _config_keys(v)}
    return set()


class BookTable:
    """A DataFrame as the book shows it: HTML with ``—`` for missing values, class ``book-table``
    (styled by ``_static/book.css``); plain text elsewhere."""

    def __init__(self, df) -> None:
        self.df = df

    def _repr_html_(self) -> str:
        return self.df.to_html(na_rep="\u2014", border=0, classes="book-table", justify="left")

    def __repr__(self) -> str:
        return self.df.to_string(na_rep="-")


def book_citation(root: Path) -> tuple[str, str]:
    """The book's title and version, from ``CITATION.cff``."""
    try:
        cff = yaml.safe_load((Path(root) / "CITATION.cff").read_text(encoding="utf-8"))
        return f"*{cff['title']}*", str(cff.get("version", "unversioned"))
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return "*the replication book*", "unversioned"
