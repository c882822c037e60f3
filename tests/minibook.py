"""A two-page book made in a temporary folder, to test the pipeline without training anything."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DEMO_CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Demo

```{code-cell} python
:tags: [parameters]
profile: str = "cpu"  # profile name
seed: int = 1  # [0, 1000] seed
n: int = 3  # [1, 100] how many numbers
fail: bool = False  # raise on purpose
slow: float = 0.0  # [0, 600] seconds to wait while the artifact is half written
```

```{code-cell} python
:tags: [remove-input]
from rnnlib.book.chapter import Chapter
ch = Chapter.start("demo", globals())
```

```{code-cell} python
:tags: [remove-input]
import json, time
import matplotlib.pyplot as plt

def make(out, work):
    with open(out / "numbers.json", "w") as f:
        f.write("[")
        f.flush()
        (work / "started").write_text("1")
        time.sleep(slow)
        f.write(", ".join(str(i * seed) for i in range(n)) + "]")

art = ch.artifact("demo/numbers", {"n": n, "seed": seed}, make)
xs = json.loads(art.file("numbers.json").read_text())
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot(xs)
ch.figure("demo-plot", fig)
ch.number("demo-sum", sum(xs))
assert not fail, "asked to fail"
```

The sum is {glue:}`demo-sum`.

```{glue:figure} demo-plot
:name: demo-plot

A line.
```
"""


def make_minibook(folder: Path) -> Path:
    """Write the book into ``folder`` and return it."""
    (folder / "chapters").mkdir(parents=True)
    (folder / "profiles").mkdir()
    for name in ("_config.yml", "CITATION.cff", "references.bib"):
        shutil.copy2(ROOT / name, folder / name)
    (folder / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n  - file: chapters/demo\n"
    )
    (folder / "index.md").write_text("# Mini book\n\nA test book.\n")
    (folder / "chapters" / "demo.md").write_text(DEMO_CHAPTER)
    (folder / "profiles" / "smoke.yml").write_text(
        "description: test\ndefaults: {seed: 3}\nchapters:\n  demo: {n: 5}\n"
    )
    return folder
