"""rnnlib.fast.allocator: a large freed tensor's memory stays in the process for the next step
(checked in a fresh process: the resident set does not shrink when a 64 MiB tensor is freed),
in the process that chose the setting and in the processes it starts (chapter kernels)."""

import os
import subprocess
import sys

import pytest

from rnnlib.fast.allocator import _libc

glibc = pytest.mark.skipif(_libc() is None, reason="needs glibc")

PROBE = """
import os, torch
from rnnlib.fast.allocator import tune_allocator
applied = tune_allocator()
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
x = torch.empty(2048, 8192).fill_(1.0)  # 64 MiB, touched
held = rss()
del x
print(applied, held - rss())
"""


def _probe(mode: str | None):
    env = {k: v for k, v in os.environ.items() if k != "RNNLIB_MALLOC"}
    if mode is not None:
        env["RNNLIB_MALLOC"] = mode
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)


@glibc
@pytest.mark.slow  # processes that allocate: about 6 s
def test_tuned_allocator_keeps_freed_large_blocks():
    tuned = _probe(None)
    assert tuned.returncode == 0, tuned.stderr
    applied, released = tuned.stdout.split()
    system = _probe("system")
    assert system.returncode == 0, system.stderr
    sys_applied, sys_released = system.stdout.split()
    assert applied == "True" and sys_applied == "False"
    # glibc's defaults give the block back to the system when it is freed (munmap) ...
    assert int(sys_released) > 48 * 2**20
    # ... the tuned allocator keeps it for the next allocation
    assert int(released) < 8 * 2**20


@pytest.mark.slow  # starts processes: about 4 s
def test_bad_setting_names_the_variable():
    out = _probe("jemalloc")
    assert out.returncode != 0
    assert "RNNLIB_MALLOC='jemalloc'" in out.stderr


KERNEL = """
import os, subprocess, sys
from rnnlib.cli import choose_allocator
choose_allocator(sys.argv[1])
# a process started now, as papermill starts a chapter's kernel: it never calls tune_allocator
child = subprocess.run([sys.executable, "-c", sys.argv[2]], capture_output=True, text=True)
print(os.environ.get("GLIBC_TUNABLES", "-"), child.stdout.split()[-1])
"""
CHILD = """
import os, torch
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
x = torch.empty(2048, 8192).fill_(1.0)
held = rss()
del x
print(held - rss())
"""


def _kernel(command: str, mode: str | None):
    env = {k: v for k, v in os.environ.items() if k not in ("RNNLIB_MALLOC", "GLIBC_TUNABLES")}
    if mode is not None:
        env["RNNLIB_MALLOC"] = mode
    out = subprocess.run(
        [sys.executable, "-c", KERNEL, command, CHILD], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    tunables, released = out.stdout.split()
    return tunables, int(released)


@glibc
@pytest.mark.slow  # starts build and run processes: about 15 s
def test_build_and_run_pass_the_setting_to_the_processes_they_start():
    for command in ("build", "run"):
        tunables, released = _kernel(command, None)
        assert "glibc.malloc.mmap_max=0" in tunables and released < 8 * 2**20, command
    # train and bench set it for themselves only; RNNLIB_MALLOC=system leaves everything alone
    for command, mode in (("train", None), ("bench", None), ("build", "system")):
        tunables, released = _kernel(command, mode)
        assert tunables == "-" and released > 48 * 2**20, (command, mode)


CACHE_PROBE = """
import os, subprocess, sys
from rnnlib.cli import choose_allocator
choose_allocator(sys.argv[1])
SHOW = "import os; print(os.environ.get('ONEDNN_PRIMITIVE_CACHE_CAPACITY', '-'))"
child = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True)
print(os.environ.get("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "-"), child.stdout.strip())
"""


def _capacity(command: str, env_extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "ONEDNN_PRIMITIVE_CACHE_CAPACITY"}
    env.update(env_extra)
    out = subprocess.run(
        [sys.executable, "-c", CACHE_PROBE, command], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_model_commands_bound_the_onednn_primitive_cache_for_themselves_and_their_children():
    from rnnlib.fast.allocator import PRIMITIVE_CACHE

    bounded = [str(PRIMITIVE_CACHE)] * 2
    for command in ("build", "run", "train", "bench"):
        assert _capacity(command, {}) == bounded, command
    # the malloc settings are another matter: RNNLIB_MALLOC=system still bounds the cache
    assert _capacity("build", {"RNNLIB_MALLOC": "system"}) == bounded
    # a capacity the user set is kept; a command that runs no model sets nothing
    assert _capacity("run", {"ONEDNN_PRIMITIVE_CACHE_CAPACITY": "16"}) == ["16", "16"]
    assert _capacity("cache", {}) == ["-", "-"]
