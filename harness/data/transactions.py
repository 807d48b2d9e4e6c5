"""Transactions for tests: transactional producers interleaved on the same partitions, and the layout they leave.

Apache Kafka writes a transaction's records where they arrive, between other producers' records,
and ends each transaction with a control record (the commit or abort marker) in every partition it
wrote to. read_committed consumers skip the markers and the aborted records, and never read past
the last stable offset (the first offset of a transaction still open). ``Interleaved`` plays a
script of such writes; ``layout`` tells a partition's offsets apart afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from harness.data.read import read_partition
from harness.data.seed import producer, send
from harness.data.topics import log_range


class Interleaved:
    """Transactional producers by name (``transactional.id`` = topic-name) plus a plain idempotent one,
    each write flushed before the next step, so that the steps' order is the offsets' order."""

    def __init__(self, bootstrap: str, topic: str, partitions: Sequence[int]) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.partitions = tuple(partitions)
        self._producers: dict[str, Producer] = {}
        self._written = 0

    def _producer(self, name: str) -> Producer:
        if name not in self._producers:
            if name == "plain":
                self._producers[name] = producer(self.bootstrap)
            else:
                # A transaction may stay open across a whole run (the coordinator aborts it after this long).
                settings = {"transactional.id": f"{self.topic}-{name}", "transaction.timeout.ms": 600_000}
                p = producer(self.bootstrap, **settings)
                p.init_transactions(30)
                self._producers[name] = p
        return self._producers[name]

    def begin(self, name: str) -> None:
        self._producer(name).begin_transaction()

    def write(self, name: str, count: int) -> None:
        """``count`` records from ``name`` to every partition (values say who wrote them)."""
        p = self._producer(name)
        for _ in range(count):
            for partition in self.partitions:
                self._written += 1
                value = f"{name} record {self._written}".encode()
                send(p, self.topic, partition, f"{name}-{self._written}".encode(), value, headers=[("by", name)])
        p.flush(30)

    def commit(self, name: str) -> None:
        self._producer(name).commit_transaction(30)

    def abort(self, name: str) -> None:
        self._producer(name).abort_transaction(30)

    def play(self, script: Iterable[tuple[str, ...]]) -> None:
        """Steps ``(name, "begin" | "commit" | "abort")`` or ``(name, "write", count)``."""
        for step in script:
            name, action, *count = step
            if action == "write":
                self.write(name, int(count[0]))
            else:
                getattr(self, action)(name)


@dataclass(frozen=True)
class Layout:
    """One partition's offsets: records read_committed consumers see, aborted records, markers, the end."""

    committed: tuple[int, ...]
    aborted: tuple[int, ...]
    markers: tuple[int, ...]
    end: int
    records: tuple[dict[str, Any], ...]  # the committed records, as read_committed reads them

    def target_offset(self, offset: int) -> int:
        """Where a copy that writes only committed records, densely from 0, has the first one at/after ``offset``."""
        return sum(1 for o in self.committed if o < offset)

    def next_record(self, offset: int) -> dict[str, Any] | None:
        return next((r for r in self.records if r["offset"] >= offset), None)


def layout(bootstrap: str, topic: str, partition: int) -> Layout:
    """Tell committed records, aborted records and markers apart (no transaction may be open)."""
    everything = read_partition(bootstrap, topic, partition, settings={"isolation.level": "read_uncommitted"})
    committed = read_partition(bootstrap, topic, partition, settings={"isolation.level": "read_committed"})
    start, end = log_range(bootstrap, topic, partition)
    data = {r["offset"] for r in everything}
    kept = {r["offset"] for r in committed}
    return Layout(
        committed=tuple(sorted(kept)),
        aborted=tuple(sorted(data - kept)),
        markers=tuple(o for o in range(start, end) if o not in data),
        end=end,
        records=tuple(committed),
    )
