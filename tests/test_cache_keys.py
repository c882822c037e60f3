"""The cache key's canonical form (rnnlib.cache.canonical_json, ArtifactCache.key): what makes two
configs the same key and what keeps them apart. These pin today's keys; every existing artifact
of a reference build is found by them, so a change here is a change of every key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from rnnlib.cache import ArtifactCache, canonical_json, config_hash

key = ArtifactCache.key


def test_dict_order_does_not_change_the_key_at_any_depth():
    one = {"b": 1, "a": {"y": [1, {"q": 2, "p": 3}], "x": 2.5}}
    other = {"a": {"x": 2.5, "y": [1, {"p": 3, "q": 2}]}, "b": 1}
    assert (
        canonical_json(one)
        == canonical_json(other)
        == ('{"a":{"x":2.5,"y":[1,{"p":3,"q":2}]},"b":1}')
    )
    assert key("demo/x", one, "d") == key("demo/x", other, "d")
    # but the order of a list is part of the config
    assert key("demo/x", {"a": [1, 2]}, None) != key("demo/x", {"a": [2, 1]}, None)


def test_numpy_and_torch_scalars_key_as_the_python_numbers_they_hold():
    plain = {"n": 3, "lr": 0.5, "flag": True, "seed": -7}
    wrapped = {
        "n": np.int64(3),
        "lr": np.float64(0.5),
        "flag": np.bool_(True),
        "seed": torch.tensor(-7),
    }
    assert canonical_json(wrapped) == canonical_json(plain)
    assert key("demo/x", wrapped, None) == key("demo/x", plain, None)
    assert canonical_json({"x": torch.tensor(0.25)}) == '{"x":0.25}'
    # a float32 keys as the float64 it widens to, not as the decimal it was written as
    assert canonical_json(np.float32(0.1)) == "0.10000000149011612"
    assert key("demo/x", {"lr": np.float32(0.1)}, None) != key("demo/x", {"lr": 0.1}, None)


def test_int_and_float_tuple_and_list_path_and_str():
    assert key("demo/x", {"n": 1}, None) != key("demo/x", {"n": 1.0}, None)
    assert key("demo/x", {"n": (1, 2)}, None) == key("demo/x", {"n": [1, 2]}, None)
    assert key("demo/x", {"p": Path("a/b.txt")}, None) == key("demo/x", {"p": "a/b.txt"}, None)
    assert canonical_json({"p": Path("a") / "b"}) == '{"p":"a/b"}'


@dataclasses.dataclass
class _Plain:
    hidden: int
    where: Path


@dataclasses.dataclass
class _Keyed:
    hidden: int
    progress: bool = True  # not part of what it computes

    def to_dict(self) -> dict:
        return {"hidden": self.hidden}


def test_a_dataclass_keys_as_its_fields_or_as_its_own_to_dict():
    assert canonical_json({"m": _Plain(4, Path("x"))}) == '{"m":{"hidden":4,"where":"x"}}'
    assert key("demo/x", {"m": _Plain(4, Path("x"))}, None) == key(
        "demo/x", {"m": {"where": "x", "hidden": 4}}, None
    )
    assert key("demo/x", {"m": _Keyed(4, True)}, None) == key(
        "demo/x", {"m": _Keyed(4, False)}, None
    )
    assert canonical_json(_Keyed(4)) == '{"hidden":4}'


def test_the_kind_the_config_and_the_data_each_change_the_key():
    base = key("demo/x", {"n": 1}, "abc")
    assert len({base, key("demo/y", {"n": 1}, "abc"), key("demo/x", {"n": 2}, "abc")}) == 3
    assert len({base, key("demo/x", {"n": 1}, "abd"), key("demo/x", {"n": 1}, None)}) == 3


def test_what_cannot_be_keyed_is_an_error_not_a_guess():
    for bad in ({1, 2}, object(), {"a": 1, 2: "b"}):
        with pytest.raises(TypeError):
            canonical_json(bad)


def test_keys_are_pinned():
    """Golden keys: unicode is hashed as UTF-8 (no escapes), no whitespace, sorted keys, NaN as
    ``NaN``; changing any of these changes every key of every cache."""
    assert canonical_json({"é": "ü", "x": float("nan")}) == '{"x":NaN,"é":"ü"}'
    assert key("demo/x", {"b": 1, "a": [1, 2.5, "é"]}, "abc") == "faa3f467648ef0ab"
    assert config_hash({"a": 1}) == "015abd7f5cc5"
