"""The access sync as a DAG of its own (``kafka_migration_access``): the CLI's ``access sync`` with its options as
Params, the same implementation (access/sync.py), ledger and verdict.

Secrets never ride in a Param, XCom or a log: the clusters' settings come from their Airflow connections, and
the SCRAM passwords from the connection Param ``credentials_conn_id`` names (its extra is the CLI's credentials
file, ``{"alice": "..."}``), which Airflow reads from its metadata database or from a secrets backend alike.
Each password is masked in the task's log before anything runs.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from airflow.sdk import DAG, Param, task

from kafka_migration.airflow.dag_factory import OPTIONAL_TEXT
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.text import plural

log = logging.getLogger(__name__)
CREDENTIALS_CONNECTION = "kafka_migration_scram"


def access_params() -> dict[str, Param]:
    """The trigger form: the CLI's options (``kafka-migrate access sync --help``)."""
    return {
        "source_conn_id": Param(
            "kafka_source",
            type="string",
            minLength=1,
            title="Source connection",
            description="Airflow connection (type kafka) of the source cluster.",
        ),
        "target_conn_id": Param(
            "kafka_target",
            type="string",
            minLength=1,
            title="Target connection",
            description="Airflow connection of the target cluster.",
        ),
        "dry_run": Param(
            False,
            type="boolean",
            title="Dry run",
            description="Plan and prove on paper: write no binding and no credential.",
        ),
        "rename": Param(
            "{topic}",
            type="string",
            pattern=r"^[A-Za-z0-9._-]*\{topic\}[A-Za-z0-9._-]*$",
            title="Target name template",
            description="The runs' topic rename, e.g. 'dc1.{topic}': topic bindings follow it.",
        ),
        "principal_map": Param(
            {},
            type="object",
            title="Principal map",
            description='Source principals to target ones, e.g. {"User:app": "User:app-dc2"}.',
        ),
        "super_users": Param(
            [],
            type="array",
            items={"type": "string"},
            title="Super users",
            description="The clusters' super.users (User:admin), for the decisions.",
        ),
        "remove_stale": Param(
            False,
            type="boolean",
            title="Remove stale bindings",
            description="Also delete bindings this tool created earlier that the source no "
            "longer has (never any other).",
        ),
        "credentials_conn_id": Param(
            CREDENTIALS_CONNECTION,
            type=OPTIONAL_TEXT,
            title="SCRAM passwords connection",
            description="Airflow connection whose extra holds the users' passwords as "
            'JSON, {"alice": "..."} (empty: none; users then need a password).',
        ),
        "probe_users": Param(
            20,
            type="integer",
            minimum=0,
            title="Users probed",
            description="The first N users given a password log in to both clusters and try "
            "what their bindings allow and deny (0: none).",
        ),
    }


def credentials(conn_id: str | None) -> dict[str, Any]:
    """The SCRAM passwords of the connection's extra (none without a connection id), each masked in logs."""
    from airflow.sdk import BaseHook
    from airflow.sdk.log import mask_secret

    from kafka_migration.access.inputs import load_passwords

    if not conn_id:
        return {}
    try:
        conn = BaseHook.get_connection(conn_id)
    except Exception as exc:
        raise ConfigurationError(
            f"Airflow connection {conn_id!r} for the SCRAM passwords does not exist ({exc}); create it with the "
            'passwords as JSON in its extra, {"alice": "..."}, or clear Param credentials_conn_id.'
        ) from None
    try:
        data = json.loads(conn.extra or "{}")
    except ValueError:
        raise ConfigurationError(
            f"The extra of Airflow connection {conn_id!r} is not valid JSON: give the users' passwords as "
            '{"alice": "..."}.'
        ) from None
    found = load_passwords(data, f"(Airflow connection {conn_id!r})")
    for password in found.values():
        mask_secret(password.password)
    return found


def sync(params: dict[str, Any]) -> dict[str, Any]:
    """Run the access sync the Params describe; returns its summary (no secret) or raises with its verdict."""
    from kafka_migration.access.inputs import principal_map
    from kafka_migration.access.sync import AccessSyncOptions, sync_access
    from kafka_migration.airflow.hooks import KafkaClusterHook, LedgerHook
    from kafka_migration.airflow.settings import reports_dir
    from kafka_migration.model.config import param_count, param_flag, param_text
    from kafka_migration.model.naming import validate_rename_template
    from kafka_migration.reports.access_lines import probe_lines
    from kafka_migration.run.files import new_run_id

    declared = sorted(access_params())
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ConfigurationError(
            f"Unknown Param {', '.join(map(repr, unknown))} in the run configuration; this DAG takes "
            f"{', '.join(declared)} (check the spelling)."
        )
    rename = param_text(params, "rename") or "{topic}"
    validate_rename_template(rename)
    principals = principal_map(params.get("principal_map") or {}, "Param principal_map")
    supers = params.get("super_users") or []
    if not isinstance(supers, list) or any(not isinstance(p, str) or ":" not in p for p in supers):
        raise ConfigurationError(f"Param super_users {supers!r} must be a list of principals, e.g. ['User:admin'].")
    passwords = credentials(param_text(params, "credentials_conn_id"))
    source = KafkaClusterHook(param_text(params, "source_conn_id") or "kafka_source", "source").get_cluster_config()
    target = KafkaClusterHook(param_text(params, "target_conn_id") or "kafka_target", "target").get_cluster_config()
    probes = param_count(params, "probe_users")
    result = sync_access(
        source,
        target,
        LedgerHook().get_conn(),
        f"access-{new_run_id('airflow')}",
        AccessSyncOptions(
            rename=rename,
            principals=principals,
            super_users=set(supers),
            dry_run=param_flag(params, "dry_run"),
            remove_stale=param_flag(params, "remove_stale"),
            passwords=passwords,
            probe_users_most=20 if probes is None else probes,
            reports_dir=reports_dir(),
        ),
    )
    plan = result.plan
    lines = [
        f"Access sync {result.sync_id}: {result.source_cluster_id} -> {result.target_cluster_id}"
        + (" (dry run: nothing written)" if result.dry_run else ""),
        f"  {plural(len(plan.add), 'binding')} to add, {len(plan.present)} present, {len(plan.conflicts)} in "
        f"conflict, {len(plan.remove)} to remove; {result.actions_checked:,} actions decided on both clusters, "
        f"{len(result.differences)} differently",
        f"  SCRAM: {len(result.users.add)} to create, {len(result.users.present)} present, needs a password: "
        f"{', '.join(result.users.users_needing_a_password) or 'none'}; failed logins: "
        f"{', '.join(result.failed_logins) or 'none'}",
        *probe_lines(result.probes),
        *(f"  conflict: {b.describe()}" for b in plan.conflicts),
        *(f"  different: {d.describe()}" for d in result.differences[:10]),
        *([f"  Report: {result.report}"] if result.report else []),
    ]
    log.info("\n%s", "\n".join(lines))
    summary = {
        "sync_id": result.sync_id,
        "verdict": str(result.verdict),  # XCom: plain text
        "added": len(plan.add),
        "present": len(plan.present),
        "differences": len(result.differences),
        "probes": len(result.probes.outcomes),
        "probes_different": len(result.probes.mismatches),
        "report": str(result.report) if result.report else None,
    }
    if not result.proven:
        raise RuntimeError(
            f"Access sync {result.sync_id} NOT proven (recorded in the ledger: kafka-migrate access show "
            f"{result.sync_id}); see the lines above."
        )
    return summary


def access_dag(dag_id: str, doc_md: str) -> DAG:
    """One task, ``sync``: bad input and missing permissions fail it at once, an unproven sync after recording."""
    with DAG(
        dag_id=dag_id,
        description="Carry ACL bindings and SCRAM users to the target cluster and prove them",
        schedule=None,
        catchup=False,
        max_active_runs=1,
        params=access_params(),
        tags=["kafka", "migration", "access"],
        doc_md=doc_md,
    ) as dag:

        @task(task_id="sync", retries=0)
        def sync_task(params: dict | None = None) -> dict:  # type: ignore[type-arg]
            from airflow.sdk.exceptions import AirflowFailException

            try:
                return sync(dict(params or {}))
            except (ConfigurationError, RuntimeError) as exc:  # a retry would meet the same input or verdict
                raise AirflowFailException(str(exc)) from None

        sync_task()
    return dag
