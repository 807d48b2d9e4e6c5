"""A run's evidence, recorded in one place whichever way the run went: the CLI's whole run (run/pipeline.py)
and every DAG's summary task (airflow/run_tasks.py) call these functions, so the evidence users sign reads the
same whoever started the run.

A run's evidence is every topic's copy and verification outcome with the checkpoints and offset maps of its
verified partitions (the ledger's segments), the run's status, the records it copied, its closing message and
its timings, and the sign-off report written from what was stored. Storing the topics and closing the run are
two steps, because a DAG syncs its consumer groups between them (through the offset map just stored).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_migration.exceptions import LedgerUnavailableError
from kafka_migration.ledger import LedgerError
from kafka_migration.ledger.urls import redact_url
from kafka_migration.lineage.emit import Lineage
from kafka_migration.model.bulk import collector_paused
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import TopicOutcome
from kafka_migration.model.timings import RunTimings
from kafka_migration.reports.signoff import ReportFiles, generate_report
from kafka_migration.reports.summary import TopicSummary, all_verified, run_status, summarize, with_losses
from kafka_migration.run.losses import unaccepted_message

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

log = logging.getLogger(__name__)

NOTHING_NEW = "nothing new on the source since the last verified run"
DRY_RUN = "dry run: nothing created or copied"


@dataclass(frozen=True)
class RunEvidence:
    """What a run found out: its plan, each topic's copy and verification outcome (by source topic) and the ids
    of the target topics it created after planning (the plan holds the others')."""

    plan: MigrationPlan
    copy: Mapping[str, TopicOutcome] = field(default_factory=dict)
    verify: Mapping[str, TopicOutcome] = field(default_factory=dict)
    target_topic_ids: Mapping[str, str] = field(default_factory=dict)

    @property
    def nothing_new(self) -> bool:
        """Nothing to copy and no topic to create: no Spark work, the run only records that it looked."""
        return self.plan.offset_span == 0 and not any(t.create for t in self.plan.topics)

    @cached_property
    def rows(self) -> list[TopicSummary]:
        """Each topic's summary, worked out once: the status, the count and the verdict all read it."""
        return summarize(self.plan, self.copy, self.verify)

    @property
    def copied(self) -> int:
        return sum(r.copied or 0 for r in self.rows) if not self.nothing_new else 0

    @property
    def topics_verified(self) -> bool:
        """Every topic verified (or nothing new), whatever the target lost earlier."""
        return self.nothing_new or all_verified(self.rows)

    @property
    def verified(self) -> bool:
        return not self.plan.unaccepted_losses and self.topics_verified

    @property
    def status(self) -> str:
        """The run's status as the ledger records it (``target_lost`` when the target lost verified records)."""
        return with_losses("up_to_date" if self.nothing_new else run_status(self.rows), self.plan)

    @property
    def message(self) -> str | None:
        """The run's closing message in the ledger: the loss it found, or that there was nothing new."""
        lost = unaccepted_message(self.plan)
        return lost or (NOTHING_NEW if self.nothing_new else None)


@collector_paused()
def store_topics(ledger: Ledger, evidence: RunEvidence) -> None:
    """Store every topic's outcome; advance the checkpoints of verified partitions with their offset maps.

    A ledger that cannot store the evidence means the run is not verified: LedgerUnavailableError says so,
    and that running again resumes the run's partitions without copying anything twice.
    """
    plan = evidence.plan
    try:
        if evidence.nothing_new:
            ledger.record_nothing_new(plan)
            return
        ids = evidence.target_topic_ids
        ledger.record_topics(
            plan,
            [
                (t, evidence.copy.get(t.source_topic), evidence.verify.get(t.source_topic), ids.get(t.target_topic))
                for t in plan.topics
            ],
        )
    except LedgerError as exc:
        raise LedgerUnavailableError(
            f"Run {plan.run_id} copied and verified in Spark, but its evidence could not be stored in the ledger "
            f"at {redact_url(str(ledger.engine.url))} ({type(exc).__name__}: {str(exc).splitlines()[0]}). It is NOT "
            "reported verified and no checkpoint moved. Run the same command again (or trigger the DAG again) once "
            "the ledger is back: the new run resumes these partitions, finds the records already on the target "
            "(copying nothing twice), verifies them and records the evidence."
        ) from None


def close_run(
    ledger: Ledger,
    evidence: RunEvidence,
    timings: RunTimings | None,
    reports_dir: Path,
    lineage: Lineage | None = None,
) -> ReportFiles:
    """Close the run in the ledger (status, records copied, message, timings) and write its sign-off report; its
    lineage COMPLETE or FAIL goes to ``lineage`` (None: openlineage-python's standard configuration)."""
    plan = evidence.plan
    ledger.finish_run(plan.run_id, evidence.status, evidence.copied, evidence.message, timings=timings)
    files = generate_report(ledger, plan.run_id, reports_dir)
    (lineage or Lineage.from_environment()).run_ended(files.json, files.sha256)  # from the report just written
    return files


def record_run(
    ledger: Ledger,
    evidence: RunEvidence,
    timings: RunTimings | None,
    reports_dir: Path,
    before_close: Callable[[RunEvidence], None] | None = None,
    lineage: Lineage | None = None,
) -> ReportFiles:
    """The whole record of a run that reached its verdict: its topics, then ``before_close`` (a DAG's group
    sync), then the run closed and its report written."""
    store_topics(ledger, evidence)
    if before_close is not None:
        before_close(evidence)
    return close_run(ledger, evidence, timings, reports_dir, lineage)


def run_opened(plan: MigrationPlan, lineage: Lineage | None = None) -> None:
    """A run open in the ledger (planned, not a dry run): its lineage START to ``lineage`` (lineage/emit.py; None:
    openlineage-python's standard configuration, off unless configured; never failing the run)."""
    (lineage or Lineage.from_environment()).run_started(plan)


def record_dry_run(ledger: Ledger, plan: MigrationPlan) -> None:
    """A dry run ends once planned: nothing was created or copied, and it has no report."""
    ledger.finish_run(plan.run_id, "dry_run", 0, DRY_RUN)


def record_failure(
    ledger: Ledger, run_id: str, error: str, reports_dir: Path | None = None, lineage: Lineage | None = None
) -> ReportFiles | None:
    """Close a run that failed before its verdict (its error in the ledger) and write its report, which says
    so (its lineage FAIL to ``lineage``, as ``close_run``); a ledger that cannot take it only logs (the run's own
    error is the one to show)."""
    try:
        ledger.finish_run(run_id, "failed", 0, error[:2000] or "failed")
        files = generate_report(ledger, run_id, reports_dir) if reports_dir is not None else None
        if files is not None:
            (lineage or Lineage.from_environment()).run_ended(files.json, files.sha256, error[:2000] or "failed")
        return files
    except (LedgerError, OSError) as exc:
        log.warning("Could not record run %s as failed: %s", run_id, exc)
        return None
