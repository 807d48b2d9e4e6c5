"""kafka_migration.model.naming: collisions Kafka refuses, and the checks that no two topics share a target."""

from __future__ import annotations

import re

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.naming import name_collisions, same_cluster_exclude_hint, target_names


class TestNameCollisions:
    def test_dot_and_underscore_collide_with_an_existing_topic(self) -> None:
        assert name_collisions(["orders.eu"], ["orders_eu", "other"]) == [("orders.eu", "orders_eu")]

    def test_two_new_names_collide(self) -> None:
        assert name_collisions(["a_b", "a.b"], []) == [("a_b", "a.b")]

    def test_equal_names_and_case_are_no_collision(self) -> None:
        # Kafka topic names are case-sensitive; an existing topic of the same name is reused, not created.
        assert name_collisions(["Orders", "orders", "x.y"], ["x.y", "ORDERS"]) == []


class TestTargetNames:
    def test_every_topic_named(self) -> None:
        assert target_names("eu.{topic}", ["a", "b"]) == {"a": "eu.a", "b": "eu.b"}

    def test_a_name_too_long_names_the_topic(self) -> None:
        with pytest.raises(ConfigurationError, match=r"turns 'n{246}' into 'copy\.n{246}', which is not a legal"):
            target_names("copy.{topic}", ["n" * 246])

    def test_hint_excludes_exactly_the_copies(self) -> None:
        hint = re.compile(same_cluster_exclude_hint("copy.{topic}-v2"))
        assert hint.fullmatch("copy.orders-v2") and not hint.fullmatch("copyXorders-v2")

    def test_two_topics_onto_one_target_are_refused(self) -> None:
        # A valid template cannot do this (validate_rename_template refuses format specs); a truncating
        # one shows that planning checks it anyway.
        with pytest.raises(ConfigurationError, match=r"maps 2 source topics \(ab, ac\) onto one target topic 'a'"):
            target_names("{topic:.1}", ["ab", "ac"])
