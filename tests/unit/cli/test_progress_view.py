"""What `kafka-migrate run` shows while Spark works (cli/progress.py), fed the driver's own lines.

Plain lines when stderr is not a terminal (cron, CI, nohup, 2>file): one every few seconds, whole;
bars on a terminal that move with every report. tests/integration/test_cli_progress.py runs the
same through a real run, in a pipe and in a pseudo-terminal.
"""

from __future__ import annotations

import io
import logging

from kafka_migration.cli.progress import LineProgress, TerminalProgress, run_progress
from kafka_migration.run.progress import topic_done_message


def driver(message: str) -> str:
    """A line as the Spark driver writes it (spark/driver.py's logging format)."""
    record = logging.LogRecord("kafka_migration.spark", logging.INFO, __file__, 1, message, None, None)
    return logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s").format(record)


SPARK_UP = driver("migrate: Spark is up (context 14.2s, Python workers 31.9s after the driver started); waiting")
STARTED = driver("migrate: 1 topic, 3 partitions, jobs [0] of run cli-1")


def records(step: str, done: int, total: int = 300_000, topics_done: int = 0) -> str:
    return driver(
        f"{step} progress: {done:,} of {total:,} records (1.0%), 38,735 records/s, 8.0 MB/s now; "
        f"{topics_done} of 1 topic done; 5 s elapsed"
    )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_say_spark_is_starting_then_records_rate_and_topics_uncut() -> None:
    out, clock = io.StringIO(), Clock()
    view = LineProgress(out, interval=5, clock=clock)
    view.planned(300_000, 1)
    clock.now += 12
    view.tick()
    view.line(SPARK_UP)
    view.line(STARTED)
    clock.now += 5
    view.line(records("copy", 194_000))
    view.line(records("verify", 192_000))
    view.tick()
    clock.now += 5
    view.line(records("copy", 262_000))
    view.tick()
    view.line(driver(topic_done_message("copy", "big", "big", "ok", 300_000, 6.0, 1, 1)))
    clock.now += 3
    view.tick()  # the copy is over: only the verification still reports
    view.done()
    lines = out.getvalue().splitlines()
    assert lines[0] == "Spark is starting (0:12 so far) ..."
    assert lines[1] == "Spark is up after 12.0 s."
    assert lines[2] == "copy: 194,000 of 300,000 records (65%), 38,800 records/s, 0 of 1 topic done, 0:05 elapsed"
    assert lines[3] == "verify: 192,000 of 300,000 records (64%), 38,400 records/s, 0 of 1 topic done, 0:05 elapsed"
    assert lines[4] == "copy: 262,000 of 300,000 records (87%), 13,600 records/s, 0 of 1 topic done, 0:10 elapsed"
    assert lines[6:] == [
        "copy: done, 300,000 of 300,000 records, 1 of 1 topic, in 0:10",
        "verify: 192,000 of 300,000 records (64%), 0 records/s, 0 of 1 topic done, 0:13 elapsed",
        "verify: done, 300,000 of 300,000 records, 1 of 1 topic, in 0:13",
    ]


def test_plain_lines_name_a_topic_that_failed_at_once() -> None:
    out = io.StringIO()
    view = LineProgress(out, interval=5)
    view.planned(10, 2)
    line = driver(topic_done_message("copy", "orders", "eu.orders", "failed", 0, 1.5, 1, 2) + ": partition 0: boom")
    view.line(line)
    assert out.getvalue().splitlines()[-1] == (
        "copy orders -> eu.orders: FAILED, 0 records in 1.5 s (1 of 2 topics done; see the table at the end)"
    )


def test_plain_lines_come_every_interval_by_themselves() -> None:
    out = io.StringIO()
    with LineProgress(out, interval=0.05):
        import time

        time.sleep(0.3)
    assert out.getvalue().count("Spark is starting") >= 2


def test_nothing_to_copy_prints_no_step() -> None:
    out = io.StringIO()
    view = LineProgress(out, interval=5)
    view.line(SPARK_UP)
    view.done()
    assert "records" not in out.getvalue()


def test_bars_move_with_every_report_on_a_terminal() -> None:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    view = TerminalProgress(out, console=console)
    with view:
        view.planned(300_000, 1)
        view.progress.refresh()
        assert "Spark  " in out.getvalue() and "starting" in out.getvalue()
        view.line(SPARK_UP)
        view.line(STARTED)
        view.line(records("copy", 194_000))
        view.progress.refresh()
        assert "194,000/300,000 records" in out.getvalue()  # not 0 until the end
        view.line(records("copy", 262_000))
        view.progress.refresh()
        assert "262,000/300,000 records" in out.getvalue()
        view.done()
    final = out.getvalue().rsplit("\r", 1)[-1]  # the frame left on the screen
    assert "copy" in final and "verify" in final and "starting" not in final
    assert "300,000/300,000 records" in out.getvalue() and "1/1 topic" in out.getvalue()


def test_a_stream_that_is_not_a_terminal_gets_plain_lines() -> None:
    assert isinstance(run_progress(stream=io.StringIO()), LineProgress)
