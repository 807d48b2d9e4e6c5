"""The cyclic collector paused while many objects are built (model/bulk.py), and always given back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from kafka_migration.model.bulk import collector_paused


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_in_the_block_and_on_again_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_on_again_when_the_block_raises() -> None:
    with pytest.raises(ValueError, match="boom"), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_nested_block_leaves_it_to_the_outer_one() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block did not turn it on under the outer one
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_as_a_decorator_each_call_pauses_it() -> None:
    seen = []

    @collector_paused()
    def build(n: int) -> list[dict[str, int]]:
        seen.append(gc.isenabled())
        return [{"i": i} for i in range(n)]

    assert len(build(3)) == 3
    assert len(build(2)) == 2
    assert seen == [False, False]
    assert gc.isenabled()


def test_a_cycle_made_in_the_block_is_collected_after_it() -> None:
    class Node:
        pass

    with collector_paused():
        node = Node()
        node.self = node  # type: ignore[attr-defined]
        del node
    assert gc.collect() >= 1
