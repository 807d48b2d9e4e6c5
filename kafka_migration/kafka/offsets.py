"""Offsets of many partitions (earliest, latest, by time): the part of ``clients.KafkaCluster`` that asks ListOffsets.

Planning asks for every partition of a run, up to tens of thousands of them: the offsets are asked in requests of
at most ``LOOKUP_BATCH`` partitions, ``LOOKUP_IN_FLIGHT`` unanswered at a time (``batches``), so that each request
is answered well inside the client's timeout, on a loaded broker too (a lookup by time costs the broker a read of
the partition's first batch: about 0.6 ms of its CPU per partition here). A partition that is not answered is asked
again on its own, for up to twice the client's timeout from when it was first asked, and a request that timed out
as a whole is asked again in halves.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka_migration.exceptions import ClusterUnreachableError, MigrationError
from kafka_migration.kafka.acls import Permission
from kafka_migration.kafka.batches import chunks, pipelined
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.text import plural

OFFSET_INVALID = -1001  # librdkafka's RD_KAFKA_OFFSET_INVALID: no offset was answered (the request timed out)
METADATA_ONE_BY_ONE = 8  # topics whose metadata is asked one request each; more: one request for the cluster's


class OffsetLookups:
    """``KafkaCluster``'s ListOffsets requests; uses its admin client, timeout, config and answer checks."""

    admin: Any
    timeout: float
    config: ClusterConfig
    _result: Callable[..., Any]
    _unreachable: Callable[[BaseException | str], ClusterUnreachableError]
    metadata: Callable[[], Any]

    LOOKUP_BATCH = 250  # partitions per ListOffsets request (5,000 by time took a quiet broker 3 to 5.6 s here)
    LOOKUP_IN_FLIGHT = 2  # one request answered while the next waits: librdkafka's timeout counts the wait too

    def offsets_for_times(self, wanted: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """(topic, partition) -> timestamp ms gives the first offset whose timestamp is at or after it (-1: none,
        every record is older)."""
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        if not wanted:
            return {}
        answers = self._list_offsets(
            {TopicPartition(t, p): OffsetSpec.for_timestamp(ts) for (t, p), ts in wanted.items()},
            IsolationLevel.READ_COMMITTED,
            "find offsets by time",
        )
        return {(tp.topic, tp.partition): int(info.offset) for tp, info in answers.items()}

    def offsets_at_ends(self, partitions: Mapping[str, int]) -> dict[tuple[str, str], dict[int, int]]:
        """Earliest and latest (read_committed) offsets of every partition of ``partitions`` (topic -> count):
        {(kind, topic): {partition: offset}}."""
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        asked = [TopicPartition(n, p) for n, count in partitions.items() for p in range(count)]
        found: dict[tuple[str, str], dict[int, int]] = {}
        for kind, spec in (("earliest", OffsetSpec.earliest()), ("latest", OffsetSpec.latest())):
            answers = self._list_offsets(
                {tp: spec for tp in asked},
                IsolationLevel.READ_COMMITTED,
                f"list {kind} offsets",
                lambda tp: Permission("Describe", "topic", (tp.topic,), "to read its offsets; Read implies it"),
            )
            for tp, info in answers.items():
                found.setdefault((kind, tp.topic), {})[tp.partition] = int(info.offset)
        return found

    def log_starts(self, names: Iterable[str]) -> dict[tuple[str, int], int]:
        """Per partition of the named topics that exist: the log start offset (retention and DeleteRecords move it)."""
        from confluent_kafka import IsolationLevel
        from confluent_kafka.admin import OffsetSpec

        partitions = self._partitions_of(names)
        if not partitions:
            return {}
        answers = self._list_offsets(
            {tp: OffsetSpec.earliest() for tp in partitions}, IsolationLevel.READ_UNCOMMITTED, "list start offsets"
        )
        return {(tp.topic, tp.partition): int(info.offset) for tp, info in answers.items()}

    def log_ends(self, names: Iterable[str]) -> dict[tuple[str, int], tuple[int, int]]:
        """Per partition of the named topics (high watermark, last stable offset): where the next record
        lands, and the end of what read_committed consumers see (lower while a transaction is open)."""
        from confluent_kafka import IsolationLevel
        from confluent_kafka.admin import OffsetSpec

        partitions = self._partitions_of(names)
        if not partitions:
            return {}
        found: dict[tuple[str, int], list[int]] = {}
        for isolation in (IsolationLevel.READ_UNCOMMITTED, IsolationLevel.READ_COMMITTED):
            answers = self._list_offsets({tp: OffsetSpec.latest() for tp in partitions}, isolation, "list end offsets")
            for tp, info in answers.items():
                found.setdefault((tp.topic, tp.partition), []).append(int(info.offset))
        return {key: (values[0], values[1]) for key, values in sorted(found.items())}

    def _partitions_of(self, names: Iterable[str]) -> list[Any]:
        """Every partition of those of ``names`` that exist now."""
        from confluent_kafka import TopicPartition

        wanted = list(dict.fromkeys(names))
        metadata = self.metadata()
        return [TopicPartition(n, p) for n in wanted if n in metadata.topics for p in metadata.topics[n].partitions]

    def _list_offsets(
        self,
        specs: Mapping[Any, Any],
        isolation: Any,
        what: str,
        needs: Callable[[Any], Permission] | None = None,
    ) -> dict[Any, Any]:
        """ListOffsets for ``specs`` ({TopicPartition: OffsetSpec}), in bounded requests.

        A partition whose leader is being elected (a topic or partition created a moment ago, a broker restarting)
        answers NOT_LEADER or LEADER_NOT_AVAILABLE for a while, and a new leader OFFSET_NOT_AVAILABLE until its
        high watermark has caught up with its followers; one whose leader crashed, or a broker too busy to answer
        in time, gives no answer (a timeout, or the invalid offset -1001 in place of an answer) until the cluster
        elects another leader or the broker catches up. Those partitions are asked again, for up to twice the
        client's timeout from their first request; never is an offset guessed.
        """
        from confluent_kafka import KafkaError

        electing = {
            KafkaError.NOT_LEADER_FOR_PARTITION,
            KafkaError.LEADER_NOT_AVAILABLE,
            KafkaError.OFFSET_NOT_AVAILABLE,  # a new leader whose high watermark has not caught up yet
            KafkaError._TRANSPORT,
        }
        window = 2 * self.timeout
        first_asked: dict[Any, float] = {}
        answers: dict[Any, Any] = {}
        queue: deque[Sequence[Any]] = deque(chunks(specs, self.LOOKUP_BATCH))

        def send(batch: Sequence[Any]) -> dict[Any, Any]:
            now = time.monotonic()
            for tp in batch:
                first_asked.setdefault(tp, now)
            return self.admin.list_offsets(
                {tp: specs[tp] for tp in batch}, isolation_level=isolation, request_timeout=self.timeout
            )

        def read(batch: Sequence[Any], futures: dict[Any, Any]) -> None:
            again: list[Any] = []  # answered with an error that passes (a leader being elected)
            unanswered: list[Any] = []  # no answer in time
            for tp in batch:
                late = time.monotonic() - first_asked[tp] >= window
                label = f"{what}: {tp.topic}[{tp.partition}]"
                try:
                    answer = self._result(futures[tp], label, needs(tp) if needs else None)
                except MigrationError as exc:
                    code = _error_code(exc.__context__)
                    if late or (code not in electing and code != KafkaError._TIMED_OUT):
                        raise
                    (unanswered if code == KafkaError._TIMED_OUT else again).append(tp)
                    continue
                if int(answer.offset) != OFFSET_INVALID:
                    answers[tp] = answer
                elif late:
                    raise self._timed_out(label, len(batch), len(specs), len(specs) - len(answers))
                else:
                    unanswered.append(tp)
            if not again and not unanswered:
                return
            time.sleep(0.2)
            self._refresh_metadata({tp.topic for tp in again + unanswered})
            # A request none of whose partitions was answered timed out as a whole: ask again in halves, so that a
            # broker too busy for that many partitions gets requests it answers in time.
            whole = len(unanswered) == len(batch) > 1
            queue.extend(chunks(again + unanswered, len(batch) // 2 if whole else self.LOOKUP_BATCH))

        pipelined(queue, send, read, self.LOOKUP_IN_FLIGHT)
        return answers

    def _timed_out(self, label: str, batch: int, asked: int, missing: int) -> MigrationError:
        return MigrationError(
            f"{self.config.role} cluster {self.config.bootstrap}: could not {label}: timed out, no answer from its "
            f"leader within {2 * self.timeout:.0f}s (asked with {plural(batch - 1, 'other partition')} in one request, "
            f"{asked:,} in all; {missing:,} still without an answer). The broker is overloaded, or the leader is "
            "down and not yet replaced; nothing was written: try again."
        )

    def _refresh_metadata(self, topics: Iterable[str]) -> None:
        """Ask for the topics' metadata, so that the client learns a partition's new leader (it keeps asking the
        old one otherwise, also after that broker crashed and the cluster elected another): one request per
        topic for a few, one for the whole cluster for more."""
        from confluent_kafka import KafkaException

        names = sorted(topics)
        with contextlib.suppress(KafkaException):
            if len(names) > METADATA_ONE_BY_ONE:
                self.admin.list_topics(timeout=self.timeout)
                return
            for topic in names:
                self.admin.list_topics(topic=topic, timeout=self.timeout)


def _error_code(cause: BaseException | None) -> int | None:
    """The Kafka error code a failed admin future raised, if any."""
    from confluent_kafka import KafkaException

    if isinstance(cause, KafkaException) and cause.args and hasattr(cause.args[0], "code"):
        return int(cause.args[0].code())
    return None
