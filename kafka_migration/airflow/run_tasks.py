"""Bodies of the DAG's Python tasks: each reads its inputs and calls the core package."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_migration.airflow import settings
from kafka_migration.airflow.group_tasks import SummaryGroupSync, check_group_params
from kafka_migration.airflow.hooks import LedgerHook
from kafka_migration.airflow.schema_tasks import census_taker, check_registries, schema_options, schema_step
from kafka_migration.exceptions import ConfigurationError, LeaseLostError
from kafka_migration.model.config import ClusterConfig, MigrationOptions, writable_dir
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import OK, StepResults, TopicOutcome, merge
from kafka_migration.model.text import noun_for, offset_range, plural, some
from kafka_migration.model.timings import RunTimings
from kafka_migration.reports.summary import (
    VERIFIED,
    render_plan,
    render_table,
    results_timings,
    summarize,
    timings_line,
    topic_verdict,
)
from kafka_migration.run.files import missing_results, read_plan, read_results
from kafka_migration.run.losses import verdict_line

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.schema_sync.sync import SchemaOptions

log = logging.getLogger(__name__)


def check_executor_env() -> None:
    """A configured archive that Spark cannot ship fails the plan, before anything is written."""
    from kafka_migration.spark.executor_env import executor_env_conf

    archive = settings.task_executor_env()
    if archive:
        executor_env_conf(archive)


def _label(topics: list[str]) -> str:
    return topics[0] if len(topics) == 1 else f"{topics[0]} +{len(topics) - 1}"


def load_plan(plan_path: str | Path, run_id: str, ledger: Ledger) -> MigrationPlan:
    """The run's plan file, checked against the plan the ledger recorded (a resumed task must not trust less)."""
    recorded = ledger.run(run_id)
    return read_plan(Path(plan_path), run_id, recorded.plan if recorded else None)


def hold_leases(plan: MigrationPlan, ledger: Ledger) -> None:
    """Renew the DAG run's leases before a task writes; raise (before writing) if another run took them over."""
    from kafka_migration.run.claims import lease_keys

    ledger.leases.renew(plan.run_id, lease_keys(plan), settings.lease_ttl())


@dataclass(frozen=True)
class RunInputs:
    """A DAG run's inputs, checked: its options, both clusters, the state directory, the ledger's URL (with its
    password: never logged) and the schema registries (None: Param schema_ids off)."""

    options: MigrationOptions
    source: ClusterConfig
    target: ClusterConfig
    state_dir: Path
    ledger_url: str = field(repr=False)
    schemas: SchemaOptions | None = None
    conn_ids: tuple[str, str] = ("kafka_source", "kafka_target")  # the clusters' connections: the census's Spark
    census_local_records: int | None = None  # offsets the plan task's census reads itself (None: schema_ids off)


def validated_inputs(
    params: dict[str, Any],
    declared: Iterable[str] | None = None,
    options: dict[str, Any] | None = None,
    source_conn_id: str | None = None,
    target_conn_id: str | None = None,
) -> RunInputs:
    """Turn a run's Params and connections into checked values before anything is written.

    Refuses, with one line naming the problem and the fix: Params that are not declared (a typo
    would otherwise fall back to a default such as include '.*'), Params of the wrong type or value,
    missing or malformed connections (the clusters', and the registries' unless Param schema_ids is off),
    settings librdkafka refuses, an unwritable state or report directory, a ledger URL of an unsupported
    scheme, and an unreachable cluster or registry. ``options`` and the connection ids override the Params
    (a failback passes the reverse direction and an explicit topic map).
    """
    from kafka_migration.airflow.hooks import KafkaClusterHook
    from kafka_migration.kafka.reach import check_reachable
    from kafka_migration.kafka.settings import check_client_settings
    from kafka_migration.ledger.urls import check_ledger_url

    if declared is not None:
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise ConfigurationError(
                f"Unknown {noun_for(len(unknown), 'Param')} {', '.join(map(repr, unknown))} in the run "
                f"configuration; this DAG takes {', '.join(sorted(declared))} (check the spelling)."
            )
    checked = MigrationOptions.from_mapping({**params, **(options or {})})
    check_group_params(params)
    schemas = schema_options(params)
    budget = None if schemas is None else settings.census_local_records()  # a bad setting: refused here
    conn_ids = {}
    overrides = {"source": source_conn_id, "target": target_conn_id}
    for role in ("source", "target"):
        conn_id = overrides[role] or params.get(f"{role}_conn_id")
        if conn_id is not None and (not isinstance(conn_id, str) or not conn_id.strip()):
            raise ConfigurationError(
                f"Param '{role}_conn_id' must name an Airflow connection, got {conn_id!r}; the default is "
                f"'kafka_{role}'."
            )
        conn_ids[role] = conn_id or f"kafka_{role}"
    source = KafkaClusterHook(conn_ids["source"], "source").get_cluster_config()
    target = KafkaClusterHook(conn_ids["target"], "target").get_cluster_config()
    check_client_settings(source)
    check_client_settings(target)
    directory = writable_dir(
        settings.task_state_dir(), f"The state directory (Variable {settings.STATE_DIR_VARIABLE} or [kafka_migration])"
    )
    writable_dir(settings.reports_dir(), "The report directory ([kafka_migration] reports_dir)")
    url = LedgerHook().get_uri()
    check_ledger_url(url)
    check_reachable(source)  # seconds: a host name typo is refused before planning waits on its timeouts
    check_reachable(target)
    check_registries(schemas)
    conns = (conn_ids["source"], conn_ids["target"])
    return RunInputs(checked, source, target, directory, url, schemas, conns, budget)


def plan_run(
    params: dict[str, Any],
    run_id: str,
    dag_id: str = "kafka_migration",
    declared: Iterable[str] | None = None,
    options: dict[str, Any] | None = None,
    source_conn_id: str | None = None,
    target_conn_id: str | None = None,
) -> dict[str, Any]:
    """Plan the run and return the small descriptors the mapped tasks expand over.

    ``declared``: the DAG's Param names; anything else in ``params`` is refused as a likely typo.
    ``options`` and the connections default to the DAG's Params; a failback passes its own
    (the reverse direction, an explicit topic map).
    """
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.ledger import Ledger
    from kafka_migration.ledger.leases import Holder
    from kafka_migration.run.claims import lease_claim, release_leases
    from kafka_migration.run.files import run_dir
    from kafka_migration.run.planner import build_plan, safe_run_id

    inputs = validated_inputs(
        params, declared, options=options, source_conn_id=source_conn_id, target_conn_id=target_conn_id
    )
    options, state = inputs.options, inputs.state_dir
    check_executor_env()
    source = KafkaCluster(inputs.source)
    target = KafkaCluster(inputs.target)
    ledger = Ledger.open(inputs.ledger_url)
    migration_run_id = safe_run_id(f"{dag_id}__{run_id}")
    holder = Holder(migration_run_id, "airflow", f"DAG {dag_id}, DAG run {run_id}")
    census = None  # schema_ids off: no record read
    if inputs.census_local_records is not None:
        leases = None if options.dry_run else (ledger, settings.lease_ttl())
        clusters = (inputs.source, inputs.target)
        census = census_taker(clusters, inputs.conn_ids, state, inputs.census_local_records, leases)
    claim = None if options.dry_run else lease_claim(ledger, holder, settings.lease_ttl())
    try:
        plan = build_plan(source, target, options, run_id=migration_run_id, ledger=ledger, claim=claim)
        # Schemas registered and proven before the plan is written, after the census of the records it will copy;
        # a failback's back through the recorded map, or in keep mode each id its records name proven.
        plan = schema_step(inputs.schemas, ledger, failback=options.failback_of is not None)(plan, census)
        directory = run_dir(state, plan.run_id)
        plan_path = directory / "plan.json"
        plan.write(plan_path)
        ledger.start_run(plan, trigger="airflow", dag_id=dag_id, dag_run_id=run_id)
    except BaseException:
        if claim is not None:
            release_leases(ledger, migration_run_id)
        raise
    log.info("%s", render_plan(plan, plan_file=plan_path))  # a summary above 20 topics
    nothing_new = plan.offset_span == 0 and not any(t.create for t in plan.topics)
    if nothing_new and not options.dry_run:
        log.info("Nothing new on the source since the last verified run: no Spark job will run.")
    jobs = [
        {
            "run_id": plan.run_id,
            "job": i,
            "topics": list(topics),
            "label": _label(list(topics)),
            "plan_path": str(plan_path),
            "copy_results": str(directory / f"copy-job{i}.json"),
            "verify_results": str(directory / f"verify-job{i}.json"),
        }
        for i, topics in enumerate(plan.jobs)
    ]
    if options.dry_run:
        log.info("Dry run: the plan is written to %s; nothing will be created or copied.", plan_path)
    return {
        "plan": {
            "run_id": plan.run_id,
            "plan_path": str(plan_path),
            "dry_run": options.dry_run,
            "nothing_new": nothing_new,
        },
        "jobs": [] if options.dry_run or nothing_new else jobs,
    }


def create_topics(planned: dict[str, Any], target_conn_id: str) -> list[dict[str, str]]:
    """Create what the plan needs; return one descriptor per topic for the per-topic result tasks."""
    from kafka_migration.airflow.hooks import KafkaClusterHook
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.run.topics import create_target_topics

    if planned["dry_run"] or planned.get("nothing_new"):
        log.info("Dry run or nothing new: no topic created." if planned["dry_run"] else "Nothing new to copy.")
        _push_planned_at()
        return []
    ledger = LedgerHook().get_conn()
    plan = load_plan(planned["plan_path"], planned["run_id"], ledger)
    hold_leases(plan, ledger)
    target = KafkaCluster(KafkaClusterHook(target_conn_id, "target").get_cluster_config())
    created = create_target_topics(plan, target)
    log.info(
        "Created %s; %s already existed.",
        plural(len(created.names), "target topic"),
        plural(len(plan.topics) - len(created.names), "other"),
    )
    _push(TARGET_TOPIC_IDS, created.topic_ids)
    _push_planned_at()
    return [{"plan_path": planned["plan_path"], "topic": t.source_topic} for t in plan.topics]


def _results_path(plan_path: Path, step: str, job: int) -> Path:
    return plan_path.parent / f"{step}-job{job}.json"


def _step_results(plan: MigrationPlan, plan_path: Path, step: str) -> list[StepResults]:
    """What the step's jobs wrote; a job whose file is missing contributes nothing (its topics: not verified)."""
    found = [read_results(_results_path(plan_path, step, job), step, step) for job in range(len(plan.jobs))]
    return [r for r in found if r is not None]


PLANNED_AT = "planned_at"  # XCom key of the plan task: epoch seconds when the plan and its topics were done
TARGET_TOPIC_IDS = "target_topic_ids"  # XCom key of the plan task: {target topic: id} of the topics it created


def _push(key: str, value: Any) -> None:
    """An XCom of the running task for the summary; outside a task (a direct call): nothing, the summary copes."""
    try:
        from airflow.sdk import get_current_context

        get_current_context()["ti"].xcom_push(key=key, value=value)
    except Exception as exc:
        log.debug("No %s XCom: %s", key, exc)


def _push_planned_at() -> None:
    """Stamp the end of planning (plan and topics) for the summary's timings (else: the plan file's time)."""
    _push(PLANNED_AT, time.time())


def _airflow_stamps(plan_path: Path, ledger_started: Any) -> tuple[float, float | None]:
    """(trigger, planned) in epoch seconds from Airflow's records: the DAG run's start (else the ledger's
    start of the run) and the plan task's stamp once its topics exist (else the plan file's time)."""
    started: float | None = None
    planned: float | None = None
    try:
        from airflow.sdk import get_current_context

        context = get_current_context()
        dag_run = context["dag_run"]
        start = getattr(dag_run, "start_date", None) or getattr(dag_run, "run_after", None)
        started = start.timestamp() if start is not None else None
        stamp = context["ti"].xcom_pull(task_ids="plan", key=PLANNED_AT)
        planned = float(stamp) if stamp is not None else None
    except Exception as exc:  # no task context: the ledger's and the run files' times
        log.debug("No Airflow stamps for the run's timings: %s", exc)
    if started is None and ledger_started is not None:
        started = ledger_started.timestamp()
    if planned is None:
        try:
            planned = plan_path.stat().st_mtime
        except OSError:
            planned = None
    return (started if started is not None else time.time()), planned


def _job_of(plan: MigrationPlan, topic: str) -> int:
    return next(i for i, topics in enumerate(plan.jobs) if topic in topics)


def topic_result(plan_path: str, topic: str) -> dict[str, Any]:
    """One topic's verdict, so every topic has its own status in the Airflow UI. Reads only: the summary,
    which runs beside it, stores the evidence."""
    path = Path(plan_path)
    ledger = LedgerHook().get_conn()
    plan = load_plan(path, read_plan(path).run_id, ledger)
    job = _job_of(plan, topic)
    outcomes: dict[str, TopicOutcome | None] = {}
    for step in ("copy", "verify"):
        if step == "verify" and outcomes["copy"] is not None and outcomes["copy"].status != OK:
            outcomes[step] = None  # the copy failed: its error is the verdict, verification did not run
            break
        results_path = _results_path(path, step, job)
        # Both results files are written by the job's copy_verify task (the migrate step).
        results = read_results(results_path, step, f"copy_verify [{job}]")
        if results is None:
            raise missing_results(results_path, step, f"copy_verify (job {job}: {', '.join(plan.jobs[job])})")
        outcomes[step] = results.topics.get(topic)
    copy, verify = outcomes["copy"], outcomes["verify"]
    verdict, detail = topic_verdict(copy, verify)
    rows = [
        r
        for r in summarize(plan, {topic: copy} if copy else {}, {topic: verify} if verify else {})
        if r.source_topic == topic
    ]
    log.info("\n%s", render_table(rows))
    if verify is not None:
        for p in verify.partitions:
            log.info(
                "partition %d: source offsets %s, %s, %s -> target offsets %s, %s, %s: %s",
                p["partition"],
                offset_range(p["source_start"], p["source_end"]),
                plural(p["source_records"], "record"),
                p["source_checksum"][:19],
                offset_range(p["target_start"], p["target_end"]),
                plural(p["target_records"], "record"),
                p["target_checksum"][:19],
                "match" if p["match"] else f"DIFFERENT ({p['first_difference']})",
            )
    if verdict != VERIFIED:
        raise RuntimeError(f"Topic {topic}: {verdict}" + (f": {detail}" if detail else ""))
    return {"topic": topic, "verdict": verdict, "records": verify.records if verify else 0}


def _log_report(files: Any) -> None:
    log.info("Sign-off report: %s (report.json %s, recorded in the ledger)", files.html, files.sha256)


def summarize_run(
    planned: dict[str, Any] | None,
    target_topic_ids: dict[str, str] | None = None,
    group_params: dict[str, Any] | None = None,
    topics_created: bool = True,
) -> dict[str, Any]:
    """Store every topic's evidence, sync the consumer groups when asked (``group_params``: the run's Params)
    and every topic is verified, close the run in the ledger, write its report; fail unless every topic
    (and, when asked, every consumer group) was verified.

    ``target_topic_ids``: {target topic: id} of the topics the plan task created. ``topics_created``: False
    when the plan task opened the run but failed before its topics existed. When the plan task failed, its
    error is the run's one red task: this one closes what the plan opened and is skipped (``PlanFailed``).
    """
    if not planned:
        raise PlanFailed(
            "No run to close: the plan did not complete (see the first failed task: plan, or a cutover's pre-flight); "
            "nothing was created or copied."
        )
    path = Path(planned["plan_path"])
    ledger = LedgerHook().get_conn()
    try:
        if not topics_created:
            return _close_unplanned(planned, ledger)
        return _summarize(planned, path, ledger, target_topic_ids or {}, SummaryGroupSync(group_params, planned))
    finally:
        from kafka_migration.run.claims import release_leases

        release_leases(ledger, planned["run_id"])  # also when the run failed: the summary task always runs


class PlanFailed(Exception):
    """The plan task failed: the tasks after it have nothing of their own to report (the DAG skips them)."""


def _close_unplanned(planned: dict[str, Any], ledger: Ledger) -> dict[str, Any]:
    """The plan task recorded the run, then failed (creating the target topics): close the run as failed with
    its report, and say so without a second error."""
    from kafka_migration.airflow.lineage import LINEAGE
    from kafka_migration.run.evidence import record_failure

    message = "the plan task failed after planning, before anything was copied (see its log)"
    files = record_failure(ledger, planned["run_id"], message, settings.reports_dir(), LINEAGE)
    if files is not None:
        _log_report(files)
    raise PlanFailed(f"Run {planned['run_id']} closed as failed: {message}.")


def _summarize(
    planned: dict[str, Any], path: Path, ledger: Ledger, ids: dict[str, str], groups: SummaryGroupSync
) -> dict[str, Any]:
    """Record the run through run/evidence.py, as the CLI's run does; the group sync between its topics and
    its close, when every topic is verified and the target lost nothing."""
    from kafka_migration.airflow.lineage import LINEAGE
    from kafka_migration.run.evidence import RunEvidence, record_dry_run, record_failure, record_run

    plan = load_plan(path, planned["run_id"], ledger)
    if planned["dry_run"]:
        groups.run()  # plans the groups' offsets only, as the run planned its topics
        record_dry_run(ledger, plan)
        log.info("Dry run of %s finished: nothing was created or copied.", plan.run_id)
        groups.check()
        return {"run_id": plan.run_id, "verified": False, "dry_run": True}
    for warning in plan.warnings:
        log.warning("%s", warning)
    try:
        hold_leases(plan, ledger)  # before anything is stored: another run may have taken the leases over
    except LeaseLostError as exc:
        record_failure(ledger, plan.run_id, str(exc), settings.reports_dir(), LINEAGE)  # no evidence of this run's
        raise
    if planned.get("nothing_new"):
        copy: list[StepResults] = []
        verify: list[StepResults] = []
        evidence = RunEvidence(plan)
    else:
        copy, verify = _step_results(plan, path, "copy"), _step_results(plan, path, "verify")
        evidence = RunEvidence(plan, merge(copy), merge(verify), ids)
        log.info("\n%s", render_table(evidence.rows))

    def sync_groups(done: RunEvidence) -> None:
        if done.topics_verified and not plan.unaccepted_losses:
            groups.run()  # the offset map it translates through is the one just stored; keeps a standby warm
        else:
            groups.skip(
                "not every topic is verified" if not done.topics_verified else "the target lost verified records"
            )

    timings = _timings(ledger, plan, path, copy, verify)
    _log_report(record_run(ledger, evidence, timings, settings.reports_dir(), sync_groups, LINEAGE))
    if timings is not None:
        log.info("%s", timings_line(timings))
    if evidence.nothing_new:
        log.info("Run %s: nothing new on the source since the last verified run; nothing copied.", plan.run_id)
    if evidence.topics_verified:
        _raise_for_losses(plan)
    else:
        bad = [r.source_topic for r in evidence.rows if r.verdict != VERIFIED]
        raise RuntimeError(
            f"Migration {plan.run_id} NOT verified: {plural(len(bad), 'topic')} not verified: {some(bad, most=20)}"
        )
    if not evidence.nothing_new:
        log.info("Migration %s verified: every partition matches on count and checksum.", plan.run_id)
    groups.check()
    return {"run_id": plan.run_id, "verified": True, "topics": len(plan.topics), "records": evidence.copied}


def _raise_for_losses(plan: MigrationPlan) -> None:
    """Fail the summary when the target lost verified records nobody accepted (the run's status: target_lost)."""
    if plan.unaccepted_losses:
        raise RuntimeError(
            f"{verdict_line(plan)} (see the warnings above and the report). Re-migrate to a new target topic "
            "(Param rename), or accept the loss (Param accept_target_loss)."
        )


def _timings(
    ledger: Ledger, plan: MigrationPlan, path: Path, copy: list[StepResults], verify: list[StepResults]
) -> RunTimings | None:
    """The DAG run's timings; never fails the summary (the verdict matters more than its timing)."""
    try:
        run = ledger.run(plan.run_id)
        started, planned = _airflow_stamps(path, run.started_at if run else None)
        return results_timings(started, planned, copy, verify, time.time())
    except Exception as exc:
        log.warning("Could not work out where the run's time went: %s", exc)
        return None
