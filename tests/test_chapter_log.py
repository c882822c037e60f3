"""The build's view of a running chapter: everything kept in its log, a summary on the terminal."""

import io

from rnnlib.book.chapter_log import ChapterLog


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_log_keeps_everything_and_the_terminal_gets_cache_lines_at_once(tmp_path):
    clock, term = Clock(), io.StringIO()
    with ChapterLog(tmp_path / "logs" / "x.log", "x", term, every=30, clock=clock) as log:
        clock.now = 75
        log.write("rnnlib cache: computing rnnsearch/run/ab12\n")
        log.write("some warning\nrnnlib cache: rnnsearch/run/ab12 computed in 3 s\n")
    kept = (tmp_path / "logs" / "x.log").read_text()
    assert "some warning" in kept and kept.count("rnnlib cache:") == 2
    lines = term.getvalue().splitlines()
    assert lines[0] == "  [x 1:15] computing rnnsearch/run/ab12"
    assert lines[1] == "  [x 1:15] rnnsearch/run/ab12 computed in 3 s"
    assert len(lines) == 2  # the warning waits for the next progress slot, and none came


def test_progress_reaches_the_terminal_at_most_once_a_period_and_a_bar_without_newline_counts(
    tmp_path,
):
    clock, term = Clock(), io.StringIO()
    with ChapterLog(tmp_path / "c.log", "c", term, every=60, clock=clock) as log:
        for t in range(0, 200, 10):  # a bar redrawn in place every 10 s
            clock.now = t
            log.write(f"\rtrain: {t} upd")
    shown = term.getvalue().splitlines()
    assert shown == [
        "  [c 1:00] train: 60 upd",
        "  [c 2:00] train: 120 upd",
        "  [c 3:00] train: 180 upd",
    ]
    assert (tmp_path / "c.log").read_bytes().count(b"\r") == 20  # every redraw is kept
