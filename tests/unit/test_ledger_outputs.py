"""tests/ledger_outputs: what it accepts as explained by aware report times, and what it does not."""

from __future__ import annotations

from tests.ledger_outputs import _differences, _digest, _explained

NAIVE = b'{"started_at": "2026-11-27T10:00:00", "status": "verified"}\n'
AWARE = b'{"started_at": "2026-11-27T10:00:00+00:00", "status": "verified"}\n'


def _dumps(report: bytes, history: bytes) -> dict[str, bytes]:
    return {"reports/run-1/report.json": report, "cli-history.json": history}


def test_a_report_time_gaining_its_offset_and_that_reports_digest_are_explained() -> None:
    base = _dumps(NAIVE, b'{"report_sha256": "' + _digest(NAIVE) + b'"}')
    head = _dumps(AWARE, b'{"report_sha256": "' + _digest(AWARE) + b'"}')
    assert len(_differences(base, head)) == 2
    assert _differences(base, _explained(base, head)) == []


def test_anything_else_is_not() -> None:
    other = AWARE.replace(b"verified", b"mismatch")  # a report that changed beyond its times
    base = _dumps(NAIVE, b'{"report_sha256": "' + _digest(NAIVE) + b'"}')
    head = _dumps(other, b'{"report_sha256": "' + _digest(other) + b'"}')
    assert len(_differences(base, _explained(base, head))) == 2
    aware_before = _dumps(AWARE, b"{}")  # a time that had its offset already and changed anyway
    moved = _dumps(AWARE.replace(b"10:00:00", b"11:00:00"), b"{}")
    assert len(_differences(aware_before, _explained(aware_before, moved))) == 1
    outside = _dumps(NAIVE, b'{"started_at": "2026-11-27T10:00:00"}')  # a time outside the reports
    aware_outside = _dumps(NAIVE, b'{"started_at": "2026-11-27T10:00:00+00:00"}')
    assert len(_differences(outside, _explained(outside, aware_outside))) == 1
    assert len(_differences(base, {**base, "extra.json": b"{}"})) == 1  # a file only one build writes
