"""Every pin agrees: requirements.txt (the exact versions), pyproject.toml (ranges that must admit
them) and environment.yml (conda); and the private sacreBLEU names pyproject.toml lists still
behave as rnnlib uses them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYTHON = "3.11"  # what .ci/setup-env asks for


def pins(requirements: Path) -> dict[str, str]:
    """``{canonical name: version}`` of a requirements file of ``name==version`` lines."""
    out = {}
    for n, line in enumerate(requirements.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        assert m, f"{requirements.name}:{n}: not an exact pin: {line!r}"
        name = canonicalize_name(m[1])
        assert name not in out, f"{requirements.name}:{n}: {m[1]} pinned twice"
        out[name] = m[2]
    return out


def disagreements(root: Path) -> list[str]:
    """Every way the pins of ``root``'s three files disagree (empty when they agree)."""
    exact = pins(root / "requirements.txt")
    found = []

    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    if not SpecifierSet(project["requires-python"]).contains(PYTHON + ".0"):
        found.append(f"pyproject.toml: requires-python {project['requires-python']} lacks {PYTHON}")
    wanted = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        wanted += extra
    for text in wanted:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        if name not in exact:
            found.append(f"pyproject.toml: {req.name} is not pinned in requirements.txt")
        elif not req.specifier.contains(Version(exact[name]), prereleases=True):
            found.append(
                f"pyproject.toml: {text!r} does not admit requirements.txt's {exact[name]}"
            )

    env = yaml.safe_load((root / "environment.yml").read_text(encoding="utf-8"))
    pip_lines, conda = [], []
    for dep in env.get("dependencies", []):
        if isinstance(dep, dict):
            pip_lines += dep.get("pip", [])
        else:
            conda.append(str(dep))
    for spec in conda:
        m = re.fullmatch(r"([A-Za-z0-9._-]+)\s*(==?|>=|<=)?\s*([^\s=]*)", spec)
        if not m:
            found.append(f"environment.yml: cannot read {spec!r}")
            continue
        name, op, version = canonicalize_name(m[1]), m[2], m[3]
        if name == "python":
            if version != PYTHON:
                found.append(f"environment.yml: python={version}, .ci/setup-env uses {PYTHON}")
        elif version and name in exact:
            # conda's name=1.2 means 1.2.*, name==1.2 exactly 1.2
            same = exact[name] == version or (
                op == "=" and exact[name].startswith(version.rstrip("*").rstrip(".") + ".")
            )
            if not same or op not in ("=", "=="):
                found.append(f"environment.yml: {spec!r}, requirements.txt pins {exact[name]}")
    if not any(re.fullmatch(r"python(=.*)?", s) for s in conda):
        found.append("environment.yml: no python=3.11")
    includes = False
    listed = set()
    for line in map(str.strip, pip_lines):
        if line.startswith(("-r ", "--requirement ")):
            path = (root / line.split(None, 1)[1]).resolve()
            includes |= path == (root / "requirements.txt").resolve()
        elif line.startswith("-") or line == ".":
            continue
        else:
            req = Requirement(line)
            name = canonicalize_name(req.name)
            listed.add(name)
            if name not in exact:
                found.append(f"environment.yml: {req.name} is not pinned in requirements.txt")
            elif str(req.specifier) != f"=={exact[name]}":
                found.append(f"environment.yml: {line!r}, requirements.txt pins {exact[name]}")
    if not includes and set(exact) - listed:
        found.append(
            "environment.yml: neither -r requirements.txt nor "
            + ", ".join(sorted(set(exact) - listed))
        )
    return found


def test_requirements_pyproject_and_environment_agree():
    assert disagreements(ROOT) == []


def test_every_installed_pin_admits_debians_python_3_11_2():
    """The README's Debian/Ubuntu line gives Python 3.11.2 (Debian 12): no pin may need later."""
    from importlib import metadata

    refused = []
    for name, version in pins(ROOT / "requirements.txt").items():
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        needs = dist.metadata.get("Requires-Python")
        if dist.version.split("+")[0] == version and needs and "3.11.2" not in SpecifierSet(needs):
            refused.append(f"{name}=={version} needs Python {needs}")
    assert refused == []


def test_sacrebleu_is_pinned_below_its_next_major_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (spec,) = [Requirement(d) for d in project["dependencies"] if d.startswith("sacrebleu")]
    assert not spec.specifier.contains("3.0.0") and spec.specifier.contains("2.9.0")


def _write(root: Path, requirements: str, pyproject: str, environment: str) -> Path:
    (root / "requirements.txt").write_text(requirements)
    (root / "pyproject.toml").write_text(
        f'[project]\nrequires-python = ">=3.11"\ndependencies = {pyproject}\n'
    )
    (root / "environment.yml").write_text(environment)
    return root


def test_a_disagreement_in_any_file_is_named(tmp_path):
    good = _write(
        tmp_path,
        "# pins\nsacrebleu==2.6.0\ntorch==2.13.0\n",
        '["sacrebleu>=2.4,<3", "torch==2.13.0"]',
        "dependencies:\n  - python=3.11\n  - pip:\n      - -r requirements.txt\n      - -e .\n",
    )
    assert disagreements(good) == []
    _write(
        tmp_path,
        "sacrebleu==3.0.0\ntorch==2.13.0\n",
        '["sacrebleu>=2.4,<3", "torch==2.13.0", "numpy>=2"]',
        "dependencies:\n  - python=3.12\n  - torch=2.12\n  - pip:\n      - sacrebleu==2.6.0\n",
    )
    found = "\n".join(disagreements(tmp_path))
    assert "'sacrebleu>=2.4,<3' does not admit requirements.txt's 3.0.0" in found
    assert "numpy is not pinned in requirements.txt" in found
    assert "python=3.12" in found
    assert "'torch=2.12', requirements.txt pins 2.13.0" in found
    assert "'sacrebleu==2.6.0', requirements.txt pins 3.0.0" in found
    assert "neither -r requirements.txt nor torch" in found


def test_sacrebleus_private_names_still_do_what_rnnlib_relies_on():
    """pyproject.toml lists them: the statistics and the score from summed statistics give the
    corpus score, and the paired test's resamples are the ones rnnlib.stats redraws."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    from rnnlib import bleu, stats

    refs = [f"the cat number {i} sat on the mat {i % 3}" for i in range(12)]
    good = [r if i % 3 else r.replace("cat", "dog") for i, r in enumerate(refs)]
    bad = [" ".join(r.split()[:4]) for r in refs]
    scorer, table = bleu.sufficient_stats(good, refs)
    assert table.shape[0] == len(refs)
    assert scorer._compute_score_from_stats(table.sum(0)).score == pytest.approx(
        BLEU().corpus_score(good, [refs]).score
    )
    seed, n = 5, 50
    with stats._sacrebleu_seed(seed):
        _, out = PairedTest(
            [("b", bad), ("a", good)], {"BLEU": BLEU()}, [refs], test_type="bs", n_samples=n
        )()
    idxs = np.random.default_rng(seed).choice(len(refs), size=(n, len(refs)), replace=True)
    assert bleu.resampled_scores(scorer, table, idxs).mean() == pytest.approx(
        out["BLEU"][1].mean, abs=1e-4
    )
