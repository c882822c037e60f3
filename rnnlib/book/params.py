"""Chapter parameters: declared in the chapter, set by a profile, overridden on the command line.

A chapter declares its parameters in its cell tagged ``parameters`` (the cell papermill
replaces), one per line, with a type annotation, a default and a comment saying what the
value accepts and means::

    profile: str = "cpu"        # name of the profile the chapter runs under
    steps: int = 300            # [1, 100000] training updates
    beam_size: int = 5          # [1, 200] beam width
    arch: str = "rnnsearch"     # {rnnsearch, rnnencdec} model
    lr: float = 1.0             # (0, 10] learning rate
    max_len: int | None = None  # [1, 500] length filter, None for none

The bracket at the start of the comment is the accepted range (``[`` and ``]`` include the
bound, ``(`` and ``)`` exclude it; an empty bound is unbounded) or, in braces, the accepted
values.

A block of parameters that several chapters share is declared once, in its module, and a
chapter includes it with a marker line, optionally changing defaults (``name=value``, Python
literals without spaces)::

    # include: corpus src_vocab=30000 tgt_vocab=30000

(:data:`INCLUDES` names the blocks; ``corpus`` is :mod:`rnnlib.book.corpus_params`). The included
parameters are the chapter's like any other: listed by ``rnnlib params``, set by profiles and
``-p``, injected by papermill; run by hand, the notebook gets their defaults from
:meth:`rnnlib.book.Chapter.start`. This cell is the single source of truth: :func:`resolve`
validates a profile and command-line overrides against it before any work starts, and
:meth:`rnnlib.book.Chapter.start` validates again inside the running notebook.

A profile (``profiles/<name>.yml``) is::

    description: one line
    extends: cpu         # optional: another profile, which this one's values override
    defaults:            # applied to every chapter that declares the parameter
      seed: 1
    chapters:
      copy_task:         # chapter file stem
        steps: 400

``rnnlib run`` and ``rnnlib build`` also hand their command-line overrides to the chapters'
kernels (:data:`OVERRIDES_ENV`, :func:`run_overrides`), so a chapter that reads another
chapter's parameters resolves them as that chapter would run.
"""

from __future__ import annotations

import ast
import importlib
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from ..config import parse_value


class ParameterError(ValueError):
    """A parameter that is unknown, of the wrong type or out of range."""


_TYPES = {"int": int, "float": float, "bool": bool, "str": str}


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter: its name, type, default, accepted values and help."""

    name: str
    type: str  # int | float | bool | str
    optional: bool  # ``None`` accepted
    default: Any
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None
    block: str | None = field(default=None, compare=False)  # the shared block it was included from

    def accepts(self) -> str:
        """What the parameter accepts, in words (used in every error message)."""
        if self.choices is not None:
            what = f"one of {', '.join(map(repr, self.choices))}"
        elif self.low is not None or self.high is not None:
            lo = "-inf" if self.low is None else _fmt(self.low)
            hi = "inf" if self.high is None else _fmt(self.high)
            lb = "(" if self.low_open or self.low is None else "["
            hb = ")" if self.high_open or self.high is None else "]"
            what = f"{_article(self.type)} {self.type} in {lb}{lo}, {hi}{hb}"
        else:
            what = f"{_article(self.type)} {self.type}"
        return what + (" or None" if self.optional else "")

    def check(self, value: Any, origin: str) -> Any:
        """``value`` converted to the declared type, or a :class:`ParameterError`."""
        where = f"parameter '{self.name}' = {value!r} ({origin})"
        if value is None:
            if self.optional:
                return None
            raise ParameterError(f"{where}: None is not accepted; it accepts {self.accepts()}")
        py = _TYPES[self.type]
        if py is bool:
            ok = isinstance(value, bool)
        elif py is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif py is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
            ok = ok and math.isfinite(value)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise ParameterError(
                f"{where}: wrong type {type(value).__name__}; it accepts {self.accepts()}"
            )
        if self.choices is not None and value not in self.choices:
            raise ParameterError(f"{where}: not accepted; it accepts {self.accepts()}")
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise ParameterError(f"{where}: out of range; it accepts {self.accepts()}")
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise ParameterError(f"{where}: out of range; it accepts {self.accepts()}")
        return value


def typed(cls: type, params: dict[str, Any], chapter: str) -> Any:
    """The chapter's validated ``params`` as one frozen, typed object: an instance of ``cls``, a
    frozen dataclass of the experiment (``rnnlib.experiments.<paper>.setting.Params``) whose fields
    are exactly the chapter's parameters, so that code reads ``P.hidden`` where it acts and no
    name travels through a dict. A field the chapter does not declare, or a parameter the class
    lacks, is a :class:`ParameterError` naming both sides."""
    from dataclasses import fields, is_dataclass

    if not is_dataclass(cls) or not cls.__dataclass_params__.frozen:
        raise TypeError(f"{cls.__name__} must be a frozen dataclass")
    names = {f.name for f in fields(cls)}
    missing, extra = sorted(set(params) - names), sorted(names - set(params))
    if missing or extra:
        raise ParameterError(
            f"chapter {chapter}: {cls.__module__}.{cls.__name__} does not match the parameters "
            f"cell (parameters without a field: {', '.join(missing) or 'none'}; fields without "
            f"a parameter: {', '.join(extra) or 'none'})"
        )
    return cls(**params)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


_RANGE = re.compile(r"^\s*([\[(])\s*([^,\])]*)\s*,\s*([^\])]*)\s*([\])])\s*(.*)$")
_CHOICES = re.compile(r"^\s*\{([^}]*)\}\s*(.*)$")
_INCLUDE = re.compile(r"^\s*#\s*include:\s*(\S*)\s*(.*)$")

#: ``# include: <name>`` -> the module whose ``parameter_block()`` is the shared block
INCLUDES = {"corpus": "rnnlib.book.corpus_params"}


def parse_parameters_cell(source: str, where: str = "parameters cell") -> dict[str, ParamSpec]:
    """The :class:`ParamSpec` of every ``name: type = default  # comment`` line of ``source``,
    and of every parameter of the blocks its ``# include: <block>`` lines name, in order."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[tuple[int, int, ParamSpec]] = []  # (line, position in an included block, spec)
    for lineno, line in enumerate(lines, 1):
        if m := _INCLUDE.match(line):
            included = included_block(m.group(1), m.group(2), f"{where}, line {lineno}")
            found += [(lineno, k, spec) for k, spec in enumerate(included.values())]
    for node in tree.body:
        if (
            not isinstance(node, ast.AnnAssign)
            or not isinstance(node.target, ast.Name)
            or node.value is None
        ):
            raise ParameterError(
                f"{where}, line {node.lineno}: every statement must read "
                "'name: type = default  # [range] help'"
            )
        name = node.target.id
        type_name, optional = _annotation(node.annotation, f"{where}, line {node.lineno}")
        try:
            default = ast.literal_eval(node.value)
        except ValueError as e:
            raise ParameterError(
                f"{where}, line {node.lineno}: the default of '{name}' must be a literal"
            ) from e
        line = lines[node.lineno - 1]
        comment = line.split("#", 1)[1].strip() if "#" in line[node.value.end_col_offset :] else ""
        low = high = None
        low_open = high_open = False
        choices = None
        if m := _RANGE.match(comment):
            lb, lo, hi, hb, comment = m.groups()
            low = _number(lo, name, where) if lo.strip() else None
            high = _number(hi, name, where) if hi.strip() else None
            low_open, high_open = lb == "(", hb == ")"
        elif m := _CHOICES.match(comment):
            items, comment = m.groups()
            choices = tuple(_literal(x.strip(), type_name) for x in items.split(",") if x.strip())
        spec = ParamSpec(
            name,
            type_name,
            optional,
            default,
            comment.strip(),
            low,
            high,
            low_open,
            high_open,
            choices,
        )
        spec.check(default, f"default in {where}")
        found.append((node.lineno, 0, spec))
    specs: dict[str, ParamSpec] = {}
    first_line: dict[str, int] = {}
    for lineno, _, spec in sorted(found, key=lambda x: x[:2]):
        if spec.name in specs:
            raise ParameterError(
                f"{where}: parameter '{spec.name}' is declared twice (line "
                f"{first_line[spec.name]} and line {lineno}; an included block counts "
                "as declared on its '# include:' line)"
            )
        specs[spec.name], first_line[spec.name] = spec, lineno
    return specs


def included_block(name: str, defaults: str, where: str) -> dict[str, ParamSpec]:
    """The specs of the shared block ``name`` (:data:`INCLUDES`), with ``defaults``
    (``"src_vocab=30000 max_len=None"``) replacing the block's defaults."""
    if name not in INCLUDES:
        raise ParameterError(
            f"{where}: '# include: {name}' names no shared block; "
            f"the blocks are {', '.join(INCLUDES)}"
        )
    module = importlib.import_module(INCLUDES[name])
    specs = parse_parameters_cell(module.parameter_block(), where=f"{INCLUDES[name]} block")
    for item in defaults.split():
        key, sep, text = item.partition("=")
        if not sep or key not in specs:
            raise ParameterError(
                f"{where}: '# include: {name}' takes name=value defaults of its own "
                f"parameters ({', '.join(specs)}); got {item!r}"
            )
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text if specs[key].type == "str" else None
            if value is None:
                raise ParameterError(
                    f"{where}: the default {item!r} is not a Python literal"
                ) from None
        specs[key] = replace(specs[key], default=specs[key].check(value, f"default in {where}"))
    return {n: replace(spec, block=name) for n, spec in specs.items()}


def _annotation(node: ast.expr, where: str) -> tuple[str, bool]:
    if isinstance(node, ast.Name) and node.id in _TYPES:
        return node.id, False
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.BitOr)
        and isinstance(node.right, ast.Constant)
        and node.right.value is None
        and isinstance(node.left, ast.Name)
        and node.left.id in _TYPES
    ):
        return node.left.id, True
    raise ParameterError(
        f"{where}: the type must be one of int, float, bool, str (optionally '| None')"
    )


def _number(text: str, name: str, where: str) -> float:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ParameterError(f"{where}: the range bound {text!r} of '{name}' is not a number")
    return value


def _literal(text: str, type_name: str) -> Any:
    if type_name == "str":
        return text.strip("'\"")
    return ast.literal_eval(text)


# -- chapters ----------------------------------------------------------------------------------


def chapter_parameters_source(path: Path) -> str:
    """The source of the cell tagged ``parameters`` in a MyST Markdown notebook."""
    import jupytext

    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"chapter {path} does not exist")
    nb = jupytext.read(path)
    cells = [
        c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])
    ]
    if len(cells) != 1:
        raise ParameterError(
            f"{path}: expected exactly one code cell tagged 'parameters', found {len(cells)}"
        )
    return cells[0].source


def chapter_specs(path: Path) -> dict[str, ParamSpec]:
    specs = parse_parameters_cell(
        chapter_parameters_source(path), where=f"{path} (parameters cell)"
    )
    if "profile" not in specs:
        raise ParameterError(f"{path}: the parameters cell must declare 'profile: str'")
    return specs


def is_notebook(path: Path) -> bool:
    """True for a MyST Markdown notebook (front matter with a kernelspec)."""
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    front = text.split("---", 2)[1]
    return "kernelspec" in (yaml.safe_load(front) or {})


# -- profiles and overrides ---------------------------------------------------------------------


def load_profile(book_root: Path, name: str, _seen: tuple[str, ...] = ()) -> dict:
    """The profile ``profiles/<name>.yml``. A profile with ``extends: <base>`` is the base
    profile with its own ``defaults`` and each chapter's parameters set on top."""
    path = Path(book_root) / "profiles" / f"{name}.yml"
    if not path.is_file():
        known = sorted(p.stem for p in (Path(book_root) / "profiles").glob("*.yml"))
        raise ParameterError(f"unknown profile {name!r}; the profiles are {', '.join(known)}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    unknown = set(data) - {"description", "extends", "defaults", "chapters"}
    if unknown:
        raise ParameterError(
            f"{path}: unknown top-level keys {sorted(unknown)}; "
            "a profile has description, extends, defaults, chapters"
        )
    data["defaults"] = dict(data.get("defaults") or {})
    data["chapters"] = {k: dict(v or {}) for k, v in (data.get("chapters") or {}).items()}
    base_name = data.pop("extends", None)
    if base_name is not None:
        if base_name in (*_seen, name):
            raise ParameterError(f"{path}: extends {base_name!r}, which extends it back")
        base = load_profile(book_root, base_name, (*_seen, name))
        data["defaults"] = {**base["defaults"], **data["defaults"]}
        chapters = {k: dict(v) for k, v in base["chapters"].items()}
        for chapter, values in data["chapters"].items():
            chapters[chapter] = {**chapters.get(chapter, {}), **values}
        data["chapters"] = chapters
        data["extends"] = base_name
    data["path"] = str(path) if base_name is None else f"{path} (extends {base['path']})"
    return data


def parse_override(text: str) -> tuple[str | None, str, Any]:
    """``[chapter.]name=value`` -> ``(chapter or None, name, value)``; the value is read as a
    Python literal (:func:`rnnlib.config.parse_value`: ``-p lr=1e-3`` is a float, ``-p
    tokenizer=no`` the string ``"no"``); ``None`` and ``null`` both unset an optional parameter.
    """
    if "=" not in text:
        raise ParameterError(f"override {text!r} must read name=value or chapter.name=value")
    lhs, rhs = text.split("=", 1)
    lhs = lhs.strip()
    chapter, _, name = lhs.rpartition(".")
    if not name.isidentifier() or (chapter and not re.fullmatch(r"[\w-]+", chapter)):
        raise ParameterError(f"override {text!r}: {lhs!r} is not a parameter name")
    return chapter or None, name, parse_value(rhs) if rhs.strip() else ""


#: The environment variable that carries the command-line overrides of ``rnnlib run`` and
#: ``rnnlib build`` (a JSON list of ``[chapter.]name=value``) into the chapters' kernels, which
#: inherit the environment: a chapter that reads another chapter's parameters (the
#: representations chapter reads those of ``cho2014``) then sees ``-p cho2014.name=value`` too.
OVERRIDES_ENV = "RNNLIB_OVERRIDES"


def run_overrides() -> list[str]:
    """The command-line overrides of the ``rnnlib run`` or ``rnnlib build`` that started this
    process (:data:`OVERRIDES_ENV`); ``[]`` outside one (a notebook run by hand)."""
    import json
    import os

    text = os.environ.get(OVERRIDES_ENV)
    if not text:
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParameterError(f"${OVERRIDES_ENV} is not a JSON list of overrides: {e}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParameterError(f"${OVERRIDES_ENV} must be a JSON list of strings, got {text!r}")
    return value


@contextmanager
def overrides_in_environment(overrides: list[str]):
    """Set :data:`OVERRIDES_ENV` to ``overrides`` inside the block (the kernels started there
    inherit it) and restore the previous value after."""
    import json
    import os

    before = os.environ.get(OVERRIDES_ENV)
    os.environ[OVERRIDES_ENV] = json.dumps(list(overrides))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(OVERRIDES_ENV, None)
        else:
            os.environ[OVERRIDES_ENV] = before


def resolve(
    chapters: dict[str, Path], profile: dict, profile_name: str, overrides: list[str]
) -> dict[str, dict[str, Any]]:
    """The validated parameters of each chapter (``{stem: {name: value}}``).

    Order: the chapter's defaults, the profile's ``defaults`` (where the chapter declares the
    name), the profile's chapter section, then the overrides. Every problem names the
    parameter, where the value came from and what it accepts.
    """
    specs = {stem: chapter_specs(path) for stem, path in chapters.items()}
    where = profile["path"]
    for stem in profile["chapters"]:
        if stem not in specs:
            raise ParameterError(
                f"{where}: section for unknown chapter {stem!r}; "
                f"the chapters are {', '.join(sorted(specs))}"
            )
    for name in profile["defaults"]:
        if not any(name in s for s in specs.values()):
            raise ParameterError(f"{where}: default for {name!r}, which no chapter declares")
    parsed = [parse_override(o) for o in overrides]
    for chapter, name, _ in parsed:
        if chapter is not None and chapter not in specs:
            raise ParameterError(
                f"override {chapter}.{name}: unknown chapter {chapter!r}; "
                f"the chapters are {', '.join(sorted(specs))}"
            )
        targets = [chapter] if chapter else list(specs)
        if not any(name in specs[t] for t in targets):
            raise ParameterError(
                f"override {name!r}: unknown parameter for "
                f"{'chapter ' + chapter if chapter else 'any chapter'}; "
                f"known: {', '.join(sorted({n for t in targets for n in specs[t]}))}"
            )
    out = {}
    for stem, spec in specs.items():
        values = {n: s.default for n, s in spec.items()}
        origins = {n: f"default in chapter {stem}" for n in spec}
        sources = [
            (profile["defaults"], f"{where} defaults"),
            (profile["chapters"].get(stem) or {}, f"{where} chapters.{stem}"),
        ]
        for mapping, origin in sources:
            for name, value in mapping.items():
                if name not in spec:
                    if origin.endswith(f"chapters.{stem}"):
                        raise ParameterError(
                            f"{origin}: unknown parameter {name!r}; "
                            f"{stem} declares {', '.join(sorted(spec))}"
                        )
                    continue
                values[name], origins[name] = value, f"{origin}, chapter {stem}"
        for chapter, name, value in parsed:
            if (chapter in (None, stem)) and name in spec:
                values[name], origins[name] = value, f"command-line override, chapter {stem}"
        values["profile"], origins["profile"] = profile_name, "profile name"
        out[stem] = {n: spec[n].check(v, origins[n]) for n, v in values.items()}
    return out
