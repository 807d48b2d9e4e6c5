"""Sending lineage: openlineage-python's client with its standard configuration, off unless configured.

Configured means what openlineage-python reads: ``OPENLINEAGE_URL`` (HTTP), a file named by
``OPENLINEAGE_CONFIG``, ``openlineage.yml`` in the working directory or in ``~/.openlineage/``, or
``OPENLINEAGE__TRANSPORT__...`` variables; ``OPENLINEAGE_DISABLED=true`` turns it off. Without any of them
nothing is built or sent (no console output either). An event that cannot be sent (an unreachable endpoint, a
bad configuration) costs one warning line, after which that command's ``Lineage`` sends no more: lineage never
changes a run's verdict or exit code.

Inside Airflow the provider (apache-airflow-providers-openlineage) sends, so that a DAG run is not reported
twice: the Airflow glue passes a ``Lineage`` whose sink collects the events, and the operator that closes the
run reports what was collected as its OperatorLineage (kafka_migration/airflow/lineage.py). Nothing here is
global: each command or task makes its ``Lineage`` and passes it on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kafka_migration.lineage.moves import CutoverLineage
from kafka_migration.model.report import SignoffReport

if TYPE_CHECKING:
    from kafka_migration.model.groups import GroupSyncResult
    from kafka_migration.model.plan import MigrationPlan

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


def now() -> str:
    return datetime.now(UTC).isoformat()


# -- what the capabilities call ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lineage:
    """Where a command's or a task's lineage goes: ``sink``, or nowhere (None). Made once by the front door
    (``from_environment`` for the CLI, the provider's sink inside Airflow: airflow/lineage.py) and passed to
    what reports a run, a sync or a cutover, so that a START and its COMPLETE share one sink (one that failed
    sends nothing more)."""

    sink: Sink | None = None

    @classmethod
    def from_environment(cls) -> Lineage:
        """openlineage-python's client when its standard configuration asks for events (``configured``); else
        nowhere, and nothing is built."""
        return cls(ClientSink() if configured() else None)

    def send(self, build: Callable[[], Iterable[Any]]) -> None:
        """Build the events (only when something takes them) and send them; never raises."""
        if self.sink is None:
            return
        try:
            events = list(build())
        except Exception as exc:
            log.warning("OpenLineage: could not build a lineage event (%s: %s); nothing sent.", type(exc).__name__, exc)
            return
        for event in events:
            self.sink.send(event)

    def run_started(self, plan: MigrationPlan) -> None:
        """A run's START, once it is planned and open in the ledger (not for a dry run: nothing moves)."""
        if self.sink is None or plan.options.get("dry_run"):
            return  # the builders import openlineage-python's client: 0.7 s of a run's start-up, for nothing
        from kafka_migration.lineage.events import run_start

        self.send(lambda: [run_start(plan, job_namespace())])

    def run_ended(self, report_file: Path | None, sha256: str | None, error: str | None = None) -> None:
        """A run's COMPLETE or FAIL, built from its report.json (read only when something takes the event);
        nothing for a dry run or when no report could be written."""
        if self.sink is None or report_file is None:
            return
        from kafka_migration.lineage.events import run_end

        def build() -> list[Any]:
            report = SignoffReport.read(report_file)
            return [] if report.scope.dry_run else [run_end(report, sha256, job_namespace(), error=error)]

        self.send(build)

    def group_sync_done(self, result: GroupSyncResult, source: str, target: str, started: str) -> None:
        """A group sync that wrote (not a dry run): its START and COMPLETE or FAIL with the translated positions."""
        if self.sink is None or result.dry_run:
            return
        from kafka_migration.lineage.events import group_sync_events

        self.send(lambda: group_sync_events(result, source, target, started, job_namespace()))

    def cutover_done(self, cutover: CutoverLineage, group_rows: Callable[[], Sequence[Mapping[str, Any]]]) -> None:
        """A cutover's or failback's START and COMPLETE or FAIL, with its ends and the groups' start offsets
        (``group_rows`` reads them, only when something takes the events)."""
        if self.sink is None:
            return
        from kafka_migration.lineage.events import cutover_events

        self.send(lambda: cutover_events(cutover, group_rows(), job_namespace()))


OFF = Lineage()  # nowhere: for what reports nothing (a dry run's callers, tests)
