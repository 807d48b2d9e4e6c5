"""Scenario 10's pieces: the source's access control as a shared production cluster holds it (bindings of
every kind a client can write, SCRAM users), the target cleaned between repetitions, and one
``kafka-migrate access sync`` launched and metered as a user runs it."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.bench.common import load1
from harness.bench.meter import TreeMeter

BINDINGS_PER_USER = 10
MECHANISM = "SCRAM-SHA-512"
ITERATIONS = 4096
BATCH = 500  # bindings or users per admin request


def user_name(i: int) -> str:
    return f"svc-{i:04d}"


def bindings_of(i: int) -> list[tuple[str, str, str, str, str, str, str]]:
    """One service's ten bindings, as (resource type, name, pattern, principal, host, operation, permission):
    its topics written and read, its consumer group, transactional ids, idempotent writes on the cluster, a
    shared audit topic read from its own host, and a DENY under a private prefix."""
    user, app = f"User:{user_name(i)}", f"app-{i:04d}"
    host = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
    return [
        ("TOPIC", f"{app}.events", "LITERAL", user, "*", "WRITE", "ALLOW"),
        ("TOPIC", f"{app}.events", "LITERAL", user, "*", "DESCRIBE", "ALLOW"),
        ("TOPIC", f"{app}.", "PREFIXED", user, "*", "READ", "ALLOW"),
        ("TOPIC", f"{app}.private.", "PREFIXED", user, "*", "READ", "DENY"),
        ("TOPIC", "shared.audit", "LITERAL", user, host, "READ", "ALLOW"),
        ("GROUP", f"{app}-consumers", "LITERAL", user, "*", "READ", "ALLOW"),
        ("GROUP", f"{app}-", "PREFIXED", user, "*", "DESCRIBE", "ALLOW"),
        ("TRANSACTIONAL_ID", f"tx-{app}-", "PREFIXED", user, "*", "WRITE", "ALLOW"),
        ("TRANSACTIONAL_ID", f"tx-{app}-", "PREFIXED", user, "*", "DESCRIBE", "ALLOW"),
        ("CLUSTER", "kafka-cluster", "LITERAL", user, "*", "IDEMPOTENT_WRITE", "ALLOW"),
    ]


def _client_binding(fields: tuple[str, str, str, str, str, str, str]) -> Any:
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    restype, name, pattern, principal, host, operation, permission = fields
    return AclBinding(
        ResourceType.BROKER if restype == "CLUSTER" else ResourceType[restype],
        name,
        ResourcePatternType[pattern],
        principal,
        host,
        AclOperation[operation],
        AclPermissionType[permission],
    )


def _chunks(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _admin(settings: dict[str, Any]) -> Any:
    from confluent_kafka.admin import AdminClient

    from kafka_migration.kafka.settings import client_settings

    return AdminClient(client_settings(settings))


def seed_access(settings: dict[str, Any], users: int, passwords_file: Path) -> dict[str, int]:
    """Write ``users`` × 10 bindings and ``users`` SCRAM users to the cluster; their passwords (random, as an
    operator's secrets store holds them) go to ``passwords_file`` for the sync's --credentials."""
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    admin = _admin(settings)
    bindings = [_client_binding(b) for i in range(users) for b in bindings_of(i)]
    for chunk in _chunks(bindings):
        for future in admin.create_acls(list(chunk), request_timeout=60).values():
            future.result(timeout=90)
    passwords = {user_name(i): secrets.token_urlsafe(18) for i in range(users)}
    info = ScramCredentialInfo(ScramMechanism[MECHANISM.replace("-", "_")], ITERATIONS)
    upserts = [UserScramCredentialUpsertion(user, info, password.encode()) for user, password in passwords.items()]
    for chunk in _chunks(upserts):
        for future in admin.alter_user_scram_credentials(list(chunk), request_timeout=60).values():
            future.result(timeout=90)
    passwords_file.write_text(json.dumps(passwords))
    passwords_file.chmod(0o600)
    return {"bindings": len(bindings), "users": len(passwords)}


def clean_target(settings: dict[str, Any], keep_users: Sequence[str]) -> None:
    """Every ACL binding and every SCRAM user but ``keep_users`` removed from the target (not timed)."""
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
        ScramMechanism,
        UserScramCredentialDeletion,
    )

    admin = _admin(settings)
    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    for future in admin.delete_acls([everything], request_timeout=60).values():
        future.result(timeout=90)
    described = admin.describe_user_scram_credentials(request_timeout=60).result(timeout=90)
    deletions = [
        UserScramCredentialDeletion(user, ScramMechanism(info.mechanism))
        for user, description in described.items()
        if user not in keep_users
        for info in description.scram_credential_infos
    ]
    for chunk in _chunks(deletions):
        for future in admin.alter_user_scram_credentials(list(chunk), request_timeout=60).values():
            future.result(timeout=90)


def sync_command(source_config: Path, target_config: Path, passwords: Path, state_dir: Path, *extra: str) -> list[str]:
    import sys

    cli = Path(sys.executable).with_name("kafka-migrate")
    return [
        *([str(cli)] if cli.exists() else [sys.executable, "-m", "kafka_migration.cli"]),
        "access",
        "sync",
        "--source-config",
        str(source_config),
        "--target-config",
        str(target_config),
        "--credentials",
        str(passwords),
        "--super-user",
        "User:admin",
        "--super-user",
        "User:ANONYMOUS",
        "--state-dir",
        str(state_dir),
        "--output",
        "json",
        *extra,
    ]


def run_sync(command: list[str], log: Path) -> dict[str, Any]:
    """One sync, launch to exit, metered (wall, CPU of its process tree); the totals, verdict and logins of its
    JSON document (stdout) kept, its stderr in ``log``."""
    import sys

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    load = load1()
    started = time.monotonic()
    with log.open("w") as err:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, env=env, text=True)
        with TreeMeter(process.pid) as meter:
            out, _ = process.communicate()
    wall = time.monotonic() - started
    try:
        document = json.loads(out)
    except json.JSONDecodeError:
        document = {}
    if process.returncode != 0 or not document:
        raise RuntimeError(
            f"kafka-migrate access sync exited {process.returncode}:\n{out[-2000:]}\n{log.read_text()[-2000:]}"
        )
    logins = document.get("logins") or {}
    return {
        "seconds": round(wall, 3),
        "cpu_seconds": round(meter.cpu_seconds(), 2),
        **meter.figures(),
        "verdict": document.get("verdict"),
        "totals": document.get("totals", {}),
        "logins_proven": sum(1 for login in logins.values() if login.get("outcome") == "proven"),
        "load1_at_start": load,
    }
