"""kafka_migration.run.discovery: include/exclude selection and internal topics."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.run.discovery import is_internal, names_topic_explicitly, select_topics

INTERNAL = [
    "__consumer_offsets",
    "__transaction_state",
    "_schemas",
    "connect-offsets",
    "connect-configs",
    "connect-status",
    "mm2-offset-syncs.target.internal",
    "app-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog-internal",
    "orders.replica",
]


@pytest.mark.parametrize("topic", INTERNAL)
def test_internal_topics_recognised(topic: str) -> None:
    assert is_internal(topic)


@pytest.mark.parametrize("topic", ["orders", "_schemas2", "my_schemas", "connect-offsets-backup", "internal", "a_b"])
def test_user_topics_not_internal(topic: str) -> None:
    assert not is_internal(topic)


@pytest.mark.parametrize("topic", INTERNAL)
def test_internal_topics_skipped_by_default_with_reason(topic: str) -> None:
    selection = select_topics([topic, "orders"])
    assert selection.selected == ("orders",)
    assert "internal topic" in selection.skipped[topic]
    assert "include pattern" in selection.skipped[topic]


@pytest.mark.parametrize("topic", ["__consumer_offsets", "_schemas", "connect-offsets"])
def test_internal_topic_selected_when_named_literally(topic: str) -> None:
    selection = select_topics([topic, "orders", "payments"], include=f"orders|{topic}")
    assert selection.selected == tuple(sorted(["orders", topic]))
    assert selection.skipped == {}


def test_internal_topic_named_with_regex_escapes_is_selected() -> None:
    selection = select_topics(["mm2.internal", "orders"], include=r"mm2\.internal")
    assert selection.selected == ("mm2.internal",)


def test_wildcard_matching_internal_topic_does_not_select_it() -> None:
    selection = select_topics(["__consumer_offsets", "__transaction_state"], include="__.*")
    assert selection.selected == ()
    assert set(selection.skipped) == {"__consumer_offsets", "__transaction_state"}


def test_exclude_wins_over_include() -> None:
    selection = select_topics(["orders", "orders.dlq"], include="orders.*", exclude=r".*\.dlq")
    assert selection.selected == ("orders",)
    assert selection.skipped == {"orders.dlq": "matches the exclude pattern"}


def test_exclude_wins_over_literally_named_internal_topic() -> None:
    selection = select_topics(["_schemas"], include="_schemas", exclude="_schemas")
    assert selection.selected == ()
    assert selection.skipped == {"_schemas": "matches the exclude pattern"}


def test_include_is_a_full_match_not_a_search() -> None:
    selection = select_topics(["orders", "orders-eu", "xorders", "eu.orders"], include="orders")
    assert selection.selected == ("orders",)
    assert selection.skipped == {}  # topics out of scope are not reported


def test_exclude_is_a_full_match_not_a_search() -> None:
    selection = select_topics(["orders", "orders-old"], exclude="old")
    assert selection.selected == ("orders", "orders-old")


def test_selection_sorted_and_deduplicated() -> None:
    assert select_topics(["b", "a", "c", "a"]).selected == ("a", "b", "c")


def test_nothing_matches() -> None:
    selection = select_topics(["orders"], include="payments")
    assert selection.selected == () and selection.skipped == {}


@pytest.mark.parametrize(("kind", "kwargs"), [("include", {"include": "a["}), ("exclude", {"exclude": "a["})])
def test_invalid_pattern_names_kind_and_pattern(kind: str, kwargs: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError, match=rf"{kind} pattern 'a\[' is not a valid regular expression"):
        select_topics(["a"], **kwargs)


def test_names_topic_explicitly_ignores_escapes() -> None:
    assert names_topic_explicitly(r"__consumer_offsets|connect\-offsets", "connect-offsets")
    assert not names_topic_explicitly(".*", "_schemas")
