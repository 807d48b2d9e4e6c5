"""Sending lineage: openlineage-python's client with its standard configuration, off unless configured.

Configured means what openlineage-python reads: ``OPENLINEAGE_URL`` (HTTP), a file named by
``OPENLINEAGE_CONFIG``, ``openlineage.yml`` in the working directory or in ``~/.openlineage/``, or
``OPENLINEAGE__TRANSPORT__...`` variables; ``OPENLINEAGE_DISABLED=true`` turns it off. Without any of them
nothing is built or sent (no console output either). An event that cannot be sent (an unreachable endpoint, a
bad configuration) costs one warning line, after which this process sends no more: lineage never changes a
run's verdict or exit code.

Inside Airflow the provider (apache-airflow-providers-openlineage) sends, so that a DAG run is not reported
twice: the Airflow glue routes the events here to a ``Collector`` (``route``), and the operator that closes the
run reports what was collected as its OperatorLineage (kafka_migration/airflow/lineage.py).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from kafka_migration.lineage.moves import CutoverLineage

log = logging.getLogger(__name__)


class Sink(Protocol):
    def send(self, event: Any) -> None: ...


def configured() -> bool:
    """Whether openlineage-python's standard configuration asks for events (and does not disable them)."""
    if os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true":
        return False
    if os.environ.get("OPENLINEAGE_URL"):
        return True
    if any(k.startswith("OPENLINEAGE__TRANSPORT") and v for k, v in os.environ.items()):
        return True
    files = [os.environ.get("OPENLINEAGE_CONFIG"), "openlineage.yml", str(Path("~/.openlineage/openlineage.yml"))]
    return any(f and Path(f).expanduser().is_file() for f in files)


def job_namespace() -> str:
    """The jobs' namespace: OPENLINEAGE_NAMESPACE, as openlineage-python's integrations read it."""
    from kafka_migration.lineage.naming import JOB_NAMESPACE

    return os.environ.get("OPENLINEAGE_NAMESPACE") or JOB_NAMESPACE


class ClientSink:
    """openlineage-python's ``OpenLineageClient()``, made on the first event; the first failure turns it off."""

    def __init__(self) -> None:
        self._client: Any = None
        self._off = False

    def send(self, event: Any) -> None:
        if self._off:
            return
        try:
            if self._client is None:
                from openlineage.client import OpenLineageClient

                self._client = OpenLineageClient()
            self._client.emit(event)
        except Exception as exc:
            self._off = True
            first = str(exc).splitlines()[0] if str(exc) else ""
            log.warning(
                "OpenLineage: could not send the %s event of job %s (%s%s); no more lineage from this process. "
                "The run's verdict does not depend on it; check OPENLINEAGE_URL or the openlineage.yml transport.",
                getattr(event.eventType, "value", event.eventType),
                event.job.name,
                type(exc).__name__,
                f": {first}" if first else "",
            )


class Collector:
    """Keeps the events instead of sending them (inside Airflow, where the provider sends)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def send(self, event: Any) -> None:
        self.events.append(event)

    def last(self) -> Any | None:
        return self.events[-1] if self.events else None

    def clear(self) -> None:
        self.events.clear()


_routed: Sink | None = None
_client_sink: ClientSink | None = None


def route(sink: Sink | None) -> None:
    """Send this process's events to ``sink`` (None: back to the client, when configured)."""
    global _routed  # noqa: PLW0603
    _routed = sink


def _sink() -> Sink | None:
    global _client_sink  # noqa: PLW0603
    if _routed is not None:
        return _routed
    if not configured():
        return None
    if _client_sink is None:
        _client_sink = ClientSink()
    return _client_sink


def send(build: Callable[[], Iterable[Any]]) -> None:
    """Build the events (only when something takes them) and send them; never raises."""
    sink = _sink()
    if sink is None:
        return
    try:
        events = list(build())
    except Exception as exc:
        log.warning("OpenLineage: could not build a lineage event (%s: %s); nothing sent.", type(exc).__name__, exc)
        return
    for event in events:
        sink.send(event)


def _events() -> ModuleType:
    """The event builders, imported only when something takes the events: they import openlineage-python's
    client, 0.7 s of a run's start-up on the CPU its planning needs."""
    from kafka_migration.lineage import events

    return events


def now() -> str:
    return datetime.now(UTC).isoformat()


# -- what the capabilities call ------------------------------------------------------------------------------


def run_started(plan: Any) -> None:
    """A run's START, once it is planned and open in the ledger (not for a dry run: nothing moves)."""
    if plan.options.get("dry_run"):
        return
    send(lambda: [_events().run_start(plan, job_namespace())])


def run_ended(report_file: Path | None, sha256: str | None, error: str | None = None) -> None:
    """A run's COMPLETE or FAIL, built from its report.json (read only when something takes the event); nothing
    for a dry run or when no report could be written."""
    if report_file is None:
        return

    def build() -> list[Any]:
        report = json.loads(Path(report_file).read_bytes())
        if report["scope"].get("dry_run"):
            return []
        return [_events().run_end(report, sha256, job_namespace(), error=error)]

    send(build)


def group_sync_done(result: Any, source: str, target: str, started: str) -> None:
    """A group sync that wrote (not a dry run): its START and COMPLETE or FAIL with the translated positions."""
    if result.dry_run:
        return
    send(lambda: _events().group_sync_events(result, source, target, started, job_namespace()))


def cutover_done(cutover: CutoverLineage, group_rows: Callable[[], Sequence[Mapping[str, Any]]]) -> None:
    """A cutover's or failback's START and COMPLETE or FAIL, with its ends and the groups' start offsets
    (``group_rows`` reads them, only when something takes the events)."""
    send(lambda: _events().cutover_events(cutover, group_rows(), job_namespace()))
