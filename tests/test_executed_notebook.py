"""The executed notebook a build keeps (and the HTML book offers for download) names no folder of
the machine that built it: papermill's paths and the text the cells printed use placeholders."""

import nbformat
import pytest
from nbclient.exceptions import DeadKernelError

from rnnlib.book.execute import _hide_injected_parameters


def test_the_machines_folders_become_placeholders(tmp_path):
    book, out = tmp_path / "book", tmp_path / "book" / "_build"
    python = book / ".venv"
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {
        "input_path": str(out / "inputs" / "chapters" / "x.ipynb"),
        "output_path": str(out / "src" / "chapters" / "x.ipynb"),
    }
    injected = nbformat.v4.new_code_cell("seed = 2")
    injected.metadata["tags"] = ["injected-parameters"]
    cell = nbformat.v4.new_code_cell("import tqdm.auto")
    cell.outputs = [
        nbformat.v4.new_output(
            "stream", name="stderr", text=f"{python}/lib/tqdm/auto.py:21: TqdmWarning: ...\n"
        ),
        nbformat.v4.new_output("stream", name="stdout", text="nothing local\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": f"read {out}/results"}),
        nbformat.v4.new_output(
            "error", ename="E", evalue="x", traceback=[f"File {book}/rnnlib/x.py", f"{book}2/y"]
        ),
    ]
    nb.cells = [injected, cell]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    _hide_injected_parameters(path, {"<build>": out, "<book>": book, "<python>": python})
    got = nbformat.read(path, as_version=4)
    assert got.metadata["papermill"] == {
        "input_path": "<build>/inputs/chapters/x.ipynb",
        "output_path": "<build>/src/chapters/x.ipynb",
    }
    assert got.cells[0].metadata["tags"] == ["injected-parameters", "remove-cell"]
    texts = [o["text"] for o in got.cells[1].outputs[:2]]
    assert texts == ["<python>/lib/tqdm/auto.py:21: TqdmWarning: ...\n", "nothing local\n"]
    assert got.cells[1].outputs[2]["data"]["text/plain"] == "read <build>/results"
    # a traceback too; a path is replaced only whole: book2 is another folder
    assert got.cells[1].outputs[3]["traceback"] == ["File <book>/rnnlib/x.py", f"{book}2/y"]


@pytest.mark.parametrize(
    "stop, said, raised",
    [
        (lambda: DeadKernelError("Kernel died"), "its kernel died (out of memory", "ChapterFailed"),
        (KeyboardInterrupt, "interrupted.", "ChapterInterrupted"),
    ],
)
def test_a_chapter_that_stops_names_itself_and_says_that_rerunning_resumes(
    tmp_path, monkeypatch, stop, said, raised
):
    import papermill

    from rnnlib.book import execute
    from rnnlib.book.execute import RESUMES, execute_chapter
    from minibook import make_minibook

    root = make_minibook(tmp_path / "book")

    def dies(*args, **kwargs):
        raise stop()

    monkeypatch.setattr(papermill, "execute_notebook", dies)
    with pytest.raises(getattr(execute, raised)) as e:
        execute_chapter(
            root, "demo", root / "chapters" / "demo.md", {}, root / "_build", root / "_cache",
            progress=False,
        )  # fmt: skip
    assert str(e.value).startswith("chapter chapters/demo.md: ") and said in str(e.value)
    assert str(e.value).endswith(RESUMES) and "run the same command again" in RESUMES
    assert "checkpoint" not in RESUMES  # the chapters' long runs checkpoint only at their end
