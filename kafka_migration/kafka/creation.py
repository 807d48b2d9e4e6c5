"""Creating topics and waiting until their leaders serve them: the part of ``clients.KafkaCluster`` that a run's
target topics go through (kept apart: Kafka creates topics asynchronously, and a run of 10,000 new topics
spends most of its planning here).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka_migration.exceptions import MigrationError
from kafka_migration.kafka.acls import operation_names
from kafka_migration.kafka.batches import chunks, pipelined
from kafka_migration.kafka.offsets import OffsetLookups
from kafka_migration.kafka.settings import READER_GROUP
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import TopicDescription

log = logging.getLogger(__name__)


class TopicCreation:
    """``KafkaCluster``'s topic creation; uses its admin client, timeout and config."""

    admin: Any
    timeout: float
    config: ClusterConfig

    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: Mapping[str, str]) -> bool:
        """Create a topic; False (and a warning) when it already exists."""
        return self.create_topics([(name, partitions, replication_factor, configs)])[name]

    # Topics per CreateTopics request: large enough that 1,000 topics take a few round trips, small enough
    # that one request stays well within a broker's request size and controller time.
    CREATE_BATCH = 500
    PROBES = 4  # polls of one topic in a row at most, while waiting for new topics (wait_for_topics)
    FIRST_WINDOW = 50  # topics of the first window waited for; each next one twice as big, up to CREATE_BATCH
    # Seconds between polls for new topics: short after progress (a warm broker brings 500 topics up in well
    # under a second, and each poll is one small request), longer the longer nothing comes up.
    FIRST_PAUSE = 0.05
    LAST_PAUSE = 1.0

    def create_topics(self, topics: Iterable[tuple[str, int, int, Mapping[str, str]]]) -> dict[str, bool]:
        """Create topics (name, partitions, replication factor, configs) in batched requests.

        Returns name -> created (False, with a warning, when it already existed); the first other
        failure raises, naming the topic.
        """
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        wanted = list(topics)
        factors = {name: rf for name, _, rf, _ in wanted}
        created: dict[str, bool] = {}
        for i in range(0, len(wanted), self.CREATE_BATCH):
            batch = wanted[i : i + self.CREATE_BATCH]
            futures = self.admin.create_topics(
                [NewTopic(name, partitions, rf, config=dict(configs)) for name, partitions, rf, configs in batch],
                request_timeout=self.timeout,
                operation_timeout=self.timeout,
            )
            for name, _, _, _ in batch:
                try:
                    futures[name].result(timeout=self.timeout + 5)
                except KafkaException as exc:
                    error = exc.args[0]
                    if error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                        log.warning("Target topic %s already exists; keeping it", name)
                        created[name] = False
                        continue
                    raise MigrationError(
                        f"Could not create topic {name!r} on the {self.config.role} cluster {self.config.bootstrap}: "
                        f"{error.str()}. Check the principal may create topics and that the replication factor "
                        f"({factors[name]}) does not exceed the number of brokers."
                    ) from exc
                created[name] = True
        return created

    def find_reader_coordinator(self, timeout: float = 10.0) -> None:
        """Look up the coordinator of the readers' group once, before thousands of topics are created.

        The copy's consumers each look it up when they start (librdkafka requires a group.id). On a new
        cluster the first lookup makes the broker create ``__consumer_offsets``; asked first by the
        consumers of a run whose topics are still being created, that creation waited behind them while
        every consumer's lookup asked for it again (700 CreateTopics requests in a 10,000-topic run). A
        principal without Describe on the group is refused, which the consumers ignore too.
        """
        _find_coordinator(self.admin, self.config.role, timeout)

    def find_reader_coordinator_meanwhile(self, timeout: float = 10.0) -> threading.Thread:
        """``find_reader_coordinator`` in a thread of its own (started; returned), for a run with other work to do
        before it creates its topics (a census of the source records): on a new cluster that lookup waits for the
        broker to create ``__consumer_offsets``, a few tenths of a second the run then need not wait for. The admin
        client is made here, in one thread."""
        args = (self.admin, self.config.role, timeout)
        thread = threading.Thread(target=_find_coordinator, args=args, name="reader-coordinator", daemon=True)
        thread.start()
        return thread

    def wait_for_topics(
        self,
        names: Iterable[str],
        timeout: float = 30.0,
        on_ready: Callable[[dict[str, TopicDescription]], None] | None = None,
    ) -> dict[str, TopicDescription]:
        """Topic creation is asynchronous in Kafka: wait until every partition has a leader; each topic as the
        answer that found it ready described it (partitions, id, the principal's operations), for the checks
        before writing, which so need no other request about the new topics.

        Asks for a window of the first topics still waiting only (FIRST_WINDOW, doubling up to CREATE_BATCH:
        small at first, so that the first topics are released to the copy soon), in the order given (a broker brings new
        topics up in the order they were created), once the last of them is up: at once after a window found
        whole (a pause there delayed the copy's releases by a fifth of a second each), otherwise less often the
        longer it waits: asking for all of them made each poll as big as the topic count, for as long as the broker
        took to create them (10,000 new topics: ~25 s of the client's CPU and as much of the broker's).
        Gives up when no topic got its leaders for ``timeout`` seconds: a broker creates thousands of
        topics in longer than that in all. ``on_ready`` receives each poll's newly ready topics as they come
        up, so that a run can start copying them while the broker creates the others.
        """
        pending = list(dict.fromkeys(names))
        counts: dict[str, TopicDescription] = {}
        progress = time.monotonic()
        pause = self.FIRST_PAUSE
        probes = 0
        size = self.FIRST_WINDOW
        while pending:
            window = pending[:size]
            # Until the window's last topic is up, ask about it alone (a few times in a row at most, in case it
            # comes up out of order): the broker's Metadata answers for 500 topics were most of the polls' cost.
            if len(window) > 1 and probes < self.PROBES and not self._have_leaders({window[-1]}):
                probes += 1
                ready = {}
            else:
                probes = 0
                ready = self._have_leaders(set(window))
            counts.update(ready)
            if ready and on_ready is not None:
                on_ready(ready)
            now = time.monotonic()
            whole = bool(ready) and window[-1] in ready and len(ready) == len(window)
            if ready:
                size = min(self.CREATE_BATCH, size * 2) if window[-1] in ready else size
                pending = [n for n in pending if n not in ready]
                progress = now
                pause = self.FIRST_PAUSE
            if pending and now - progress > timeout:
                shown = ", ".join(sorted(pending)[:10]) + (
                    f" and {len(pending) - 10:,} more" if len(pending) > 10 else ""
                )
                raise MigrationError(
                    f"Topics {shown} were created on the {self.config.role} cluster but have no leader after "
                    f"{timeout:.0f}s without progress; check the target cluster's health."
                )
            if pending and not whole:  # a whole window up: the next one is most likely up too, ask at once
                time.sleep(pause)
                pause = min(self.LAST_PAUSE, pause * 1.5)
        return counts

    def _have_leaders(self, names: set[str]) -> dict[str, TopicDescription]:
        """Those of ``names`` whose every partition has a leader that serves it now, as described (one metadata
        request for them alone, then one ListOffsets request per leader for those with leaders)."""
        from concurrent.futures import TimeoutError as FutureTimeout

        from confluent_kafka import KafkaException, TopicCollection

        futures = self.admin.describe_topics(
            TopicCollection(sorted(names)), include_authorized_operations=True, request_timeout=self.timeout
        )
        ready = {}
        for name, future in futures.items():
            try:
                description = future.result(timeout=self.timeout + 5)
            except (KafkaException, FutureTimeout, TimeoutError):
                continue  # not known to the broker yet, or no answer: still waiting
            partitions = description.partitions
            if partitions and all(p.leader is not None and p.leader.id >= 0 for p in partitions):
                ready[name] = TopicDescription(
                    len(partitions), described_topic_id(description), operation_names(description.authorized_operations)
                )
        return self._served(ready)

    def _served(self, described: dict[str, TopicDescription]) -> dict[str, TopicDescription]:
        """Those of ``described`` whose leaders answer for every partition. A broker publishes a new topic's
        leader in its metadata before it has created the partition's log (Kafka's metadata publisher updates
        its cache, then its replica manager): for 500 new topics on one broker, 55-96% of the partitions
        that metadata showed led still answered NOT_LEADER. The copy's first requests to them would fail and
        be retried one partition at a time. Other refusals (e.g. ACLs) count as served: the checks after the
        wait name them."""
        from concurrent.futures import TimeoutError as FutureTimeout

        from confluent_kafka import IsolationLevel, KafkaError, KafkaException, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        if not described:
            return described
        waiting = {
            KafkaError.NOT_LEADER_FOR_PARTITION,
            KafkaError.LEADER_NOT_AVAILABLE,
            KafkaError.UNKNOWN_TOPIC_OR_PART,
            KafkaError.REPLICA_NOT_AVAILABLE,
        }
        partitions = [TopicPartition(n, p) for n, d in described.items() for p in range(d.partitions)]
        unserved: set[str] = set()

        def send(batch: Sequence[Any]) -> dict[Any, Any] | None:
            try:
                return self.admin.list_offsets(
                    {tp: OffsetSpec.latest() for tp in batch},
                    isolation_level=IsolationLevel.READ_UNCOMMITTED,
                    request_timeout=self.timeout,
                )
            except KafkaException:
                return None  # asked again at the next poll

        def read(batch: Sequence[Any], futures: dict[Any, Any] | None) -> None:
            if futures is None:
                unserved.update(tp.topic for tp in batch)
                return
            for tp, future in futures.items():
                try:
                    future.result(timeout=self.timeout + 5)
                except KafkaException as exc:
                    if exc.args and exc.args[0].code() in waiting:
                        unserved.add(tp.topic)
                except (FutureTimeout, TimeoutError):
                    unserved.add(tp.topic)

        batch_size, in_flight = OffsetLookups.LOOKUP_BATCH, OffsetLookups.LOOKUP_IN_FLIGHT
        pipelined(deque(chunks(partitions, batch_size)), send, read, in_flight)
        return {n: d for n, d in described.items() if n not in unserved}


def described_topic_id(description: Any) -> str | None:
    """A described topic's id; None where the broker has none or answers with the null id."""
    topic_id = str(getattr(description, "topic_id", "") or "")
    return topic_id if topic_id and topic_id.strip("A=") and topic_id != "0" * 32 else None


def _find_coordinator(admin: Any, role: str, timeout: float) -> None:
    """Ask for the readers' group (``find_reader_coordinator``); any refusal or timeout only goes to the debug log."""
    from confluent_kafka import KafkaException

    try:
        futures = admin.describe_consumer_groups([READER_GROUP], request_timeout=timeout)
        for future in futures.values():
            future.result(timeout=timeout + 5)
    except (KafkaException, TimeoutError, ValueError) as exc:
        log.debug("Looking up the readers' group coordinator on the %s cluster: %s", role, exc)
