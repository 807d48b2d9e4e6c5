"""The schema plan: which subject versions a selection needs, references first, and what the target holds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_migration.exceptions import SchemaError
from kafka_migration.model.schemas import RegisteredSchema, SchemaFormat, SchemaReference
from kafka_migration.schemas.plan import Action, plan_subjects, render, subject_names


def _json(title: str, schema_id: int = 1, *refs: SchemaReference) -> RegisteredSchema:
    return RegisteredSchema(schema_id, SchemaFormat.JSON, json.dumps({"type": "object", "title": title}), refs)


def test_subjects_are_renamed_by_topic_name_strategy() -> None:
    assert subject_names(["orders"], "copy.{topic}") == {
        "orders-key": "copy.orders-key",
        "orders-value": "copy.orders-value",
    }


@st.composite
def catalogs(draw: st.DrawFn) -> dict[tuple[str, int], RegisteredSchema]:
    """Subjects of one version each, a topic's value or a shared one; each may reference any earlier one (a DAG)."""
    count = draw(st.integers(1, 8))
    names = [f"t{i}-value" if draw(st.booleans()) else f"s{i}" for i in range(count)]
    catalog = {}
    for i, name in enumerate(names):
        refs = sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else []
        references = tuple(SchemaReference(f"r{j}", names[j], 1) for j in refs)
        catalog[(name, 1)] = _json(f"n{i}", i + 1, *references)
    return catalog


@given(catalogs())
def test_a_reference_always_comes_before_its_user(catalog: dict[tuple[str, int], RegisteredSchema]) -> None:
    topics = sorted({s[: -len("-value")] for s, _ in catalog if s.endswith("-value")})
    plan = plan_subjects(topics, "{topic}", catalog, {})
    position = {(p.source_subject, p.version): n for n, p in enumerate(plan)}
    assert len(position) == len(plan)
    for p in plan:
        assert p.action is Action.REGISTER
        for ref in p.schema.references:
            assert position[(ref.subject, ref.version)] < position[(p.source_subject, p.version)]


def test_a_cycle_is_refused() -> None:
    a = _json("a", 1, SchemaReference("b", "b", 1))
    b = _json("b", 2, SchemaReference("a", "t-value", 1))
    with pytest.raises(SchemaError, match="cycle"):
        plan_subjects(["t"], "{topic}", {("t-value", 1): a, ("b", 1): b}, {})


def test_present_register_and_conflict_are_found_exactly() -> None:
    source = {("t-value", 1): _json("one", 1), ("t-value", 2): _json("two", 2), ("t-key", 1): _json("k", 3)}
    target = {("x.t-value", 1): _json("one", 40), ("x.t-value", 2): _json("other", 41)}
    plan = plan_subjects(["t"], "x.{topic}", source, target)
    assert [(p.target_subject, p.version, p.action, p.target_id) for p in plan] == [
        ("x.t-key", 1, Action.REGISTER, None),
        ("x.t-value", 1, Action.PRESENT, 40),
        ("x.t-value", 2, Action.CONFLICT, 41),
    ]


def test_render_lists_each_version_and_the_counts() -> None:
    source = {("t-value", 1): _json("one", 1), ("t-value", 2): _json("two", 2)}
    text = render(plan_subjects(["t"], "x.{topic}", source, {("x.t-value", 1): _json("one", 40)}))
    assert text.splitlines() == [
        "Schemas: 2 subject versions (1 present, 1 register, 0 conflict)",
        "  present  x.t-value v1 (JSON, source id 1, target id 40) <- t-value",
        "  register x.t-value v2 (JSON, source id 2) <- t-value",
    ]


@given(st.lists(st.sampled_from(["absent", "same", "other"]), min_size=1, max_size=6))
def test_conflicts_are_found_exactly(held: list[str]) -> None:
    source = {("t-value", v): _json(f"v{v}", v) for v in range(1, len(held) + 1)}
    target = {
        ("t-value", v): _json(f"v{v}" if h == "same" else "another", 100 + v)
        for v, h in enumerate(held, 1)
        if h != "absent"
    }
    expected = {"absent": Action.REGISTER, "same": Action.PRESENT, "other": Action.CONFLICT}
    assert [p.action for p in plan_subjects(["t"], "{topic}", source, target)] == [expected[h] for h in held]


def test_subjects_found_behind_record_ids_move_under_their_own_names_with_their_references_first() -> None:
    ref = SchemaReference("shop.Address", "shop.Address", 1)
    source = {
        ("orders-value", 1): _json("order", 1),
        ("shop.Address", 1): _json("address", 2),
        ("shop.Other", 1): _json("other", 3, ref),
        ("shop.Other", 2): _json("other2", 4, ref),
        ("unrelated", 1): _json("unrelated", 5),
    }
    plan = plan_subjects(["orders"], "copy.{topic}", source, {}, others=["shop.Other", "orders-value"])
    assert [(p.source_subject, p.target_subject, p.version) for p in plan] == [
        ("orders-value", "copy.orders-value", 1),  # a topic's own subject found in the records: still renamed
        ("shop.Address", "shop.Address", 1),
        ("shop.Other", "shop.Other", 1),
        ("shop.Other", "shop.Other", 2),
    ]
    assert [p.source_subject for p in plan_subjects(["orders"], "{topic}", source, {})] == ["orders-value"]
