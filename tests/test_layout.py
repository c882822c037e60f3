"""The layout the house keeps, so that it does not grow back: sizes of modules, functions and
chapter cells, imports that go downward without cycles, parameters read as one typed object, no
lab notebook (issue numbers, dated trials) in code or configuration, and glued items that are
numbers, words, tables and figures (the sentences are the chapters' Markdown).

Everything but the last two tests reads the sources with :mod:`ast` and regular expressions:
nothing is imported, trained or built. The last two read the records of the smoke book (the
session's ``smoke_book`` fixture, ``<out>/results/<chapter>.json``: see
:mod:`rnnlib.book.results`).

Each failure names the file, the line and the limit.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rnnlib"
EXPERIMENTS = PACKAGE / "experiments"
CHAPTERS = ROOT / "chapters"
PROFILES = ROOT / "profiles"

MAX_EXPERIMENT_MODULE_LINES = 700
MAX_FUNCTION_LINES = 100  # from the ``def`` line to the last line of the body, docstring included
MAX_CELL_LINES = 15  # a chapter's code cell (its parameters cell excepted)
MAX_GLUED_TEXT = 80  # characters of a glued text (verdict words, tables and figures excepted)
MAX_PROFILE_COMMENTS = 1  # comment lines per setting of a profile: the reason, in one line
MAX_PROFILE_COMMENT_LINE = 100  # characters of a profile's line that holds a comment

# The floors of the package, top to bottom. A module may import a module of its own floor or of
# a floor below it, never one above (a package named here stands for all its modules; every
# module not named is on the library floor).
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("command line", ("rnnlib.cli",)),
    ("experiments", ("rnnlib.experiments",)),
    ("book helpers and benchmarks", ("rnnlib.book", "rnnlib.bench")),
    ("judging", ("rnnlib.verdicts", "rnnlib.stats", "rnnlib.bleu_t", "rnnlib.calibration")),
    ("library", ()),  # models, training, search, corpus, smt, fast, cache, ...
)

ISSUE = re.compile(r"\bissues?\s*#\s*\d+|\bissues?\s+\d+", re.IGNORECASE)
ISSUE_SCANNED = {".py", ".pxd", ".pyx", ".md", ".yml", ".yaml"}


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def sources(folder: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _place(problem: str) -> tuple:
    path, _, rest = problem.partition(":")
    line = rest.partition(":")[0]
    return (path, int(line) if line.isdigit() else 0)


def fail_with(problems: list[str], what: str) -> None:
    """Fail listing every problem (``path:line: ...``), by file and line."""
    if problems:
        problems = sorted(problems, key=_place)
        pytest.fail(f"{len(problems)} {what}:\n  " + "\n  ".join(problems), pytrace=False)


# -- sizes ------------------------------------------------------------------------------------
def test_no_experiment_module_is_over_700_lines():
    problems = []
    for path in sources(EXPERIMENTS):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_EXPERIMENT_MODULE_LINES:
            problems.append(
                f"{rel(path)}:1: {n} lines, limit {MAX_EXPERIMENT_MODULE_LINES} "
                "(split it into a package of modules)"
            )
    fail_with(problems, "experiment modules over the limit")


def long_functions(path: Path) -> list[str]:
    out = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                out.append(
                    f"{rel(path)}:{node.lineno}: {node.name} is {n} lines, "
                    f"limit {MAX_FUNCTION_LINES}"
                )
    return out


def test_no_function_in_rnnlib_is_over_100_lines():
    problems = [p for path in sources() for p in long_functions(path)]
    fail_with(problems, "functions or methods over the limit")


# -- imports ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (the most specific module of the package it names)
    path: Path
    line: int
    typing_only: bool  # under ``if TYPE_CHECKING:`` (never runs)


def _typing_only_lines(tree: ast.Module) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, inner.end_lineno + 1))
    return lines


def package_imports() -> list[Import]:
    """Every import of an ``rnnlib`` module by an ``rnnlib`` module, at module level or inside a
    function (``importlib`` calls are not seen)."""
    paths = sources()
    modules = {module_name(p) for p in paths}
    out = []
    for path in paths:
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = parsed(path)
        typing_only = _typing_only_lines(tree)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [
                    f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module
                    for a in node.names
                ]
            for target in targets:
                while target and target not in modules and "." in target:
                    target = target.rpartition(".")[0]  # import a.b.c: the module a.b.c
                if target in modules and target != name:
                    out.append(Import(name, target, path, node.lineno, node.lineno in typing_only))
    return out


def floor_of(module: str) -> int:
    for i, (_, members) in enumerate(FLOORS):
        if any(module == m or module.startswith(m + ".") for m in members):
            return i
    return len(FLOORS) - 1


def test_imports_go_downward():
    problems = []
    for imp in package_imports():
        here, there = floor_of(imp.source), floor_of(imp.target)
        if there < here:
            problems.append(
                f"{rel(imp.path)}:{imp.line}: {imp.source} (floor '{FLOORS[here][0]}') imports "
                f"{imp.target} (floor '{FLOORS[there][0]}', above it); the floors, top to "
                f"bottom: {' > '.join(f for f, _ in FLOORS)}"
            )
    fail_with(problems, "upward imports")


def import_cycles(imports: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a cycle
    through its modules."""
    graph: dict[str, list[str]] = {}
    for imp in imports:
        graph.setdefault(imp.source, []).append(imp.target)
        graph.setdefault(imp.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(set(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_through(graph, c) for c in components]


def _cycle_through(graph: dict[str, list[str]], component: set[str]) -> list[str]:
    """One cycle of ``component``: from its first module back to it (breadth-first, shortest)."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in graph[v]:
            if w == start:
                return paths[v] + [start]
            if w in component and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return sorted(component)


def test_no_import_cycle():
    imports = [i for i in package_imports() if not i.typing_only]
    where = {(i.source, i.target): f"{rel(i.path)}:{i.line}" for i in reversed(imports)}
    problems = []
    for cycle in import_cycles(imports):
        steps = [f"{a} -> {b} ({where[a, b]})" for a, b in zip(cycle, cycle[1:])]
        problems.append("cycle: " + "; ".join(steps) + "; limit: no cycle")
    fail_with(problems, "import cycles (module-level and function-level imports)")


# -- parameters -------------------------------------------------------------------------------
def dict_lookups(path: Path) -> list[str]:
    """``p["..."]``, ``params["..."]``, ``<x>.params["..."]``: a parameter read by name from a
    dict."""
    return [f"{rel(path)}:{x}" for x in dict_lookups_of(path)]


def dict_lookups_of(path: Path) -> list[str]:
    """``<line>: <lookup>: ...`` of :func:`dict_lookups` in any file."""
    out = []
    for node in ast.walk(parsed(path)):
        if not isinstance(node, ast.Subscript):
            continue
        v, key = node.value, node.slice
        by_name = isinstance(key, ast.JoinedStr) or (
            isinstance(key, ast.Constant) and isinstance(key.value, str)
        )
        if (isinstance(v, ast.Name) and v.id == "params") or (
            isinstance(v, ast.Attribute) and v.attr == "params"
        ):
            by_name = True  # params[name] too: a parameter looked up by a computed name
        elif not (isinstance(v, ast.Name) and v.id == "p"):
            continue
        if by_name:
            out.append(
                f"{node.lineno}: {ast.unparse(node)}: parameters are read from "
                "the experiment's typed Params (P.name), limit: no dict lookup"
            )
    return out


def test_experiments_read_parameters_from_the_typed_object():
    problems = [p for path in sources(EXPERIMENTS) for p in dict_lookups(path)]
    fail_with(problems, "parameter lookups by name")


# -- lab notebook -----------------------------------------------------------------------------
def test_no_issue_numbers_in_code_chapters_or_profiles():
    problems = []
    for folder in (PACKAGE, CHAPTERS, PROFILES):
        for path in sorted(folder.rglob("*")):
            if path.suffix not in ISSUE_SCANNED or "__pycache__" in path.parts:
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for m in ISSUE.finditer(line):
                    problems.append(
                        f"{rel(path)}:{i}: {m.group(0)!r}: say what the thing is, "
                        "limit: no issue number"
                    )
    fail_with(problems, "issue numbers")


_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")


def profile_comment_problems(path: Path) -> list[str]:
    """More than one comment line for a setting (the full-line comments just above it and its
    own comment), or a commented line longer than the limit."""
    out = []
    above: list[int] = []  # the full-line comments since the last setting
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        inline = not stripped.startswith("#") and "#" in _QUOTED.sub("", line)
        if (stripped.startswith("#") or inline) and len(line) > MAX_PROFILE_COMMENT_LINE:
            out.append(
                f"{rel(path)}:{i}: a commented line of {len(line)} characters, "
                f"limit {MAX_PROFILE_COMMENT_LINE} (the trial behind it: profiles/README.md)"
            )
        if stripped.startswith("#"):
            above.append(i)
            continue
        n = len(above) + inline
        if n > MAX_PROFILE_COMMENTS:
            setting = stripped.split(":")[0]
            out.append(
                f"{rel(path)}:{i}: setting {setting!r} has {n} comment lines "
                f"(from line {above[0] if above else i}), limit {MAX_PROFILE_COMMENTS} "
                "(the trials behind it: profiles/README.md)"
            )
        above = []
    return out


def test_profiles_give_at_most_one_short_comment_line_per_setting():
    paths = sorted(PROFILES.glob("*.yml"))
    problems = [p for path in paths for p in profile_comment_problems(path)]
    fail_with(problems, "profile comments over the limit")


# -- chapters ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    path: Path
    line: int  # of the opening fence
    end: int  # of the closing fence
    tags: tuple[str, ...]
    source: list[str]  # the code, without the cell's options


_FENCE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}")


def code_cells(path: Path) -> list[Cell]:
    """The ``{code-cell}`` blocks of a MyST notebook, their ``:key: value`` or ``---`` YAML
    options removed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    cells, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start, body = m.group(1), i + 1, []
        i += 1
        while i < len(lines) and not (
            lines[i].startswith(fence[0] * len(fence)) and not lines[i].strip(fence[0]).strip()
        ):
            body.append(lines[i])
            i += 1
        end = i + 1
        i += 1
        options = []
        if body and body[0].strip() == "---":
            end = body.index("---", 1) if "---" in body[1:] else 0
            options, body = body[: end + 1], body[end + 1 :]
        while body and body[0].startswith(":"):
            options.append(body.pop(0))
        tags = re.findall(r"[\w-]+", " ".join(o for o in options if "tags" in o))
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        cells.append(Cell(path, start, end, tuple(t for t in tags if t != "tags"), body))
    return cells


def chapter_files() -> list[Path]:
    return sorted(CHAPTERS.glob("*.md"))


def test_chapter_code_cells_are_at_most_15_lines():
    problems = []
    for path in chapter_files():
        for cell in code_cells(path):
            if "parameters" in cell.tags:
                continue
            if len(cell.source) > MAX_CELL_LINES:
                problems.append(
                    f"{rel(path)}:{cell.line}: a code cell of {len(cell.source)} lines, "
                    f"limit {MAX_CELL_LINES} (the work belongs in the experiment's package)"
                )
    fail_with(problems, "chapter code cells over the limit")


_ROLE = re.compile(r"\{glue(?::\w*)?\}`([^`:]+)(?::[^`]*)?`")
_DIRECTIVE = re.compile(r"^(?:`{3,}|~{3,}|:{3,})\{glue(?::\w*)?\}\s+(\S+)")


def glue_uses(path: Path) -> list[tuple[str, int]]:
    """``(name, line)`` of every ``{glue}``/``{glue:...}`` role and directive of the chapter's
    Markdown (outside its code cells)."""
    in_cell = {n for cell in code_cells(path) for n in range(cell.line, cell.end + 1)}
    uses = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if i in in_cell:
            continue
        m = _DIRECTIVE.match(line)
        if m:
            uses.append((m.group(1), i))
        uses += [(name.strip(), i) for name in _ROLE.findall(line)]
    return uses


def test_glue_roles_are_found_in_a_chapter():
    """The reader of the Markdown above sees the roles and directives of the real chapters."""
    names = {name for path in chapter_files() for name, _ in glue_uses(path)}
    assert len(names) > 50 and "bf16-error" in names and "res-items" in names, sorted(names)[:20]


# -- the smoke book's records -----------------------------------------------------------------
VERDICT_WORDS = re.compile(
    r"\*\*(holds|does not hold|inside the noise|not measurable at this scale|"
    r"recorded \(bookkeeping\))\*\*( \(.*\))?\.?\s*$",
    re.S,
)  # rnnlib.verdicts' words as rnnlib.book.claims.markdown writes them, with the rule's reason


def records(results: Path) -> dict[str, list[dict]]:
    """Every chapter's recorded entries, by chapter (``<results>/<chapter>.json``)."""
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(results.glob("*.json"))
    }


def is_markdown_table(text: str) -> bool:
    rows = [line for line in text.strip().splitlines() if line.strip()]
    return len(rows) >= 2 and all(r.lstrip().startswith("|") for r in rows)


def long_texts(results: Path) -> list[str]:
    """Glued texts over the limit: a verdict (its words and the rule's reason) and a Markdown
    table do not count; the words before a verdict do."""
    uses = {
        (path.stem, name): f"{rel(path)}:{line}"
        for path in chapter_files()
        for name, line in glue_uses(path)
    }
    out = []
    for chapter, entries in records(results).items():
        for e in entries:
            if e["kind"] != "text" or not isinstance(e["value"], str):
                continue
            text = e["value"]
            if is_markdown_table(text):
                continue
            verdict = VERDICT_WORDS.search(text)
            counted = text[: verdict.start()] if verdict else text
            if len(counted) > MAX_GLUED_TEXT:
                where = uses.get((chapter, e["name"]), f"chapters/{chapter}.md (its code)")
                out.append(
                    f"{where}: glued text {e['name']!r} is {len(counted)} characters, limit "
                    f"{MAX_GLUED_TEXT} (write the sentence in the Markdown, glue its number "
                    f"or word): {counted[:60]!r}..."
                )
    return out


def unwritten_glue(results: Path) -> list[str]:
    """Glue names a chapter's Markdown uses that the chapter's run did not record."""
    written = {chapter: {e["name"] for e in es} for chapter, es in records(results).items()}
    out = []
    for path in chapter_files():
        for name, line in glue_uses(path):
            if name not in written.get(path.stem, set()):
                out.append(
                    f"{rel(path)}:{line}: uses glue {name!r}, which the chapter does not "
                    f"write (results/{path.stem}.json); limit: every glue name it uses is its own"
                )
    return out


@pytest.fixture(scope="module")
def smoke_results(smoke_book) -> Path:
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / "results"


@pytest.mark.slow
def test_no_glued_text_is_over_80_characters(smoke_results):
    fail_with(long_texts(smoke_results), "glued texts over the limit")


@pytest.mark.slow
def test_every_glue_name_a_chapter_uses_is_written_by_that_chapter(smoke_results):
    fail_with(unwritten_glue(smoke_results), "glue names no chapter of theirs writes")


# -- the checks themselves --------------------------------------------------------------------
def test_the_checks_catch_what_they_are_for(tmp_path):
    """Each reader above on a small example of what it must find."""
    imports = [
        Import("a", "b", ROOT / "a.py", 3, False),
        Import("b", "c", ROOT / "b.py", 4, False),
        Import("c", "a", ROOT / "c.py", 5, False),
        Import("c", "d", ROOT / "c.py", 6, False),
    ]
    assert import_cycles(imports) == [["a", "b", "c", "a"]]
    assert floor_of("rnnlib.book.chapter") < floor_of("rnnlib.models")
    assert floor_of("rnnlib.experiments.rnnsearch.figure_2") < floor_of("rnnlib.book.claims")

    profile = tmp_path / "x.yml"
    profile.write_text(
        "chapters:\n  a:\n    # why\n    n: 1  # and again\n    # one reason\n    m: 'a # b'\n"
    )
    found = profile_comment_problems(profile)
    assert len(found) == 1 and ":4: setting 'n' has 2 comment lines" in found[0], found

    chapter = tmp_path / "c.md"
    chapter.write_text(
        "# C\n\n```{code-cell} python\n:tags: [parameters]\nn: int = 1\n```\n\n"
        "```{code-cell} python\n:tags: [remove-input]\nch.number('c-n', n)\n\n```\n\n"
        "It is {glue:}`c-n` and {glue:text}`c-m:.2f`.\n\n```{glue:figure} c-fig\n```\n"
    )
    cells = code_cells(chapter)
    assert [(c.line, c.tags, c.source) for c in cells] == [
        (3, ("parameters",), ["n: int = 1"]),
        (8, ("remove-input",), ["ch.number('c-n', n)"]),
    ]
    assert glue_uses(chapter) == [("c-n", 14), ("c-m", 14), ("c-fig", 16)]

    module = tmp_path / "m.py"
    module.write_text("def f(p, params, P):\n    return p['a'], p[0], params[k], P.lr\n")
    assert [x.split(": ")[1] for x in dict_lookups_of(module)] == ["p['a']", "params[k]"]

    verdict = "**inside the noise** (" + "x" * 200 + ")."
    assert VERDICT_WORDS.search("On its control the same rule says " + verdict).start() == 34
    assert is_markdown_table("| a | b |\n|---|---|\n| 1 | 2 |")
