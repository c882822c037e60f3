"""What a chapter notebook calls: its parameters, its artifacts, its figures, tables and numbers.

A chapter starts with::

    ch = Chapter.start("copy_task", globals())   # validates the parameters, shows the header

builds its configs from its parameters (``ch.config(TrainConfig, ...)``: parameter names are
config field names), asks the cache for what is expensive (``ch.artifact``) and shows results
only through ``ch.figure``, ``ch.table`` and ``ch.number``: each saves or glues (myst-nb
``glue``) the value under a stable, citable name that carries the profile and the chapter's
config hash, so numbers in prose and tables are always the ones the code computed. The "how to
cite" block of a figure or table lists the parameters its artifacts' configs depend on
(``ch.figure(name, fig, artifacts=[model_art], extra=["beam_size"])``).

Environment (set by ``rnnlib run`` / ``rnnlib build``; sensible defaults otherwise):
``RNNLIB_BOOK_ROOT`` (the folder with ``_toc.yml``), ``RNNLIB_CACHE`` (artifact cache),
``RNNLIB_FIGURES`` (where PNG and PDF files go), ``RNNLIB_CHAPTER`` (for the build log).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from ..config import config_subset, load_config
from .cache import Artifact, ArtifactCache, config_hash, find_book_root, git_commit
from .params import ParameterError, chapter_specs


def _display_markdown(text: str) -> None:
    from IPython.display import Markdown, display
    display(Markdown(text))


def _glue(name: str, value: Any) -> None:
    from myst_nb import glue
    glue(name, value, display=False)


@dataclass
class Chapter:
    """A running chapter: ``name`` (file stem), validated ``params``, its cache and figure folder."""

    name: str
    params: dict[str, Any]
    root: Path
    cache: ArtifactCache
    figures_dir: Path
    names: list[str] = field(default_factory=list)

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
            raise RuntimeError("cannot find the book root (a folder with _toc.yml) above "
                               f"{Path.cwd()}; set RNNLIB_BOOK_ROOT")
        specs = chapter_specs(root / "chapters" / f"{name}.md")
        params = {}
        for pname, spec in specs.items():
            if pname not in namespace and spec.block is not None:
                namespace[pname] = spec.default
            if pname not in namespace:
                raise ParameterError(f"chapter {name}: parameter '{pname}' is not defined in the notebook")
            params[pname] = spec.check(namespace[pname], f"chapter {name}")
        os.environ.setdefault("RNNLIB_CHAPTER", name)
        figures = Path(os.environ.get("RNNLIB_FIGURES") or root / "_build" / "figures")
        figures.mkdir(parents=True, exist_ok=True)
        ch = cls(name, params, root, ArtifactCache(), figures)
        if show:
            ch.header()
        return ch

    @property
    def profile(self) -> str:
        return self.params["profile"]

    @property
    def config_hash(self) -> str:
        """Hash of the chapter name and every parameter but the profile's name (8 hex digits)."""
        return config_hash({"chapter": self.name,
                            "params": {k: v for k, v in self.params.items() if k != "profile"}}, 8)

    def stable_name(self, item: str) -> str:
        """``<chapter>-<item>-<profile>-<config hash>``: the citable name of a figure or table."""
        return f"{self.name}-{item}-{self.profile}-{self.config_hash}"

    def header(self) -> None:
        """Show the profile, the parameters and the config hash this chapter ran with."""
        rows = "\n".join(f"| `{k}` | `{v!r}` |" for k, v in self.params.items())
        commit = git_commit(self.root) or "unknown"
        _display_markdown(
            f"**Ran with profile `{self.profile}`**, config hash `{self.config_hash}`, "
            f"rnnlib commit `{commit[:12]}`.\n\n| parameter | value |\n|---|---|\n{rows}\n")

    # -- configs and artifacts ----------------------------------------------------------------
    def config(self, cls: type, **overrides: Any):
        """The config ``cls`` (a dataclass) from the chapter's parameters of the same names
        (:func:`rnnlib.config.config_subset`), with ``overrides`` by field name on top; an
        unknown name is an error (:func:`rnnlib.config.load_config`)."""
        return load_config(cls, {**config_subset(cls, self.params), **overrides},
                           f"chapter {self.name}: {cls.__name__}")

    def artifact(self, kind: str, config: dict, make: Callable[[Path, Path], dict | None],
                 data: str | None = None) -> Artifact:
        """The cached artifact for ``config`` (see :meth:`rnnlib.book.cache.ArtifactCache.build`)."""
        return self.cache.build(kind, config, make, data=data)

    # -- results ------------------------------------------------------------------------------
    def _claim(self, glue_name: str) -> None:
        if glue_name in self.names:
            raise ValueError(f"chapter {self.name}: the name {glue_name!r} is used twice")
        self.names.append(glue_name)

    def figure(self, glue_name: str, fig, artifacts: list | None = None,
               extra: list[str] | None = None) -> dict[str, Path]:
        """Save ``fig`` as PNG and PDF under its stable name and glue it as ``glue_name``.

        Show it in the chapter's Markdown with ``{glue:figure} <glue_name>`` and
        ``:name: <glue_name>``. ``artifacts`` (what the figure is drawn from) and ``extra`` (the
        parameters the drawing itself uses) choose the parameters its "how to cite" block
        lists (:meth:`cited_params`). Returns the paths of both files.
        """
        import matplotlib.pyplot as plt
        self._claim(glue_name)
        stem = self.stable_name(glue_name)
        paths = {}
        for ext in ("png", "pdf"):
            paths[ext] = self.figures_dir / f"{stem}.{ext}"
            fig.savefig(paths[ext], dpi=150 if ext == "png" else None, bbox_inches="tight",
                        metadata=None if ext == "png" else {"Title": stem})
        _glue(glue_name, fig)
        plt.close(fig)
        self._cite(glue_name, "Figure", f"{stem}.png / {stem}.pdf", self.cited_params(artifacts, extra))
        return paths

    def table(self, glue_name: str, df, artifacts: list | None = None, extra: list[str] | None = None) -> Path:
        """Glue a pandas DataFrame as ``glue_name`` and save it as CSV under its stable name.

        The book shows missing values (a number a paper does not give) as an em dash; the CSV
        keeps them empty. ``artifacts`` and ``extra``: as for :meth:`figure`.
        """
        self._claim(glue_name)
        stem = self.stable_name(glue_name)
        path = self.figures_dir / f"{stem}.csv"
        df.to_csv(path)
        _glue(glue_name, BookTable(df))
        self._cite(glue_name, "Table", f"{stem}.csv", self.cited_params(artifacts, extra))
        return path

    def cited_params(self, artifacts: list | None = None, extra: list[str] | None = None) -> list[str]:
        """The chapter parameters a figure or table depends on, in declaration order.

        A parameter is listed when its name is a key, at any depth, of the config of one of
        ``artifacts`` (an :class:`~rnnlib.book.cache.Artifact`, an object with an ``artifact``
        such as a prepared corpus, a config dataclass or a dict), or when it is named in
        ``extra`` (a parameter the figure itself uses, or one an artifact's data depends on
        without its config naming it). With neither given, every parameter is listed. An
        ``extra`` name that is no parameter of the chapter is an error.
        """
        if artifacts is None and extra is None:
            return [k for k in self.params if k != "profile"]
        unknown = [n for n in extra or () if n not in self.params]
        if unknown:
            raise ParameterError(f"chapter {self.name}: extra={unknown} names no parameter of the chapter; "
                                 f"it declares {', '.join(self.params)}")
        keys = set(extra or ())
        for item in artifacts or ():
            keys |= _config_keys(_config_of(item))
        return [k for k in self.params if k in keys and k != "profile"]

    def number(self, glue_name: str, value: Any, digits: int | None = None) -> Any:
        """Glue a number (rounded to ``digits``) for ``{glue:}`` in prose; returns the glued value."""
        self._claim(glue_name)
        if digits is not None:
            value = round(float(value), digits)
        elif hasattr(value, "item"):
            value = value.item()
        _glue(glue_name, value)
        return value

    def text(self, glue_name: str, markdown: str) -> str:
        """Glue a short Markdown text computed from results (a verdict, a list of names), for
        ``{glue:md}`` in prose; returns it."""
        from IPython.display import Markdown
        self._claim(glue_name)
        _glue(glue_name, Markdown(markdown))
        return markdown

    def _cite(self, glue_name: str, what: str, files: str, params: list[str]) -> None:
        """A "how to cite" block shown under the cell that made the figure or table."""
        settings = ", ".join(f"{k}={self.params[k]!r}" for k in params if k != "profile")
        title, version = book_citation(self.root)
        commit = (git_commit(self.root) or "unknown")[:12]
        _display_markdown(
            f":::{{admonition}} How to cite this {what.lower()}: `{self.stable_name(glue_name)}`\n"
            f":class: dropdown\n\n"
            f"{title}, version {version} (rnnlib commit `{commit}`), {what.lower()} "
            f"`{self.stable_name(glue_name)}`: chapter `{self.name}`, profile `{self.profile}`, "
            f"config hash `{self.config_hash}`" + (f"; parameters {settings}" if settings else "")
            + f". Files: `{files}` (in the build's `figures/` folder).\n:::\n")


def _config_of(item: Any) -> Any:
    """The config an item of ``artifacts`` stands for (see :meth:`Chapter.cited_params`)."""
    if isinstance(item, Artifact):
        return item.config
    if isinstance(item, dict) or is_dataclass(item) and not isinstance(item, type):
        return item
    if getattr(item, "artifact", None) is not None:
        return _config_of(item.artifact)
    raise TypeError(f"artifacts=[...]: {type(item).__name__} is not an artifact, a config or a dict")


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
