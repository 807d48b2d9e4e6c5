"""The whole run without Airflow: plan, create topics, copy and verify, record. Used by the CLI.

One application copies and verifies (Spark's ``migrate`` step, spark/submit.py; this module knows it only as a
``Launcher`` and its ``Application``, so that the run sits next to its planning, below the Spark glue). It is
started when the run starts, so that its start-up overlaps planning; it waits until the plan is written and
the target topics exist, and is told to stop, without writing anything, when there is nothing to run. The
evidence is recorded by run/evidence.py, as a DAG's summary task records it.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from kafka_migration.exceptions import ConfigurationError, LeaseLostError, LedgerUnavailableError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.leases import Holder, LeaseHeartbeat, lease_ttl_from_env
from kafka_migration.lineage.emit import Lineage
from kafka_migration.model.census import Census
from kafka_migration.model.config import ClusterConfig, ClusterPair, MigrationOptions
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import StepResults, TopicOutcome
from kafka_migration.model.timings import RunTimings, run_timings, task_intervals
from kafka_migration.reports.signoff import ReportFiles
from kafka_migration.reports.summary import TopicSummary, results_timings
from kafka_migration.run.census import lead_census
from kafka_migration.run.census_takers import CensusTaker, CensusWays, census_taker, local_records
from kafka_migration.run.claims import lease_claim, lease_keys, release_leases
from kafka_migration.run.evidence import (
    RunEvidence,
    close_run,
    record_dry_run,
    record_failure,
    run_opened,
    store_topics,
)
from kafka_migration.run.files import new_run_id, run_dir
from kafka_migration.run.planner import Claim, build_plan
from kafka_migration.run.topics import create_target_topics

log = logging.getLogger(__name__)


class Application(Protocol):
    """A running copy-and-verify application of one run (spark/submit.py's SparkApplication)."""

    process: subprocess.Popen[str] | None

    def census(self, plan: MigrationPlan) -> Census: ...  # before anything is written: the ids the records carry
    def up(self) -> bool: ...  # the driver is up and waits for its plan (its census starts at once)
    def go(self) -> None: ...  # the plan is written and the topics exist: start (what is not released yet)
    def planned(self) -> None: ...  # the plan is written, the topics are being created: wait for release()
    def release(self, count: int) -> None: ...  # the first count topics of the run order exist: start them
    def abort(self) -> None: ...  # stop, writing nothing
    def results(self) -> dict[str, StepResults]: ...  # wait for "copy" and "verify"
    def detach(self) -> None: ...  # it ends by itself; stop watching it


class Launcher(Protocol):
    """Starts the application for the run files in ``directory``. ``wait``: start it ahead of its plan, to be
    told go or abort (None when it cannot wait, e.g. a driver in a cluster: it is launched once the plan is
    ready). ``on_start`` receives the process, so that a run that lost its leases can stop it."""

    def __call__(
        self,
        directory: Path,
        source: ClusterConfig,
        target: ClusterConfig,
        *,
        wait: bool,
        on_start: Callable[[subprocess.Popen[str]], None] | None = None,
    ) -> Application | None: ...

    def census(self, directory: Path, plan: MigrationPlan, source: ClusterConfig, target: ClusterConfig) -> Census:
        """The census of ``plan``'s source ranges by an application of its own, for a launcher whose application
        cannot wait for its plan (and so cannot take the census before anything is written)."""
        ...


class SchemaStep(Protocol):
    """The schema step (``schema_sync.guard.schema_step``): the plan before it is written, and what takes the
    census of its source records if the step needs one."""

    def __call__(
        self, plan: MigrationPlan, census: Callable[[MigrationPlan], Census] | None = None
    ) -> MigrationPlan: ...


@dataclass
class RunOutcome:
    """What a whole run did: its evidence, run files, timings and report (None: a dry run)."""

    evidence: RunEvidence
    directory: Path
    timings: RunTimings | None = None
    report: ReportFiles | None = None

    @property
    def plan(self) -> MigrationPlan:
        return self.evidence.plan

    @property
    def copy(self) -> Mapping[str, TopicOutcome]:
        return self.evidence.copy

    @property
    def verify(self) -> Mapping[str, TopicOutcome]:
        return self.evidence.verify

    @property
    def rows(self) -> list[TopicSummary]:
        return self.evidence.rows

    @property
    def nothing_new(self) -> bool:
        return self.evidence.nothing_new

    @property
    def verified(self) -> bool:
        return self.evidence.verified

    @property
    def status(self) -> str:
        return self.evidence.status


def run_migration(  # noqa: PLR0913 (issue 49: to take value objects next)
    source: ClusterConfig,
    target: ClusterConfig,
    options: MigrationOptions,
    state_dir: Path,
    ledger: Ledger,
    launch: Launcher | None = None,
    reports_dir: Path | None = None,
    on_plan: Callable[[MigrationPlan], None] | None = None,
    on_step: Callable[[str], None] | None = None,
    lease_ttl: float | None = None,
    run_id: str | None = None,
    app: Application | None = None,
    started: float | None = None,
    schemas: SchemaStep | None = None,
    lineage: Lineage | None = None,
) -> RunOutcome:
    """Plan (under the leases of the target topics), create topics, copy and verify, record; release the leases.

    ``launch`` starts the copy-and-verify application (needed unless a dry run); it starts first and waits for
    the plan, so its start-up runs while the run is planned. A caller may have started it earlier still
    (``app``, waiting for the directory of ``run_id``), e.g. before its own imports: from then on this
    function owns ``app``, tells it to go or stops it. ``reports_dir``: where the sign-off report goes
    (default: ``state_dir``/reports). ``started``: when the run began for the user (default: now). ``schemas``:
    the schema sync (``schema_sync.sync``), given the plan before it is written and the run opened, and what takes
    the census of the plan's source records (``_census_taker``). ``lineage``: where the run's START and COMPLETE
    or FAIL go (default: openlineage-python's standard configuration).
    """
    started = time.time() if started is None else started
    lineage = lineage if lineage is not None else Lineage.from_environment()
    reports_dir = reports_dir if reports_dir is not None else state_dir / "reports"
    try:
        if launch is None and not options.dry_run:
            raise ConfigurationError("A run that copies needs a launcher of its copy (spark/submit.SparkLauncher).")
        ttl = lease_ttl if lease_ttl is not None else lease_ttl_from_env()
        source_cluster = KafkaCluster(source)
        target_cluster = KafkaCluster(target)
    except BaseException:
        _abort(app)
        raise
    run_id = run_id or new_run_id()
    holder = Holder.this_process(run_id)
    directory = run_dir(state_dir, run_id)
    running: list[subprocess.Popen[str]] = [app.process] if app is not None and app.process is not None else []
    if app is None and launch is not None and not options.dry_run:
        app = launch(directory, source, target, wait=True, on_start=running.append)
    try:
        claim = None if options.dry_run else lease_claim(ledger, holder, ttl)
        census = _census_taker(
            options,
            (source, target),
            app,
            launch,
            directory,
            on_step,
            None if options.dry_run else target_cluster.find_reader_coordinator_meanwhile,  # a dry run writes nothing
        )
        step = None if schemas is None else partial(schemas, census=census)
        planning = _Planning(options, run_id, claim, state_dir, step, lineage)
        plan = _plan((source_cluster, target_cluster), ledger, planning)
        directory = run_dir(state_dir, plan.run_id)
        planned = time.time()
        if on_plan is not None:
            on_plan(plan)
        outcome = RunOutcome(RunEvidence(plan), directory)
        if options.dry_run:
            record_dry_run(ledger, plan)
            return outcome
    except BaseException:
        _abort(app)
        raise

    def stop_spark(_message: str) -> None:
        for process in running:
            if process.poll() is None:
                process.terminate()

    heartbeat = LeaseHeartbeat(ledger.leases, plan.run_id, lease_keys(plan), ttl, on_lost=stop_spark)
    try:
        with heartbeat:
            if outcome.nothing_new:
                app = _abort(app)
                store_topics(ledger, outcome.evidence)
                outcome.timings = results_timings(started, planned, [], [], time.time())
                outcome.report = close_run(ledger, outcome.evidence, outcome.timings, reports_dir, lineage)
                return outcome
            target_ids, planned = _create_topics(plan, target_cluster, app, heartbeat)
            if app is None:
                app = launch(directory, source, target, wait=False, on_start=running.append)  # type: ignore[misc]
            else:
                app.go()
            if on_step is not None:
                on_step("copy")
                on_step("verify")
            results = app.results()  # type: ignore[union-attr]
            heartbeat.check()
            outcome.evidence = RunEvidence(plan, results["copy"].topics, results["verify"].topics, target_ids)
            store_topics(ledger, outcome.evidence)
            outcome.timings = run_timings(
                started=started,
                planned=planned,
                spark_ready=results["copy"].ready,
                copy_tasks=task_intervals(p for t in outcome.copy.values() for p in t.partitions),
                verify_tasks=task_intervals(p for t in outcome.verify.values() for p in t.partitions),
                finished=time.time(),
            )
            app.detach()  # type: ignore[union-attr]  # Spark stops by itself while the report is written
            app = None
            outcome.report = close_run(ledger, outcome.evidence, outcome.timings, reports_dir, lineage)
    except BaseException as exc:
        _abort(app)
        error = _failure(ledger, plan.run_id, exc, heartbeat.lost, reports_dir, lineage)
        if error is exc:
            raise
        raise error from exc
    finally:
        release_leases(ledger, plan.run_id)
    return outcome


def _abort(app: Application | None) -> None:
    """Stop an application that waits for a plan (or still runs), so that no driver outlives the run."""
    if app is not None:
        app.abort()


def _census_taker(
    options: MigrationOptions,
    clusters: tuple[ClusterConfig, ClusterConfig],
    app: Application | None,
    launch: Launcher | None,
    directory: Path,
    on_step: Callable[[str], None] | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> CensusTaker:
    """What takes the census of a plan's source ranges when the schema step asks (run/census_takers.py): a dry run
    reads up to ``$KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS`` offsets in this process, and more with a Spark
    application of its own (``on_step("census")`` first), or only each partition's ends when asked
    (``dry_run_census`` ``ends``; also without a launcher); a run asks its application before its copy is
    released, or one of its own when the application cannot wait (a driver in a cluster). ``meanwhile``: started as a
    run's census begins (the target's readers' group looked up, ``KafkaCluster.find_reader_coordinator_meanwhile``)."""
    source = ClusterPair.of(*clusters).source

    def spark(plan: MigrationPlan) -> Census:
        if meanwhile is not None:
            meanwhile()
        if app is not None:  # read here while the driver starts, the rest by the driver (run/census.lead_census)
            return lead_census(plan, source, app.up, app.census)
        if launch is None:
            raise ConfigurationError("A run that copies needs a launcher of its copy (spark/submit.SparkLauncher).")
        return launch.census(directory, plan, *clusters)

    if not options.dry_run:
        return census_taker(CensusWays(source, spark, local_records=0))

    def announce(_planned: int) -> None:
        if on_step is not None:
            on_step("census")

    ends = options.dry_run_census == "ends" or launch is None
    return census_taker(CensusWays(source, spark, local_records(), ends_only=ends, on_spark=announce))


def _create_topics(
    plan: MigrationPlan, target: KafkaCluster, app: Application | None, heartbeat: LeaseHeartbeat
) -> tuple[dict[str, str], float]:
    """Create and check the target topics, releasing them to a waiting ``app`` as they come up; their ids, and
    when the copy could start (the first topics released; without an app, all of them created)."""
    released: list[float] = []
    if app is not None:
        app.planned()

    def release(count: int) -> None:
        heartbeat.check()
        released.append(time.time())
        app.release(count)  # type: ignore[union-attr]

    target_ids = create_target_topics(plan, target, release if app is not None else None).topic_ids
    heartbeat.check()
    return target_ids, released[0] if released else time.time()


@dataclass(frozen=True)
class _Planning:
    """What planning a run takes besides the clusters and the ledger (``_plan``)."""

    options: MigrationOptions
    run_id: str
    claim: Claim | None
    state_dir: Path
    schemas: Callable[[MigrationPlan], MigrationPlan] | None
    lineage: Lineage


def _plan(clusters: tuple[KafkaCluster, KafkaCluster], ledger: Ledger, planning: _Planning) -> MigrationPlan:
    """Plan under the leases, write the plan file, open the run in the ledger (its lineage START); release the
    leases on failure. ``clusters``: the source's and the target's."""
    claim, run_id = planning.claim, planning.run_id
    try:
        plan = build_plan(*clusters, planning.options, run_id=run_id, ledger=ledger, claim=claim)
        plan = plan if planning.schemas is None else planning.schemas(plan)
        plan.write(run_dir(planning.state_dir, plan.run_id) / "plan.json")
        ledger.start_run(plan, trigger="cli")
        run_opened(plan, planning.lineage)
    except BaseException:
        if claim is not None:
            release_leases(ledger, run_id)
        raise
    return plan


def _failure(
    ledger: Ledger, run_id: str, exc: BaseException, lease_lost: str | None, reports_dir: Path, lineage: Lineage
) -> BaseException:
    """Record a failed run with its report (when the ledger can) and its lineage FAIL; a step stopped for a lost
    lease fails as such."""
    error: BaseException = exc
    if lease_lost is not None and not isinstance(exc, LeaseLostError):
        error = LeaseLostError(lease_lost)
    if not isinstance(error, LedgerUnavailableError):
        record_failure(ledger, run_id, str(error) or type(error).__name__, reports_dir, lineage)
    return error
