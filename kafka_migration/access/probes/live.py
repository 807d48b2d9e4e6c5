"""The live proof of an access sync: each migrated SCRAM user with a password logs in to both clusters and tries
the probes ``rules`` plans from its bindings (produce, consume, commit a group's offset, describe a topic, start a
transaction), and the target must answer each as the source did (topics renamed, the principal mapped).

Each user's clients are ``kafka/sessions.UserSession`` (one per cluster), which asks the brokers; this module
decides who is asked what, where, a few users at a time, and asks again once what was answered differently.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kafka_migration.access.probes.rules import plan_probes, target_user
from kafka_migration.kafka.sessions import UserSession, max_message_bytes
from kafka_migration.model.access import AclBinding, Password, ScramMechanism
from kafka_migration.model.config import DEFAULT_RENAME, ClusterConfig
from kafka_migration.model.naming import renamed
from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome, ProbeReport

DEFAULT_USERS = 20  # users probed by a sync (the first by name): each costs a few logins to each cluster
WORKERS = 8  # users probed at a time (mostly waiting on the brokers: 8 beat 4 by a fifth here, 20 users)
# Probes of a group or a transactional id name it as the source does: the rename is the topics' alone.
NOT_RENAMED = frozenset({ProbeKind.COMMIT, ProbeKind.TRANSACTION})


@dataclass(frozen=True)
class ProbeSetup:
    """Who probes and how the target is asked: each user's password and SASL mechanism (SCRAM-SHA-512 when not
    named), the topic rename template and the principal map the sync carried the bindings with, how many users
    are probed (the first by name) and each client's timeout in seconds."""

    passwords: Mapping[str, Password]
    mechanisms: Mapping[str, ScramMechanism]
    rename: str = DEFAULT_RENAME
    principals: Mapping[str, str] | None = None
    most_users: int = DEFAULT_USERS
    timeout: float = 10.0


def run_probes(
    source: ClusterConfig, target: ClusterConfig, probes: Sequence[Probe], setup: ProbeSetup, settle: float = 2.0
) -> ProbeReport:
    """Ask both clusters every probe as its user (a few users at a time); a probe answered differently is asked
    again once after ``settle`` seconds (a binding just created reaches every broker's authorizer a moment
    later)."""
    passwords, mechanisms, rename, timeout = setup.passwords, setup.mechanisms, setup.rename, setup.timeout
    produced = [p.resource for p in probes if p.kind == ProbeKind.PRODUCE]
    limits = {
        "source": max_message_bytes(source, produced, timeout),
        "target": max_message_bytes(target, (renamed(rename, t) for t in produced), timeout),
    }

    def probe_user(user: str) -> list[ProbeOutcome]:
        other = target_user(user, setup.principals)
        mechanism = mechanisms.get(user, ScramMechanism.SCRAM_SHA_512)
        sessions = (
            UserSession(source, user, passwords[user], mechanism, timeout),
            UserSession(target, other, passwords[user], mechanism, timeout),
        )

        def ask(probe: Probe) -> ProbeOutcome:
            there = probe.resource if probe.kind in NOT_RENAMED else renamed(rename, probe.resource)
            topic = renamed(rename, probe.topic) if probe.topic else None
            src = sessions[0].run(probe.kind, probe.resource, probe.topic, limits["source"].get(probe.resource))
            tgt = sessions[1].run(probe.kind, there, topic, limits["target"].get(there))
            return ProbeOutcome(probe, other, there, src, tgt)

        mine = [ask(p) for p in probes if p.user == user]
        if any(not o.matched for o in mine):
            time.sleep(settle)
            mine = [o if o.matched else ask(o.probe) for o in mine]
        return mine

    users = sorted({p.user for p in probes})
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="access-probe") as pool:
        outcomes = [o for found in pool.map(probe_user, users) for o in found]
    return ProbeReport(tuple(outcomes))


def probe_users(
    source: ClusterConfig,
    target: ClusterConfig,
    bindings: Iterable[AclBinding],
    topics: tuple[Collection[str], Collection[str]],
    setup: ProbeSetup,
) -> ProbeReport:
    """Plan and run the probes of the first ``setup.most_users`` users (by name) given a password (``topics``:
    the topics of each cluster)."""
    users = sorted(setup.passwords)[: max(setup.most_users, 0)]
    probes = plan_probes(bindings, users, topics[0], topics[1], setup.rename)
    return run_probes(source, target, probes, setup)
