"""run.topics.create_target_topics releasing target topics to the copy as a broker brings them up (a simulated
broker on a fake clock: the real one is in tests/integration/test_planner.py and the scale bench)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest

from kafka_migration.exceptions import AuthorizationError
from kafka_migration.kafka import creation
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import TopicDescription
from kafka_migration.run.topics import create_target_topics
from tests.unit.factories import migration_plan, topic_plan

ALLOWED = frozenset({"Read", "Write", "Describe"})


class _Broker(KafkaCluster):
    """Creates topics on request and brings them up ``rate`` per second of a fake clock, in creation order;
    ``denied`` topics come up without Write for this principal."""

    def __init__(self, rate: float, denied: frozenset[str] = frozenset()) -> None:
        super().__init__(ClusterConfig("target", {"bootstrap.servers": "b:9092"}))
        self.now = 0.0
        self.rate, self.denied = rate, denied
        self.order: list[str] = []

    def find_reader_coordinator(self, timeout: float = 10.0) -> None:
        pass

    def create_topics(self, topics: Iterable[tuple[str, int, int, Mapping[str, str]]]) -> dict[str, bool]:
        names = [name for name, _, _, _ in topics]
        self.order += names
        return dict.fromkeys(names, True)

    def up(self) -> list[str]:
        return self.order[: int(self.now * self.rate)]

    def _have_leaders(self, names: set[str]) -> dict[str, TopicDescription]:
        up = set(self.up())
        return {
            n: TopicDescription(1, f"id-{n}", ALLOWED - {"Write"} if n in self.denied else ALLOWED)
            for n in names
            if n in up
        }


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[_Broker]:
    """The fake clock of the broker put in the list (creation's sleeps advance it)."""
    brokers: list[_Broker] = []

    def sleep(seconds: float) -> None:
        brokers[0].now += seconds

    monkeypatch.setattr(creation.time, "sleep", sleep)
    monkeypatch.setattr(creation.time, "monotonic", lambda: brokers[0].now)
    return brokers


def test_topics_are_released_in_growing_prefixes_of_the_run_order_only_once_up(clock: list[_Broker]) -> None:
    # Bigger topics first in the run order: creation and release follow it, not the plan's order.
    plan = migration_plan(*(topic_plan(f"t.{i:04d}", spans=(10 + (i % 7),)) for i in range(1200)))
    order = [t.target_topic for t in plan.run_order()]
    broker = _Broker(rate=300.0)  # 1,200 topics up in 4 s
    clock.append(broker)
    released: list[tuple[int, list[str]]] = []
    created = create_target_topics(plan, broker, lambda n: released.append((n, broker.up())))
    assert broker.order == order
    counts = [n for n, _ in released]
    assert counts == sorted(set(counts)) and counts[-1] == len(order)
    assert counts[0] <= broker.FIRST_WINDOW  # the copy could start long before the last topic came up
    for n, up in released:  # never ahead of the broker
        assert set(order[:n]) <= set(up)
    assert created.topic_ids["t.0042"] == "id-t.0042" and len(created.names) == 1200


def test_a_topic_refused_after_others_were_released_says_their_copy_stopped(clock: list[_Broker]) -> None:
    plan = migration_plan(*(topic_plan(f"t.{i:04d}") for i in range(1000)))
    broker = _Broker(rate=250.0, denied=frozenset({"t.0900"}))
    clock.append(broker)
    released: list[int] = []
    with pytest.raises(AuthorizationError) as refused:
        create_target_topics(plan, broker, released.append)
    assert released and max(released) <= 900  # nothing from the refused topic on was released
    message = str(refused.value)
    assert "Write on topic t.0900 (to copy into them)" in message
    # The topics of the refused batch, from the first not released on, ten named and the rest counted.
    assert f"The target topic(s) t.{max(released):04d}, t.{max(released) + 1:04d}, " in message
    assert " more were created, empty; nothing was copied to them (the copy of the " in message
    assert f"the copy of the {max(released):,} topics before them had started, and stopped with the run" in message


def test_a_refusal_before_any_release_says_nothing_was_copied(clock: list[_Broker]) -> None:
    plan = migration_plan(*(topic_plan(f"t.{i:04d}") for i in range(10)))
    broker = _Broker(rate=1000.0, denied=frozenset({"t.0000"}))
    clock.append(broker)
    released: list[int] = []
    with pytest.raises(
        AuthorizationError, match=r"were created, empty; nothing was copied to them\. The next run"
    ) as e:
        create_target_topics(plan, broker, released.append)
    assert released == [] and "had started" not in str(e.value)
