"""The bench's access scenario (10), its pure parts: the bindings a service gets, the sync's command, the
medians, the target and the table. No broker, no timing."""

from __future__ import annotations

from pathlib import Path

from harness.bench import access
from harness.bench.access import report, tools
from harness.bench.runner import SCENARIOS, targets_met


def test_each_service_gets_ten_distinct_bindings_and_all_services_differ() -> None:
    every = [b for i in range(1_000) for b in tools.bindings_of(i)]
    assert len(every) == 10_000 == len(set(every))
    kinds = {(b[0], b[2], b[6]) for b in every}
    assert ("TOPIC", "PREFIXED", "DENY") in kinds and ("TRANSACTIONAL_ID", "PREFIXED", "ALLOW") in kinds
    assert {b[0] for b in every} == {"TOPIC", "GROUP", "TRANSACTIONAL_ID", "CLUSTER"}
    assert len({b[4] for b in every if b[4] != "*"}) == 1_000  # each service reads the audit topic from its host


def test_the_sync_command_names_the_passwords_file_never_a_password(tmp_path: Path) -> None:
    command = tools.sync_command(tmp_path / "s.json", tmp_path / "t.json", tmp_path / "pw.json", tmp_path, "--dry-run")
    assert command[command.index("access") + 1] == "sync" and command[-1] == "--dry-run"
    assert command[command.index("--credentials") + 1] == str(tmp_path / "pw.json")
    assert command[command.index("--output") + 1] == "json"


def _sample(seconds: float, verdict: str = "proven") -> dict:
    return {
        "seconds": seconds,
        "cpu_seconds": seconds / 2,
        "peak_rss_mib": 120.0,
        "load1_at_start": 1.0,
        "verdict": verdict,
        "totals": {"actions_checked": 40_000},
        "logins_proven": 1_000,
    }


def _raw(sync: list[float]) -> dict:
    return {
        "seeded": {"bindings": 10_000, "users": 1_000},
        "cluster_start_seconds": 9.0,
        "seed_seconds": 20.0,
        "cleanup_seconds": [2.0, 3.0, 4.0],
        "samples": {
            "dry_run": [_sample(5.0), _sample(6.0), _sample(7.0)],
            "sync": [_sample(s) for s in sync],
            "again": [_sample(8.0), _sample(9.0), _sample(10.0)],
        },
    }


def test_the_target_is_the_slowest_sync_under_a_minute() -> None:
    summary = report.summarize(_raw([30.0, 61.0, 40.0]), {})
    s = summary["access"]
    assert s["steps"]["sync"]["median_seconds"] == 40.0 and s["sync_seconds"] == 61.0
    assert s["all_proven"] and s["logins_proven"] == 1_000 and s["actions_checked"] == 40_000
    met = targets_met(summary, [SCENARIOS["access"]])
    assert met["access.sync_seconds"]["met"] is False and met["access.all_proven"]["met"] is True
    assert targets_met(report.summarize(_raw([30.0, 31.0, 40.0]), {}), [access])["access.sync_seconds"]["met"]


def test_the_table_shows_each_step_and_the_verdict() -> None:
    lines = report.table(report.summarize(_raw([30.0, 31.0, 40.0]), {}))
    assert lines[0].startswith("10 access 10,000 / 1,000")
    assert len([line for line in lines if "median" in line]) == 3
    assert "1,000 of 1,000" in lines[-1] and "40.00 s" in lines[-1]
    assert report.table({}) == [] and report.notes({}) == []
