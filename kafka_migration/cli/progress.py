"""What ``kafka-migrate run`` (and a cutover's or failback's final run) shows while Spark works.

On a terminal, bars that move as the copy and the verification go (``TerminalProgress``, with rich).
Anywhere else (cron, CI, ``nohup``, ``2>file``) a plain line every few seconds, never cut to a width
(``LineProgress``): records done of planned, the rate, topics done, time spent; and Spark's start-up
while it lasts. Both read the Spark driver's progress lines (``run.progress.parse_line``). Those come
from datagrams that may be lost, so the numbers are informational: each step ends at its total.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from kafka_migration.model.text import plural
from kafka_migration.run.progress import (
    PROGRESS_SECONDS,
    Records,
    SparkUp,
    Started,
    TopicDone,
    parse_line,
    progress_seconds,
)

STEPS = ("copy", "verify")


def _clock_text(seconds: float) -> str:
    seconds = int(max(0.0, seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


@dataclass
class StepState:
    """One step's numbers as the driver last reported them."""

    total: int = 0
    done: int = 0
    topics_done: int = 0
    topics: int = 0
    started: float | None = None  # monotonic seconds when the step began
    ended: float | None = None


@dataclass
class Tracker:
    """The run's progress from the driver's lines: Spark's start-up, then each step's records and topics."""

    clock: Callable[[], float] = time.monotonic
    began: float = 0.0
    spark_up: float | None = None
    steps: dict[str, StepState] = field(default_factory=lambda: {step: StepState() for step in STEPS})
    failed: list[TopicDone] = field(default_factory=list)
    copying: bool = False  # a plan with records to copy was made

    def __post_init__(self) -> None:
        self.began = self.clock()

    def planned(self, records: int, topics: int) -> None:
        self.copying = True
        for state in self.steps.values():
            state.total, state.topics = records, topics

    def read(self, line: str) -> object | None:
        """Take in one line of the driver's output; the event it held (None: not a progress line)."""
        event = parse_line(line)
        now = self.clock()
        if isinstance(event, SparkUp):
            self.spark_up = self.spark_up or now
        elif isinstance(event, Started):
            self.spark_up = self.spark_up or now
            for state in self.steps.values():
                state.started = state.started or now
        elif isinstance(event, Records) and event.step in self.steps:
            state = self.steps[event.step]
            state.started = state.started or now
            state.done = max(state.done, event.done)
            state.total = event.total or state.total
            state.topics_done = max(state.topics_done, event.topics_done)
            state.topics = event.topics or state.topics
        elif isinstance(event, TopicDone) and event.step in self.steps:
            state = self.steps[event.step]
            state.topics_done = max(state.topics_done, event.done)
            state.topics = event.topics or state.topics
            if event.status != "ok":
                self.failed.append(event)
            if state.topics_done >= state.topics:  # its last topic: the step is over (its exact numbers follow)
                state.started = state.started or now
                state.ended = state.ended or now
                state.done = state.total
        return event

    def finish(self) -> None:
        """The Spark application ended: what it did is in its results files, each step at its total."""
        now = self.clock()
        for state in self.steps.values():
            state.done, state.topics_done = state.total, state.topics
            state.started = state.started or now
            state.ended = state.ended or now


def topic_line(event: TopicDone) -> str:
    return (
        f"{event.step} {event.source_topic} -> {event.target_topic}: {event.status.upper()}, "
        f"{plural(event.records, 'record')} in {event.seconds:.1f} s ({event.done:,} of "
        f"{plural(event.topics, 'topic')} done; see the table at the end)"
    )


class LineProgress:
    """Plain progress lines for a stream that is not a terminal: one every ``interval`` seconds, whole."""

    def __init__(
        self,
        stream: TextIO,
        interval: float | None = None,
        verbose: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.interval = progress_seconds() if interval is None else interval
        self.verbose = verbose
        self.tracker = Tracker(clock)
        self._last: dict[str, tuple[float, int]] = {}  # step -> (time, records) of the line printed last
        self._announced_up = False
        self._closed: set[str] = set()  # steps whose closing line is printed
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._tick_until_stopped, name="progress-lines", daemon=True)

    def __enter__(self) -> LineProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def planned(self, records: int, topics: int) -> None:
        self.tracker.planned(records, topics)

    def line(self, line: str) -> None:
        with self._lock:
            if self.verbose:
                self._print(line)
            event = self.tracker.read(line)
            if isinstance(event, (SparkUp, Started)) and not self._announced_up:
                self._announced_up = True
                self._print(f"Spark is up after {self.tracker.clock() - self.tracker.began:.1f} s.")
            if isinstance(event, TopicDone):
                if event.status != "ok":
                    self._print(topic_line(event))
                self._step_done(event.step)

    def done(self) -> None:
        with self._lock:
            if not self.tracker.copying:
                return
            self.tracker.finish()
            for step in self.tracker.steps:
                self._step_done(step)

    def _step_done(self, step: str) -> None:
        """The line that closes a step, once: as its last topic ends, or when the Spark application has."""
        state = self.tracker.steps[step]
        if step in self._closed or state.ended is None:
            return
        self._closed.add(step)
        self._print(
            f"{step}: done, {state.done:,} of {plural(state.total, 'record')}, {state.topics_done:,} of "
            f"{plural(state.topics, 'topic')}, in {_clock_text(state.ended - (state.started or state.ended))}"
        )

    def tick(self) -> None:
        """The periodic line(s): Spark's start-up while it lasts, then one line per step."""
        with self._lock:
            now = self.tracker.clock()
            tracker = self.tracker
            if tracker.spark_up is None:
                self._print(f"Spark is starting ({_clock_text(now - tracker.began)} so far) ...")
                return
            for step, state in tracker.steps.items():
                if state.started is None or state.ended is not None:
                    continue
                last_time, last_done = self._last.get(step, (state.started, 0))
                rate = (state.done - last_done) / max(now - last_time, 1e-6)
                self._last[step] = (now, state.done)
                percent = 100.0 * state.done / state.total if state.total else 100.0
                self._print(
                    f"{step}: {state.done:,} of {plural(state.total, 'record')} ({percent:.0f}%), "
                    f"{rate:,.0f} records/s, {state.topics_done:,} of {plural(state.topics, 'topic')} done, "
                    f"{_clock_text(now - state.started)} elapsed"
                )

    def _tick_until_stopped(self) -> None:
        while not self._stop.wait(self.interval):
            self.tick()

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


class TerminalProgress:
    """Bars on a terminal: Spark's start-up, then copy and verification moving with every driver report."""

    def __init__(self, stream: TextIO, verbose: bool = False, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.verbose = verbose
        self.tracker = Tracker()
        self.console = console or Console(file=stream)
        # Short columns (about 75 characters in all): a narrow terminal ellipsises, it does not wrap.
        self.progress = Progress(
            TextColumn("{task.description:<6}"),
            BarColumn(bar_width=20),
            TextColumn("{task.fields[count]}"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[topics]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.spark = self.progress.add_task("Spark", total=None, count="starting", rate="", topics="")
        self.tasks: dict[str, int] = {}

    def __enter__(self) -> TerminalProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def planned(self, records: int, topics: int) -> None:
        self.tracker.planned(records, topics)
        for step in STEPS:
            self.tasks[step] = self.progress.add_task(step, total=max(records, 1), start=False, **self._fields(step))
        self._show()

    def line(self, line: str) -> None:
        if self.verbose:
            self.progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
        event = self.tracker.read(line)
        if isinstance(event, TopicDone) and event.status != "ok":
            self.progress.console.print(topic_line(event), markup=False, highlight=False, soft_wrap=True)
        if event is not None:
            self._show()

    def done(self) -> None:
        if not self.tasks:  # nothing was copied: no Spark step to show
            self.progress.remove_task(self.spark)
            return
        self.tracker.finish()
        self._show()

    def _fields(self, step: str) -> dict[str, str]:
        state = self.tracker.steps[step]
        task = next((t for t in self.progress.tasks if t.id == self.tasks.get(step)), None)
        speed = task.speed if task is not None else None
        return {
            "count": f"{state.done:,}/{plural(state.total, 'record')}",
            "rate": f"{speed:,.0f}/s" if speed else "",
            "topics": f"{state.topics_done:,}/{plural(state.topics, 'topic')}",
        }

    def _show(self) -> None:
        tracker = self.tracker
        if tracker.spark_up is not None:
            self.progress.update(self.spark, total=1, completed=1, count="up")
        for step, task in self.tasks.items():
            state = tracker.steps[step]
            if state.started is not None:
                self.progress.start_task(task)
            self.progress.update(task, completed=state.done, **self._fields(step))
            if state.ended is not None:
                self.progress.stop_task(task)


def run_progress(verbose: bool = False, stream: TextIO | None = None) -> TerminalProgress | LineProgress:
    """Bars when ``stream`` (default stderr) is a terminal, plain lines every few seconds otherwise."""
    stream = stream or sys.stderr
    if stream.isatty():
        return TerminalProgress(stream, verbose)
    return LineProgress(stream, progress_seconds(PROGRESS_SECONDS), verbose)
