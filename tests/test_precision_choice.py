"""bf16=None picks bf16 autocast only where the hardware runs it (else emulated bf16 is slower
than fp32)."""

import torch

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


def test_cpu_bf16_instructions_reads_only_known_flags():
    assert set(precision.cpu_bf16_instructions()) <= {"avx512_bf16", "amx_bf16"}
