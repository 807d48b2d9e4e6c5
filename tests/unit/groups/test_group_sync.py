"""Group offset sync rules on plain data: translation through verified segments, write/keep/skip, the verdict."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.groups.rules import (
    Routes,
    conclude,
    judge_proof,
    plan_group,
    render_sync,
    select_groups,
    verdict_line,
)
from kafka_migration.model.groups import (
    BOTH_AT_END,
    DIFFERENT,
    KEEP,
    KEPT_AHEAD,
    NONE,
    NOT_PROVEN,
    NOT_TRANSLATABLE,
    PENDING,
    SAME_RECORD,
    SKIP,
    SYNCED,
    TARGET_ACTIVE,
    UNCHANGED,
    WOULD_SYNC,
    WRITE,
    WRITE_FAILED,
    GroupSyncResult,
)
from kafka_migration.model.offsets import AT_END, BEFORE, BEYOND, GAP, WITHIN, MappedSegment, translate_position
from kafka_migration.model.state import CommittedOffset, ConsumerGroup
from tests.conftest import require_module

# Source offsets 10..29 copied in run r1 to target 0..: records at 10,11,12, a transaction marker at 13,
# records 14..19, then (run r2) 20..29 with a marker at 25.
R1 = MappedSegment("r1", 10, 20, 0, 9, ((10, 0), (14, 3)))
R2 = MappedSegment("r2", 20, 30, 9, 18, ((20, 9), (26, 14)))


@pytest.mark.parametrize(
    ("offset", "kind", "target", "run", "proof_from"),
    [
        (10, WITHIN, 0, "r1", 10),  # the first copied record
        (12, WITHIN, 2, "r1", 12),
        (13, WITHIN, 3, "r1", 13),  # on the marker: the next record, 14 -> 3
        (14, WITHIN, 3, "r1", 14),  # just after the marker
        (20, WITHIN, 9, "r2", 20),  # where the second run starts
        (25, WITHIN, 14, "r2", 25),
        (30, AT_END, 18, "r2", 30),  # the end of the verified range: the target end
        (31, BEYOND, None, None, 31),
        (3, BEFORE, 0, "r1", 10),  # before the copy started (latest / a time / expired): the first record
    ],
)
def test_translate_position(offset: int, kind: str, target: int | None, run: str | None, proof_from: int) -> None:
    t = translate_position([R2, R1], offset)
    assert (t.kind, t.target_offset, t.run_id, t.proof_source_offset) == (kind, target, run, proof_from)
    assert (t.source_limit, t.target_limit) == (30, 18)


def test_translate_position_gap_and_empty_segments() -> None:
    expired = MappedSegment("r2", 25, 30, 9, 14, ((25, 9),))  # 20..24 expired between the runs (--allow-gaps)
    t = translate_position([R1, expired], 22)
    assert (t.kind, t.target_offset, t.proof_source_offset) == (GAP, 9, 25)
    nothing_yet = MappedSegment("r1", 100, 100, 0, 0)  # started at latest, nothing copied yet
    assert translate_position([nothing_yet], 40).target_offset == 0
    assert translate_position([nothing_yet], 100).kind == AT_END
    assert translate_position([nothing_yet], 101).kind == BEYOND


def group(offsets: dict[tuple[str, int], int], state: str = "EMPTY", members: int = 0, exists: bool = True):  # type: ignore[no-untyped-def]
    return ConsumerGroup(
        "g", state, members, {k: CommittedOffset(v, "meta" if v == 12 else None) for k, v in offsets.items()}, exists
    )


SEGMENTS = {("orders", 0, "src.orders"): [R1, R2], ("orders", 1, "src.orders"): [R1]}
ROUTES = Routes.from_keys(SEGMENTS)


def plan(source, target, allow_rewind=False):  # type: ignore[no-untyped-def]
    return plan_group(source, target, ROUTES, SEGMENTS, {("orders", 0): 40, ("orders", 1): 20}, allow_rewind)


def test_plan_writes_translated_offsets_with_metadata_and_ignores_other_topics() -> None:
    g = plan(group({("orders", 0): 12, ("orders", 1): 25, ("other", 0): 5}), group({}, exists=False))
    first, second = g.partitions
    assert (first.action, first.outcome, first.target_topic, first.target_offset, first.lag) == (
        WRITE,
        PENDING,
        "src.orders",
        2,
        28,
    )
    assert second.outcome == NOT_TRANSLATABLE and "beyond the verified copy (it ends before offset 20)" in second.reason
    assert g.ignored_topics == ("other",)
    assert g.writes() == {("src.orders", 0): CommittedOffset(2, "meta")}  # metadata travels
    assert g.target_state == "NONE" and not g.target_active


def test_active_target_group_is_never_touched_and_an_active_source_is_flagged() -> None:
    g = plan(group({("orders", 0): 12}), group({}, state="STABLE"))
    (p,) = g.partitions
    assert (p.action, p.outcome) == (SKIP, TARGET_ACTIVE) and g.writes() == {}
    g = plan(group({("orders", 0): 12}, state="STABLE"), group({}))
    assert g.source_active and "still active on the source" in g.partitions[0].reason
    assert g.partitions[0].action == WRITE


def test_never_rewind_unless_allowed_and_equal_is_a_no_op() -> None:
    ahead = group({("src.orders", 0): 5})
    (p,) = plan(group({("orders", 0): 12}), ahead).partitions
    assert (p.action, p.outcome, p.previous_target_offset) == (KEEP, KEPT_AHEAD, 5)
    assert "--allow-rewind" in p.reason
    (p,) = plan(group({("orders", 0): 12}), ahead, allow_rewind=True).partitions
    assert p.action == WRITE and "moved back from 5" in p.reason
    (p,) = plan(group({("orders", 0): 12}), group({("src.orders", 0): 2})).partitions
    assert p.action == NONE


def test_ambiguous_target_topic_and_missing_partition_are_not_translatable() -> None:
    routes = Routes.from_keys([("orders", 0, "a.orders"), ("orders", 0, "b.orders")])
    g = plan_group(group({("orders", 0): 12, ("orders", 1): 1}), group({}), routes, {}, {})
    assert all(p.outcome == NOT_TRANSLATABLE for p in g.partitions)
    assert "several target topics on this cluster (a.orders, b.orders)" in g.partitions[0].reason
    g = plan(group({("orders", 2): 1}), group({}))
    assert "orders[2] has no verified copy" in g.partitions[0].reason


def test_proof_and_conclusion() -> None:
    assert judge_proof(b"x", b"x") == SAME_RECORD
    assert judge_proof(None, None) == BOTH_AT_END
    assert judge_proof(b"x", b"y") == DIFFERENT and judge_proof(b"x", None) == DIFFERENT
    (p,) = plan(group({("orders", 0): 12}), group({})).partitions
    assert conclude(p, SAME_RECORD, dry_run=False).outcome == SYNCED
    assert conclude(p, SAME_RECORD, dry_run=True).outcome == WOULD_SYNC
    bad = conclude(p, DIFFERENT, dry_run=False)
    assert bad.outcome == NOT_PROVEN and "not the record at source offset 12" in bad.reason
    assert conclude(p, None, False, "refused").outcome == WRITE_FAILED
    (same,) = plan(group({("orders", 0): 12}), group({("src.orders", 0): 2})).partitions
    assert conclude(same, BOTH_AT_END, dry_run=False).outcome == UNCHANGED


def test_result_exit_code_and_rendering() -> None:
    g = plan(group({("orders", 0): 12, ("orders", 1): 25}), group({}))
    done = type(g)(**{**g.__dict__, "partitions": tuple(conclude(p, SAME_RECORD, False) for p in g.partitions)})
    result = GroupSyncResult("s1", None, "src", "tgt", False, False, (done,))
    assert result.exit_code == 1 and [p.source_offset for p in result.failures()] == [25]
    assert result.target_offsets() == {"g": {("src.orders", 0): 2}}
    assert "group g orders[1] (not_translatable)" in verdict_line(result)
    text = render_sync(result)
    assert "src.orders[0]" in text and "beyond the verified copy" in text
    ok = GroupSyncResult("s1", None, "src", "tgt", False, False, ())
    assert ok.exit_code == 0 and result.to_dict()["groups"][0]["partitions"][0]["outcome"] == SYNCED


def test_group_selection_is_a_full_match() -> None:
    ids = ["orders-app", "orders-app-test", "billing"]
    assert select_groups(ids, "orders-.*", "orders-.*-test") == ["orders-app"]
    assert select_groups(ids, "orders", None) == []
    with pytest.raises(ConfigurationError, match="Param groups\\) pattern '\\(' is not a valid regular"):
        select_groups(ids, "(", None)


def test_dag_group_params_are_checked_before_the_run_copies_anything() -> None:
    require_module("airflow")
    from kafka_migration.airflow.group_tasks import check_group_params

    with pytest.raises(ConfigurationError, match=r"Param groups\) pattern .\(. is not a valid"):
        check_group_params({"sync_groups": False, "groups": "("})  # bad input even while off
    check_group_params({"sync_groups": True, "groups": "orders-.*", "exclude_groups": ""})
    with pytest.raises(ConfigurationError, match="Param exclude_groups\\) pattern '\\[' is not a valid"):
        check_group_params({"sync_groups": True, "groups": ".*", "exclude_groups": "["})


def test_the_summary_syncs_groups_only_when_asked_and_reports_a_failure_after_closing_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The DAG's summary runs the group sync (no task of its own: a skipped task costs a process, and
    Airflow may notice its end up to 5 s late); a failed sync is raised only once the run is recorded."""
    require_module("airflow")
    from kafka_migration.airflow import group_tasks

    calls: list[dict[str, object]] = []

    def failing(params: dict[str, object], planned: dict[str, object]) -> dict[str, object]:
        calls.append(params)
        raise RuntimeError("group orders-app: 1 partition not proven")

    monkeypatch.setattr(group_tasks, "sync_consumer_groups", failing)
    off = group_tasks.SummaryGroupSync(None, {"run_id": "r"})
    off.run()
    off.skip("not every topic is verified")
    off.check()
    assert calls == []

    on = group_tasks.SummaryGroupSync({"sync_groups": True}, {"run_id": "r"})
    on.run()  # the failure is kept: the summary still closes the run and writes its report
    assert calls == [{"sync_groups": True}]
    with pytest.raises(RuntimeError, match="consumer group sync did not complete: group orders-app: 1 partition"):
        on.check()

    monkeypatch.setattr(group_tasks, "sync_consumer_groups", lambda params, planned: {"groups": 2, "partitions": 5})
    synced = group_tasks.SummaryGroupSync({"sync_groups": True}, {"run_id": "r"})
    synced.run()
    synced.check()
    assert synced.result == {"groups": 2, "partitions": 5}
