"""bf16=None picks bf16 autocast only where the hardware runs it (else emulated bf16 is slower
than fp32)."""

import io
import os

import pytest
import torch

from rnnlib import machine
from rnnlib.fast import precision


def test_bf16_none_follows_the_cpu_instructions(monkeypatch):
    cpu = torch.device("cpu")
    monkeypatch.setattr(precision, "cpu_bf16_instructions", lambda: ("avx512_bf16",))
    assert precision.resolve_bf16(None, cpu) is True
    monkeypatch.setattr(precision, "cpu_bf16_instructions", lambda: ())
    assert precision.resolve_bf16(None, cpu) is False
    # an explicit choice is kept whatever the hardware
    assert precision.resolve_bf16(True, cpu) is True
    assert precision.resolve_bf16(False, cpu) is False


CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Test CPU @ 2.0GHz
flags\t\t: fpu sse2 avx2 avx512f {flags}
bugs\t\t: spectre_v1

processor\t: 1
flags\t\t: fpu sse2 avx512_bf16 amx_bf16
"""


@pytest.mark.parametrize(
    "cpuinfo,expected",
    [
        (CPUINFO.format(flags="avx512_bf16 amx_tile amx_bf16"), ("avx512_bf16", "amx_bf16")),
        (CPUINFO.format(flags="amx_bf16"), ("amx_bf16",)),
        # only the first processor's flags are read; a flag is a whole word, not a part of one
        (CPUINFO.format(flags="avx512_bf16x amx_bf16_int8"), ()),
        ("processor\t: 0\nFeatures\t: fp asimd bf16\n", ()),  # no "flags" line (arm64)
    ],
)
def test_cpu_bf16_instructions_reads_the_flags_of_proc_cpuinfo(monkeypatch, cpuinfo, expected):
    def fake_open(path, *args, **kwargs):
        assert path == "/proc/cpuinfo"
        return io.StringIO(cpuinfo)

    monkeypatch.setattr(machine, "open", fake_open, raising=False)
    _clear()
    try:
        assert precision.cpu_bf16_instructions() == expected
    finally:
        _clear()


def _clear():
    precision.cpu_bf16_instructions.cache_clear()
    machine._cpuinfo.cache_clear()


def test_cpu_bf16_instructions_without_proc_cpuinfo_is_empty(monkeypatch):
    def no_file(path, *args, **kwargs):
        raise FileNotFoundError(path)

    monkeypatch.setattr(machine, "open", no_file, raising=False)
    _clear()
    try:
        assert precision.cpu_bf16_instructions() == ()
        assert machine.describe()["instructions"] == [] and machine.cpu_name()
    finally:
        _clear()


def test_every_artifact_records_the_machine_that_computed_it(tmp_path, monkeypatch):
    from rnnlib.cache import ArtifactCache

    fake = lambda *a, **k: io.StringIO(CPUINFO.format(flags=""))  # noqa: E731
    monkeypatch.setattr(machine, "open", fake, raising=False)
    _clear()
    try:
        art = ArtifactCache(tmp_path).build("demo/x", {"a": 1}, lambda out, work: None)
        m = art.meta["machine"]
        assert m["processor"] == "Test CPU @ 2.0GHz"
        assert m["instructions"] == ["avx2", "avx512f"]  # the first processor's flags only
        assert m["torch_threads"] == torch.get_num_threads()
        assert m["cpus"] == len(os.sched_getaffinity(0))  # the CPUs this process may run on
        assert machine.label(m).startswith("Test CPU @ 2.0GHz (avx2, avx512f; ")
        assert machine.label(None) == "not recorded"
    finally:
        _clear()
