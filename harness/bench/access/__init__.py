"""Scenario 10 (``access``, not in the default list): a cluster's access control moved and proven at the size of
a shared production cluster, 10,000 ACL bindings and 1,000 SCRAM users (issue 39: in under a minute).

A source and a target that enforce ACLs (SASL_SSL, SCRAM-SHA-512, StandardAuthorizer, harness/kafka/security.py)
are started once; the source gets 10 bindings for each of N services and N users (tools.bindings_of). Per
repetition the target is emptied first (not timed), then ``kafka-migrate access sync`` runs three times, each
launch to exit: a dry run, the sync (write, log every user in, prove the decisions) and a second sync with
nothing to do. A sync that does not end proven fails the scenario.

The package: tools (seeding, cleaning, one metered sync), report (medians, table, notes).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from harness.bench.access.report import NAME, STEPS, notes, summarize, table
from harness.bench.access.tools import clean_target, run_sync, seed_access, sync_command
from harness.bench.common import say

if TYPE_CHECKING:
    from harness.bench.session import Session

__all__ = ["NAME", "TARGETS", "notes", "run", "seed", "summarize", "table"]

TARGETS = {
    "access.sync_seconds": ("< 60", lambda v: v < 60),
    "access.all_proven": ("== True", lambda v: v is True),
}


def seed(session: Session) -> None:
    from harness.kafka import ClusterSpec, SaslSsl, kafka_clusters
    from harness.kafka.certs import make_pki

    users = session.sizes["access_users"]
    say(f"scenario 10: starting an ACL-enforcing SASL_SSL source and target; {users * 10:,} bindings, {users:,} users")
    started = time.monotonic()
    security = SaslSsl(make_pki(session.work / "access-pki"), acls=True)
    specs = (ClusterSpec("bench-access-source", security), ClusterSpec("bench-access-target", security))
    source, target = session.resources.enter_context(kafka_clusters(*specs, directory=session.work / "access"))
    session.clusters[NAME] = (source, target)
    start_seconds = round(time.monotonic() - started, 2)
    configs = {}
    for role, cluster in (("source", source), ("target", target)):
        configs[role] = session.work / f"access-{role}.json"
        configs[role].write_text(json.dumps(cluster.client_config()))
        configs[role].chmod(0o600)
    passwords = session.work / "access-passwords.json"
    began = time.monotonic()
    seeded = seed_access(source.client_config(), users, passwords)
    session.raw[NAME] = {
        "cluster_start_seconds": start_seconds,
        "seed_seconds": round(time.monotonic() - began, 2),
        "seeded": seeded,
        "configs": {role: str(path) for role, path in configs.items()},
        "passwords": str(passwords),
        "keep_users": [security.admin.name],
    }
    say(f"  started in {start_seconds:.1f} s, seeded in {session.raw[NAME]['seed_seconds']:.1f} s")


def run(session: Session, repeat: int) -> None:
    from pathlib import Path

    raw = session.raw[NAME]
    _, target = session.clusters[NAME]
    configs = {role: Path(path) for role, path in raw["configs"].items()}
    raw["samples"] = {step: [] for step in STEPS}
    raw["cleanup_seconds"] = []
    for i in range(repeat):
        say(f"scenario 10 (access, {raw['seeded']['bindings']:,} bindings), repetition {i + 1}/{repeat}")
        began = time.monotonic()
        clean_target(target.client_config(), raw["keep_users"])
        raw["cleanup_seconds"].append(round(time.monotonic() - began, 2))
        state_dir = session.run_dir()
        for step in STEPS:
            extra = ("--dry-run",) if step == "dry_run" else ()
            command = sync_command(configs["source"], configs["target"], Path(raw["passwords"]), state_dir, *extra)
            sample = run_sync(command, state_dir / f"{step}.log")
            if sample["verdict"] != "proven":
                raise RuntimeError(f"access sync ({step}) ended {sample['verdict']}: {sample['totals']}")
            raw["samples"][step].append(sample)
            say(
                f"    {step}: {sample['seconds']:.1f} s, CPU {sample['cpu_seconds']:.1f} s, "
                f"{sample['logins_proven']:,} logins proven (load {sample['load1_at_start']})"
            )
    clean_target(target.client_config(), raw["keep_users"])
