"""Run a Spark task's small slices in windows: one consumer per cluster and window, not per slice.

A slice read alone pays a new consumer (connection, and a metadata answer listing every topic
of the cluster) for a few hundred records. The small slices of one task are therefore grouped
into windows, each read with one consumer per cluster (``ranges.read_ranges``); big slices,
and any slice a window hands back, keep the per-slice path (``progress.run_guarded_all``).
The rows keep their shape: one result per slice, in the task's order, with (started, ended)
stamps; a window's time is split among its slices by records, laid end to end inside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kafka_migration.model.config import ClusterPair
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.progress import Address, SliceResults, run_guarded_all

R = TypeVar("R")

# A slice up to this many planned offsets is "small": read together with others. Bigger ones stream
# alone, as before (their consumer's cost is small next to their records). The Spark jobs put slices
# up to this size together in a task (``spark.driver_jobs.SMALL_SLICE_OFFSETS``); a bigger one has its task.
SMALL_SLICE_RECORDS = 5_000
# Planned offsets of one window at most: the verification holds a window's records to compare them.
WINDOW_RECORDS = 50_000


def is_small(piece: PartitionSlice) -> bool:
    return piece.end - piece.start <= SMALL_SLICE_RECORDS


def windows(slices: Sequence[PartitionSlice], key: Callable[[PartitionSlice], Any] = lambda _: None) -> list[list[int]]:
    """Indices of ``slices`` in windows of at most WINDOW_RECORDS planned offsets, each partition once per
    window (a reader assigns a partition once), consecutive slices with equal ``key`` together."""
    out: list[list[int]] = []
    current: list[int] = []
    seen: set[tuple[str, str, int]] = set()
    used = 0
    for i, piece in enumerate(slices):
        span = max(0, piece.end - piece.start)
        parts = {("source", piece.source_topic, piece.partition), ("target", piece.target_topic, piece.partition)}
        if current and (used + span > WINDOW_RECORDS or parts & seen or key(piece) != key(slices[current[0]])):
            out.append(current)
            current, seen, used = [], set(), 0
        current.append(i)
        seen |= parts
        used += span
    if current:
        out.append(current)
    return out


def lay_out(started: float, seconds: Sequence[float]) -> list[tuple[float, float]]:
    """(started, ended) epoch stamps of slices that shared a window, end to end from ``started``."""
    stamps = []
    for s in seconds:
        stamps.append((started, started + s))
        started += s
    return stamps


def shares(total: float, weights: Sequence[int]) -> list[float]:
    """``total`` seconds split by ``weights`` (records); equally when there are none."""
    whole = sum(weights)
    if whole <= 0:
        return [total / len(weights)] * len(weights) if weights else []
    return [total * w / whole for w in weights]


@dataclass(frozen=True)
class WindowOutcome(Generic[R]):
    """What a window did: per slice a result, or None to run that slice on the per-slice path;
    each slice's stamps; and, when a cluster stopped answering, why (the task attempts nothing more)."""

    results: list[R | None]
    stamps: list[tuple[float, float]]
    lost: str | None = None


def run_windowed(
    work: Callable[..., R],
    window_work: Callable[[list[PartitionSlice], ClusterPair, Address | None], WindowOutcome[R]],
    failed: Callable[[PartitionSlice, str], R],
    tasks: list[PartitionSlice],
    clusters: ClusterPair,
    progress_address: Address | None,
    key: Callable[[PartitionSlice], Any] = lambda _: None,
) -> SliceResults:
    """``run_guarded_all`` with the small slices run a window at a time by ``window_work``.

    After a cluster timeout (in a window, or on the per-slice path) the slices after it are
    reported "not attempted", as ``run_guarded_all`` does.
    """
    from kafka_migration.exceptions import ClusterTimeoutError, describe_failure

    results: list[R | None] = [None] * len(tasks)
    stamps: list[tuple[float, float] | None] = [None] * len(tasks)
    small = [i for i, piece in enumerate(tasks) if is_small(piece)]
    lost: str | None = None
    for window in windows([tasks[i] for i in small], key):
        if len(window) == 1:
            continue  # nothing to share: the per-slice path
        chosen = [small[w] for w in window]
        pieces = [tasks[i] for i in chosen]
        started = time.time()
        if lost is not None:
            for i in chosen:
                results[i], stamps[i] = failed(tasks[i], f"not attempted: {lost}"), (started, started)
            continue
        try:
            outcome = window_work(pieces, clusters, progress_address)
        except ClusterTimeoutError as exc:
            first = pieces[0]
            lost = f"{first.source_topic}[{first.partition}] and {len(pieces) - 1} more found: {exc}"
            ended = time.time()
            for i in chosen:
                results[i], stamps[i] = failed(tasks[i], describe_failure(exc)), (started, ended)
            continue
        except Exception:  # anything else: each slice alone, to name the one it concerns
            continue
        for i, result, stamp in zip(chosen, outcome.results, outcome.stamps, strict=True):
            if result is not None:
                results[i], stamps[i] = result, stamp
        lost = outcome.lost
    rest = [i for i in range(len(tasks)) if results[i] is None]
    if lost is not None:
        now = time.time()
        done = SliceResults(failed(tasks[i], f"not attempted: {lost}") for i in rest)
        done.stamps = [(now, now)] * len(rest)
    else:
        done = run_guarded_all(work, failed, [tasks[i] for i in rest], clusters, progress_address)
    for i, result, stamp in zip(rest, done, done.stamps, strict=True):
        results[i], stamps[i] = result, stamp
    out = SliceResults(results)
    out.stamps = [s for s in stamps if s is not None]
    return out
