"""The phrase-based system's fast paths: plain modules compiled with Cython.

:func:`fast_path` returns a module compiled from the source of a plain one, with the C types of
the ``.pxd`` file beside it. Two modules have one:

* :mod:`rnnlib.smt.stack_search`, the decoder's search (:func:`search_module`; about 1.8 times
  as fast: BENCHMARKS.md; ``rnnlib smt-bench --against-python`` measures it);
* :mod:`rnnlib.smt.envelope`, MERT's line search (:func:`envelope_module`; the plain module is
  then not used: :mod:`rnnlib.smt.tune` computes the same envelopes with numpy).

``RNNLIB_SMT_SEARCH=python`` (see :data:`ENV`) selects the plain modules. Both give identical
output (the same translations, features and scores: ``tests/test_smt_compiled.py``; the same
breakpoints: ``tests/test_smt_tune.py``), so no artifact's key depends on which one ran.

A compiled module is built on first use, in a subprocess, by Cython and the C compiler that
the README's set-up already needs (for kenlm and eflomal), into ``RNNLIB_BUILD_DIR`` or
``~/.cache/rnnlib/compiled``. Its name carries a hash of its two source files, Cython's and
Python's versions, so an edited source is compiled again, never run stale. Where it cannot be
built (no compiler, a read-only folder), the plain module is used, with a warning (once) that
names the reason.
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

from . import envelope, stack_search

#: environment variable choosing the fast paths: ``compiled`` (the default) or ``python``
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

_CHOSEN: dict[str, ModuleType] = {}


def fast_path(module: ModuleType) -> ModuleType:
    """``module`` compiled, or ``module`` itself (see the module notes); chosen, and if need be
    built, once per process."""
    if module.__name__ not in _CHOSEN:
        _CHOSEN[module.__name__] = _choose(module)
    return _CHOSEN[module.__name__]


def search_module() -> ModuleType:
    """The search module of this process: :mod:`rnnlib.smt.stack_search`, compiled if it can be."""
    return fast_path(stack_search)


def envelope_module() -> ModuleType | None:
    """:mod:`rnnlib.smt.envelope` compiled, or ``None`` where it is not (then MERT sweeps its
    envelopes with numpy)."""
    module = fast_path(envelope)
    return None if module is envelope else module


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


def _choose(module: ModuleType = stack_search) -> ModuleType:
    choice = os.environ.get(ENV, "compiled")
    if choice == "python":
        return module
    if choice != "compiled":
        raise ValueError(f"{ENV} must be 'compiled' or 'python', not {choice!r}")
    try:
        return load_compiled(module)
    except Exception as exc:  # (any failure to build leaves the plain module, which is correct)
        warnings.warn(
            f"rnnlib.smt: the compiled {module.__name__} could not be built ({exc}); running "
            f"the plain Python one instead (the same output, more slowly). Set {ENV}=python to "
            "choose it without this warning.",
            RuntimeWarning,
            stacklevel=4,
        )
        return module


def _short(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def _sources(module: ModuleType = stack_search) -> tuple[Path, Path]:
    py = Path(module.__file__).with_suffix(".py")
    return py, py.with_suffix(".pxd")


def module_name(module: ModuleType = stack_search) -> str:
    """``_<module>_<hash>`` (``_stack_search_<hash>``): the hash of the sources, Cython's and
    Python's versions, the settings and the compiler's environment variables."""
    import Cython

    digest = hashlib.sha256()
    for part in _sources(module):
        digest.update(part.read_bytes())
    compiler = [os.environ.get(k, "") for k in COMPILER_ENV]
    tags = (Cython.__version__, sys.version, sysconfig.get_platform(), repr((DIRECTIVES, CFLAGS)))
    tags += tuple(compiler)
    digest.update("\0".join(tags).encode())
    return f"_{_short(module)}_{digest.hexdigest()[:16]}"


def build_dir() -> Path:
    if os.environ.get(BUILD_DIR_ENV):
        return Path(os.environ[BUILD_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rnnlib" / "compiled"


def load_compiled(module: ModuleType = stack_search) -> ModuleType:
    """Import ``module`` compiled, building it first if this folder does not have it yet (under a
    file lock: two processes never build it at once)."""
    from filelock import FileLock

    name = module_name(module)
    folder = build_dir()
    target = folder / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / f"{name}.lock"), timeout=LOCK_TIMEOUT):
            if not target.is_file():
                _build(name, target, module)
    spec = importlib.util.spec_from_file_location(name, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module  # (so that its classes pickle by name, as the plain module's do)
    return module


def _build(name: str, target: Path, module: ModuleType = stack_search) -> None:
    """Compile ``module``'s sources as module ``name`` into ``target`` (in a subprocess, whose
    compiler output is shown only if it fails; it imports this very rnnlib, whatever the working
    folder)."""
    package_root = str(Path(stack_search.__file__).resolve().parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
    }
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        for src in _sources(module):
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
