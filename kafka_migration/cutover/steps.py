"""Cutover and failback as steps around an ordinary migration run; shared by the CLI and the DAGs.

cutover:  prepare_cutover (pre-flight, record)  ->  final incremental run (copy, verify)
          ->  finish_cutover (still quiet? verified? group sync with proof, ends recorded, report)
failback: prepare_failback (pre-flight on the target, reverse checkpoints seeded at the cutover point)
          ->  incremental run target -> source  ->  finish_failback (verified? groups translated back, report)

The run in the middle is the pipeline's own (``pipeline.run_migration`` in the CLI, the
plan/copy/verify tasks in Airflow): the cutover adds checks and records, never a copy path.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_migration.cutover.point import (
    COMPLETED,
    FAILED,
    REFUSED,
    RUNNING,
    Cutover,
    combine_segments,
    cutover_topics,
)
from kafka_migration.cutover.preflight import Preflight, preflight, selected_topics, still_quiet
from kafka_migration.cutover.refusal import FAILBACK_REFUSAL, REFUSAL, reasons_of
from kafka_migration.exceptions import ConfigurationError, CutoverRefusedError, MigrationError, VerificationError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.ledger import Ledger
from kafka_migration.lineage.emit import Lineage, now
from kafka_migration.lineage.moves import CutoverLineage
from kafka_migration.model.checkpoints import Key
from kafka_migration.model.config import ClusterConfig, MigrationOptions, compile_group_pattern
from kafka_migration.model.offsets import MappedSegment
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.text import noun_for, plural, some

log = logging.getLogger(__name__)

GOOD_RUN_STATUSES = ("verified", "up_to_date")


@dataclass(frozen=True)
class CutoverOutcome:
    cutover_id: str
    run_id: str
    ok: bool
    message: str
    report: Path | None = None


def _exact(names: Iterable[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names))


@dataclass(frozen=True)
class CutoverRequest:
    """One cutover as asked: its id, how long the source topics must stay quiet, the consumer groups that move
    (ids fully matching ``groups`` and not ``exclude_groups``; every group of the topics by default), who asked
    (``trigger``; a DAG's id and run), and where a refusal's report goes (none: no report file)."""

    cutover_id: str
    quiet_seconds: float
    groups: str | None = None
    exclude_groups: str | None = None
    trigger: str = "cli"
    dag_id: str | None = None
    dag_run_id: str | None = None
    reports_dir: Path | None = None


@dataclass(frozen=True)
class CutoverRecord:
    """Where a finished cutover's or failback's record goes besides the ledger: the directory of its report, and
    its lineage (None: openlineage-python's standard configuration, as the CLI has it)."""

    reports_dir: Path
    lineage: Lineage | None = None


def prepare_cutover(
    source: ClusterConfig, target: ClusterConfig, options: MigrationOptions, ledger: Ledger, request: CutoverRequest
) -> Preflight:
    """Pre-flight checks; the cutover is recorded either way (``refused`` with the reasons, or ``running``).

    With ``request.reports_dir`` a refusal writes the cutover's report, and its error names the file."""
    cutover_id, quiet_seconds, reports_dir = request.cutover_id, request.quiet_seconds, request.reports_dir
    groups, exclude_groups = request.groups, request.exclude_groups
    compile_group_pattern("group", groups or ".*")  # bad input fails before anything is recorded
    if exclude_groups:
        compile_group_pattern("exclude-group", exclude_groups)
    source_cluster, target_cluster = GroupCluster(source), GroupCluster(target)
    source_info, target_info = source_cluster.describe(), target_cluster.describe()
    topics = selected_topics(source_cluster, options.include, options.exclude)
    params = {
        "include": options.include,
        "exclude": options.exclude,
        "rename": options.rename,
        "groups": groups,
        "exclude_groups": exclude_groups,
        "quiet_seconds": quiet_seconds,
    }
    ledger.start_cutover(
        cutover_id,
        {
            "trigger": request.trigger,
            "dag_id": request.dag_id,
            "dag_run_id": request.dag_run_id,
            "params": params,
            "source_cluster_id": source_info.cluster_id,
            "source_bootstrap": source_info.bootstrap,
            "target_cluster_id": target_info.cluster_id,
            "target_bootstrap": target_info.bootstrap,
        },
    )
    log.info(
        "Cutover %s: waiting %gs to see that %s stay quiet",
        cutover_id,
        quiet_seconds,
        plural(len(topics), "source topic"),
    )
    try:
        checked = preflight(source_cluster, target_cluster, topics, quiet_seconds, groups, exclude_groups)
    except MigrationError as exc:
        reasons = reasons_of(exc.reasons if isinstance(exc, CutoverRefusedError) else [exc])
        ledger.update_cutover(
            cutover_id, finished=True, status=REFUSED, message=str(exc)[:4000], params={**params, REFUSAL: reasons}
        )
        _refused_with_report(exc, ledger, cutover_id, reports_dir)
        raise
    ledger.update_cutover(cutover_id, status=RUNNING, groups=list(checked.groups))
    log.info(
        "Cutover %s: source quiet; %s idle on both clusters%s",
        cutover_id,
        plural(len(checked.groups), "consumer group"),
        f" ({', '.join(checked.groups)})" if checked.groups else "",
    )
    return checked


def _fail(
    ledger: Ledger,
    cutover_id: str,
    problems: list[str],
    reports_dir: Path,
    failback: bool = False,
    error: type[MigrationError] = MigrationError,
) -> None:
    """Record the failure, write the report that shows it, and raise."""
    message = "; ".join(problems)
    if failback:
        ledger.update_cutover(cutover_id, failback_status=FAILED, failback_message=message[:4000])
    else:
        ledger.update_cutover(cutover_id, finished=True, status=FAILED, message=message[:4000])
    report = _write_report(ledger, cutover_id, reports_dir)
    what = "Failback of cutover" if failback else "Cutover"
    raise error(f"{what} {cutover_id} FAILED: {message}. Do not switch; report: {report}")


def _run_problems(ledger: Ledger, run_id: str) -> tuple[list[str], type[MigrationError]]:
    """Problems of the final run, and the error class (a mismatch is exit 1, like ``run``)."""
    run = ledger.run(run_id)
    if run is None or run.status not in GOOD_RUN_STATUSES:
        status = run.status if run else "missing"
        problem = f"the final run {run_id} is {status}, not verified; see its report, fix the cause and run again"
        return [problem], VerificationError if status == "mismatch" else MigrationError
    return [], MigrationError


def finish_cutover(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    cutover_id: str,
    checked: Preflight,
    plan: MigrationPlan,
    record: CutoverRecord,
) -> CutoverOutcome:
    """After the final run: still quiet, verified, groups synced and proven; record the ends; write the report."""
    started = now()
    reports_dir, lineage = record.reports_dir, record.lineage or Lineage.from_environment()
    ledger.update_cutover(cutover_id, run_id=plan.run_id)
    problems, error = _run_problems(ledger, plan.run_id)
    problems += still_quiet(KafkaCluster(source), checked)
    unchecked = sorted({t.source_topic for t in plan.topics} - set(checked.topics))
    if unchecked:
        problems.append(
            f"{noun_for(len(unchecked), 'topic')} {some(unchecked)} appeared after the pre-flight; run the "
            "cutover again"
        )
    if problems:
        _fail(ledger, cutover_id, problems, reports_dir, error=error)
    checkpoints = ledger.checkpoints(plan.source.cluster_id, plan.target.cluster_id)
    topics, problems = cutover_topics(
        ((t.source_topic, t.target_topic, [p.partition for p in t.partitions]) for t in plan.topics),
        checkpoints,
        checked.end_offsets,
    )
    if problems:
        _fail(ledger, cutover_id, problems, reports_dir)
    ledger.update_cutover(cutover_id, topics=[t.to_dict() for t in topics])
    problems = move_groups(source, target, ledger, checked.groups, plan.run_id, lineage=lineage)
    status = FAILED if problems else COMPLETED
    message = "; ".join(problems) if problems else "consumers may start on the target"
    ledger.update_cutover(cutover_id, finished=True, status=status, message=message[:4000])
    files = _write_report(ledger, cutover_id, reports_dir)
    ends = [t.to_dict() for t in topics]
    moved = CutoverLineage(
        "cutover", cutover_id, plan.run_id, source.bootstrap, target.bootstrap, ends, not problems, message, started
    )
    _lineage(ledger, moved, lineage)
    if problems:
        raise VerificationError(
            f"Cutover {cutover_id} FAILED: consumer groups not moved with proof: {message}. Report: {files}"
        )
    return CutoverOutcome(cutover_id, plan.run_id, True, message, files)


def move_groups(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    groups: Iterable[str],
    run_id: str,
    segments: Mapping[Key, list[MappedSegment]] | None = None,
    lineage: Lineage | None = None,
) -> list[str]:
    """Move the selected groups with proof (``groups.sync``, its lineage to ``lineage``); the problems, empty when
    every one is proven."""
    names = sorted(groups)
    if not names:
        return []
    from kafka_migration.groups.sync import GroupSyncOptions, sync_groups

    options = GroupSyncOptions(_exact(names), run_id=run_id, segments=segments)
    result = sync_groups(source, target, ledger, options, lineage)
    return [f"{p.name()}: {p.outcome}" + (f" ({p.reason})" if p.reason else "") for p in result.failures()]


# -- failback ----------------------------------------------------------------------------------------


def load_cutover(ledger: Ledger, cutover_id: str) -> Cutover:
    row = ledger.cutover(cutover_id)
    if row is None:
        raise ConfigurationError(
            f"The ledger has no cutover {cutover_id!r}; list them with 'kafka-migrate history --cutovers'."
        )
    return Cutover.from_row(row)


def failback_clusters(cutover: Cutover, source: ClusterConfig, target: ClusterConfig) -> None:
    """The clusters given must be the cutover's, by cluster id (a bootstrap may have changed)."""
    for config, expected in ((source, cutover.source_cluster_id), (target, cutover.target_cluster_id)):
        found = KafkaCluster(config).describe().cluster_id
        if found != expected:
            raise ConfigurationError(
                f"The {config.role} cluster at {config.bootstrap} is cluster {found}, but cutover "
                f"{cutover.cutover_id} switched from {cutover.source_cluster_id} to {cutover.target_cluster_id}. "
                f"Point --{config.role} (or the {config.role} connection) at that cluster."
            )


def prepare_failback(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    cutover_id: str,
    quiet_seconds: float,
    reports_dir: Path | None = None,
) -> tuple[Cutover, Preflight, MigrationOptions]:
    """Check the target is quiet and the groups idle, then seed the reverse checkpoints at the cutover point.

    ``source`` / ``target`` are the cutover's clusters (records flow target -> source here). With
    ``reports_dir`` a refusal rewrites the cutover's report (its failback section), and its error names it.
    """
    cutover = load_cutover(ledger, cutover_id)
    cutover.ready_for_failback()
    failback_clusters(cutover, source, target)
    topics = [t.target_topic for t in cutover.topics]
    try:
        ends = GroupCluster(source).log_ends(t.source_topic for t in cutover.topics)
        problems = cutover.written_since_reasons({key: high for key, (high, _) in ends.items()})
        if problems:
            raise CutoverRefusedError(problems, "Failback")
        checked = preflight(
            GroupCluster(target),
            GroupCluster(source),
            topics,
            quiet_seconds,
            _exact(cutover.groups) if cutover.groups else None,
            what="Failback",
        )
    except CutoverRefusedError as exc:
        # After an attempt that may have copied, the status stays: it decides what a retry checks.
        attempted = cutover.failback_status in (RUNNING, FAILED, COMPLETED)
        status = cutover.failback_status if attempted else REFUSED
        ledger.update_cutover(
            cutover_id,
            failback_status=status,
            failback_message=str(exc)[:4000],
            params={**cutover.params, FAILBACK_REFUSAL: reasons_of(exc.reasons)},
        )
        _refused_with_report(exc, ledger, cutover_id, reports_dir)
        raise
    seeds = cutover.reverse_checkpoints()
    seeded = ledger.seed_checkpoints(cutover.target_cluster_id, cutover.source_cluster_id, seeds)
    for (topic, partition, back), cp in sorted(seeded.items()):
        log.info(
            "failback %s[%d] -> %s[%d] continues at %d -> %d",
            topic,
            partition,
            back,
            partition,
            cp.source_offset,
            cp.target_offset,
        )
    params = {k: v for k, v in cutover.params.items() if k != FAILBACK_REFUSAL}  # this attempt passed its checks
    ledger.update_cutover(cutover_id, failback_status=RUNNING, failback_message=None, params=params)
    return cutover, checked, MigrationOptions.from_mapping(cutover.failback_options())


def finish_failback(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    cutover: Cutover,
    checked: Preflight,
    plan: MigrationPlan,
    record: CutoverRecord,
) -> CutoverOutcome:
    """After the reverse run: target still quiet, verified, groups translated back with proof; report."""
    started = now()
    reports_dir, lineage = record.reports_dir, record.lineage or Lineage.from_environment()
    ledger.update_cutover(cutover.cutover_id, failback_run_id=plan.run_id)
    problems, error = _run_problems(ledger, plan.run_id)
    problems += still_quiet(KafkaCluster(target), checked)
    if problems:
        _fail(ledger, cutover.cutover_id, problems, reports_dir, failback=True, error=error)
    groups = sorted(checked.groups)
    segments = failback_segments(ledger, cutover)
    problems = move_groups(target, source, ledger, groups, plan.run_id, segments=segments, lineage=lineage)
    message = "; ".join(problems) if problems else "consumers may start on the source again"
    ledger.update_cutover(
        cutover.cutover_id, failback_status=FAILED if problems else COMPLETED, failback_message=message[:4000]
    )
    files = _write_report(ledger, cutover.cutover_id, reports_dir)
    ends = [t.to_dict() for t in cutover.topics]
    back = CutoverLineage(  # records moved target -> source
        "failback",
        cutover.cutover_id,
        plan.run_id,
        target.bootstrap,
        source.bootstrap,
        ends,
        not problems,
        message,
        started,
    )
    _lineage(ledger, back, lineage)
    if problems:
        raise VerificationError(
            f"Failback of cutover {cutover.cutover_id} FAILED: consumer groups not moved back with proof: {message}. "
            f"Report: {files}"
        )
    return CutoverOutcome(cutover.cutover_id, plan.run_id, True, message, files)


def _lineage(ledger: Ledger, cutover: CutoverLineage, lineage: Lineage) -> None:
    """The cutover's (or failback's) lineage: each partition's ends and where each group starts (lineage/emit.py;
    never failing the cutover); the groups' rows are read from the ledger only when something takes the events."""

    def rows() -> list[dict[str, Any]]:
        return [r.to_dict() for r in ledger.group_sync_rows(run_id=cutover.run_id)]

    lineage.cutover_done(cutover, rows)


def failback_segments(ledger: Ledger, cutover: Cutover) -> dict[Key, list[MappedSegment]]:
    """What translates a target position back to the source: the failback runs' own verified segments, and
    below the cutover point the forward segments read backwards (the same records on both clusters)."""
    return combine_segments(
        ledger.verified_segments(cutover.target_cluster_id, cutover.source_cluster_id),
        ledger.verified_segments(cutover.source_cluster_id, cutover.target_cluster_id),
        cutover,
    )


def _write_report(ledger: Ledger, cutover_id: str, reports_dir: Path) -> Path:
    from kafka_migration.cutover.report import generate_cutover_report

    return generate_cutover_report(ledger, cutover_id, reports_dir).html


def _refused_with_report(exc: MigrationError, ledger: Ledger, cutover_id: str, reports_dir: Path | None) -> None:
    """Write the report of a refusal; a refusal's error then names it (re-raised as the same error)."""
    if reports_dir is None:
        return
    try:
        report = _write_report(ledger, cutover_id, reports_dir)
    except OSError as problem:  # the refusal is what the operator must read, not a full or read-only disk
        log.warning("The report of refused %s could not be written: %s", cutover_id, problem)
        return
    if isinstance(exc, CutoverRefusedError):
        raise CutoverRefusedError(exc.reasons, exc.what, report=report) from None
