"""The phrase decoder's fast path: :mod:`rnnlib.smt.stack_search` compiled with Cython.

:func:`search_module` returns the module the decoder searches with. By default that is
``stack_search.py`` compiled, unchanged, with the C types of ``stack_search.pxd`` (the search
about 1.8 times as fast: BENCHMARKS.md;
``rnnlib smt-bench --against-python`` measures it); ``RNNLIB_SMT_SEARCH=python`` (see
:data:`ENV`) selects the plain module. Both give identical translations, features and scores
(``tests/test_smt_compiled.py``), so no artifact's key depends on which one ran.

The compiled module is built on first use, in a subprocess, by Cython and the C compiler that
the README's set-up already needs (for kenlm and eflomal), into ``RNNLIB_BUILD_DIR`` or
``~/.cache/rnnlib/compiled``. Its name carries a hash of the two source files, Cython's and
Python's versions, so an edited ``stack_search.py`` is compiled again, never run stale. Where it
cannot be built (no compiler, a read-only folder), the decoder warns once, naming the reason,
and searches with the plain module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path
from types import ModuleType

from . import stack_search

#: environment variable choosing the search: ``compiled`` (the default) or ``python``
ENV = "RNNLIB_SMT_SEARCH"
#: environment variable naming the folder of compiled modules
BUILD_DIR_ENV = "RNNLIB_BUILD_DIR"
#: Cython's settings: the module's own annotations are documentation, not C types (the types are
#: the .pxd's)
DIRECTIVES = {"language_level": 3, "annotation_typing": False}
#: no fused multiply-add and no fast-math (even if the environment's CFLAGS ask for them, these
#: come last): every sum and product rounds as Python's floats do
CFLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math"]
#: environment variables that change what the compiler makes (part of the module's name)
COMPILER_ENV = ("CC", "CFLAGS", "CPPFLAGS", "LDSHARED", "LDFLAGS")
#: seconds to wait for another process's build, and for a build
LOCK_TIMEOUT, BUILD_TIMEOUT = 900, 600

_MODULE: ModuleType | None = None


def search_module() -> ModuleType:
    """The search module of this process (chosen and, if needed, compiled once)."""
    global _MODULE
    if _MODULE is None:
        _MODULE = _choose()
    return _MODULE


def search_kind(module: ModuleType) -> str:
    """``"python"`` for the plain :mod:`rnnlib.smt.stack_search`, ``"compiled"`` for a build of
    it (an extension module named ``_stack_search_<hash>``)."""
    if module is stack_search:
        return "python"
    if module.__name__.startswith("_stack_search_") and module.__file__.endswith(
        sysconfig.get_config_var("EXT_SUFFIX")
    ):
        return "compiled"
    raise ValueError(f"{module.__name__} is neither rnnlib.smt.stack_search nor a build of it")


def _choose() -> ModuleType:
    choice = os.environ.get(ENV, "compiled")
    if choice == "python":
        return stack_search
    if choice != "compiled":
        raise ValueError(f"{ENV} must be 'compiled' or 'python', not {choice!r}")
    try:
        return load_compiled()
    except Exception as exc:  # (any failure to build leaves the plain search, which is correct)
        warnings.warn(
            f"rnnlib.smt: the compiled phrase search could not be built ({exc}); decoding with "
            f"the plain Python search instead (the same output, more slowly). Set "
            f"{ENV}=python to choose it without this warning.",
            RuntimeWarning,
            stacklevel=3,
        )
        return stack_search


def _sources() -> tuple[Path, Path]:
    py = Path(stack_search.__file__).with_suffix(".py")
    return py, py.with_suffix(".pxd")


def module_name() -> str:
    """``_stack_search_<hash>``: the hash of the sources, Cython's and Python's versions, the
    settings and the compiler's environment variables."""
    import Cython

    digest = hashlib.sha256()
    for part in _sources():
        digest.update(part.read_bytes())
    compiler = [os.environ.get(k, "") for k in COMPILER_ENV]
    tags = (Cython.__version__, sys.version, sysconfig.get_platform(), repr((DIRECTIVES, CFLAGS)))
    tags += tuple(compiler)
    digest.update("\0".join(tags).encode())
    return f"_stack_search_{digest.hexdigest()[:16]}"


def build_dir() -> Path:
    if os.environ.get(BUILD_DIR_ENV):
        return Path(os.environ[BUILD_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rnnlib" / "compiled"


def load_compiled() -> ModuleType:
    """Import the compiled search, building it first if this folder does not have it yet (under a
    file lock: two processes never build it at once)."""
    from filelock import FileLock

    name = module_name()
    folder = build_dir()
    target = folder / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / f"{name}.lock"), timeout=LOCK_TIMEOUT):
            if not target.is_file():
                _build(name, target)
    spec = importlib.util.spec_from_file_location(name, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module  # (so that its classes pickle by name, as the plain module's do)
    return module


def _build(name: str, target: Path) -> None:
    """Compile the sources as module ``name`` into ``target`` (in a subprocess, whose compiler
    output is shown only if it fails; it imports this very rnnlib, whatever the working folder)."""
    package_root = str(Path(stack_search.__file__).resolve().parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
    }
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        for src in _sources():
            shutil.copyfile(src, Path(tmp) / f"{name}{src.suffix}")
        proc = subprocess.run(
            [sys.executable, "-m", "rnnlib.smt.compiled", tmp, name],
            capture_output=True,
            text=True,
            cwd=tmp,
            env=env,
            timeout=BUILD_TIMEOUT,
        )
        built = list(Path(tmp).glob(f"{name}*{sysconfig.get_config_var('EXT_SUFFIX')}"))
        if proc.returncode != 0 or not built:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"building {name} in {tmp} failed:\n{tail}")
        os.replace(built[0], target)  # (atomic: a reader sees the whole module or none)


def _compile_here(folder: str, name: str) -> None:
    """Cythonize and compile ``folder/name.py`` (with its .pxd) into ``folder``."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    ext = Extension(name, [str(Path(folder) / f"{name}.py")], extra_compile_args=CFLAGS)
    modules = cythonize([ext], compiler_directives=DIRECTIVES, quiet=True)
    cmd = Distribution({"name": name, "ext_modules": modules}).get_command_obj("build_ext")
    cmd.build_lib = folder
    cmd.build_temp = str(Path(folder) / "build")
    cmd.ensure_finalized()
    cmd.run()


if __name__ == "__main__":
    _compile_here(*sys.argv[1:3])
