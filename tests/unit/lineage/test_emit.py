"""Sending: off without openlineage-python's configuration, its standard configuration when given, and an
endpoint that cannot be reached costs one warning line and never an exception."""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_migration.lineage import emit
from kafka_migration.model.plan import MigrationPlan
from tests.unit.ledger.test_ledger import plan
from tests.unit.lineage.schemas import validate_event


@pytest.fixture
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No OpenLineage configuration anywhere: no variables, no openlineage.yml here or in ~/.openlineage."""
    for key in list(os.environ):
        if key.startswith("OPENLINEAGE"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    yield tmp_path


def _plan() -> MigrationPlan:
    return plan("run-e", 0, 10, 0)


def test_off_by_default_and_on_with_each_standard_setting(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not emit.configured()
    lineage = emit.Lineage.from_environment()
    assert lineage.sink is None  # nothing to send to: no client made
    lineage.run_started(_plan())  # and nothing built
    (no_config / "openlineage.yml").write_text("transport:\n  type: console\n")
    assert emit.configured()
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    assert not emit.configured()
    monkeypatch.delenv("OPENLINEAGE_DISABLED")
    (no_config / "openlineage.yml").unlink()
    for key, value in (
        ("OPENLINEAGE_URL", "http://lineage:5000"),
        ("OPENLINEAGE_CONFIG", str(no_config / "elsewhere.yml")),
        ("OPENLINEAGE__TRANSPORT__TYPE", "console"),
    ):
        if key == "OPENLINEAGE_CONFIG":
            (no_config / "elsewhere.yml").write_text("transport:\n  type: console\n")
        monkeypatch.setenv(key, value)
        assert emit.configured(), key
        monkeypatch.delenv(key)


def test_the_file_transport_receives_valid_events(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = no_config / "events.jsonl"
    (no_config / "openlineage.yml").write_text(f"transport:\n  type: file\n  log_file_path: {events}\n  append: true\n")
    monkeypatch.setenv("OPENLINEAGE_NAMESPACE", "platform")
    emit.Lineage.from_environment().run_started(_plan())
    (event,) = [json.loads(line) for line in events.read_text().splitlines()]
    validate_event(event)
    assert event["eventType"] == "START" and event["job"]["namespace"] == "platform"


def test_an_unreachable_endpoint_is_one_warning(
    no_config: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (no_config / "openlineage.yml").write_text(
        f"transport:\n  type: http\n  url: http://127.0.0.1:{port}\n  timeout: 1\n  retry:\n    total: 0\n"
    )
    lineage = emit.Lineage.from_environment()  # one command's: its START and its COMPLETE share the sink
    with caplog.at_level(logging.WARNING, logger="kafka_migration.lineage.emit"):
        lineage.run_started(_plan())
        lineage.run_started(_plan())  # the sink is off after the first failure: no second attempt, no second line
    (record,) = [r for r in caplog.records if r.name == "kafka_migration.lineage.emit"]
    assert "could not send the START event" in record.getMessage()


def test_a_bad_configuration_is_one_warning(no_config: Path, caplog: pytest.LogCaptureFixture) -> None:
    (no_config / "openlineage.yml").write_text("transport:\n  type: no-such-transport\n")
    with caplog.at_level(logging.WARNING, logger="kafka_migration.lineage.emit"):
        emit.Lineage.from_environment().run_started(_plan())
    assert len([r for r in caplog.records if r.name == "kafka_migration.lineage.emit"]) == 1


def test_each_lineage_sends_to_its_own_sink_and_none_is_global() -> None:
    """Two commands (or an Airflow task beside a CLI in one test process) do not see each other's events: each
    passes its own Lineage, and lineage/emit holds no route of its own."""
    first, second = emit.Collector(), emit.Collector()
    emit.Lineage(first).run_started(_plan())
    emit.Lineage(second).run_started(plan("run-f", 0, 10, 0))
    assert [e.run.facets["kafkaMigration"].runId for e in first.events] == ["run-e"]
    assert [e.run.facets["kafkaMigration"].runId for e in second.events] == ["run-f"]
    emit.OFF.run_started(_plan())  # nowhere: nothing built, nothing kept
    assert emit.OFF.sink is None
    assert not [name for name in vars(emit) if name in ("route", "_routed", "_client_sink")]


def test_without_lineage_configured_a_run_never_imports_the_openlineage_client(tmp_path: Path) -> None:
    # In a fresh interpreter: the client's import cost a run's start-up 0.7 s of CPU that planning needs.
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from kafka_migration.lineage import emit\n"
        "from tests.unit.ledger.test_ledger import plan\n"
        "lineage = emit.Lineage.from_environment()\n"
        "lineage.run_started(plan('run-e', 0, 10, 0))\n"
        "lineage.run_ended(None, None)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('openlineage', 'kafka_migration.lineage.events'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")} | {"HOME": str(tmp_path)}
    root = Path(__file__).resolve().parents[3]
    env["PYTHONPATH"] = str(root)
    out = subprocess.run(
        [sys.executable, "-c", script], check=False, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
