"""The live proof of an access sync: each migrated SCRAM user with a password logs in to both clusters and tries
what its bindings speak of (produce, consume, commit a group's offset, describe a topic, start a transaction),
and the target must answer each as the source did (topics renamed, the principal mapped).

The decision check (``rules``) computes what the authorizers should decide; this asks the brokers themselves,
so a binding that did not reach the target's authorizer, a DENY planted there, or a user whose credential differs
shows up as the broker's own answer. How each probe is asked, so that it leaves
nothing the migration would copy or count, is told in ``kafka/sessions.py``, which asks it.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafka_migration.access.rules import split_template
from kafka_migration.kafka.sessions import (
    COMMIT,
    CONSUME,
    DESCRIBE,
    INCONCLUSIVE,
    PROBE_SUFFIX,
    PRODUCE,
    TRANSACTION,
    UserSession,
    max_message_bytes,
)
from kafka_migration.model.access import WILDCARD, WILDCARD_PRINCIPAL, AclBinding, Password, PatternType, ResourceType
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.text import plural, some

DEFAULT_LIMIT = 24  # probes per user
DEFAULT_USERS = 20  # users probed by a sync (the first by name): each costs a few logins to each cluster
WORKERS = 8  # users probed at a time (mostly waiting on the brokers: 8 beat 4 by a fifth here, 20 users)


@dataclass(frozen=True, order=True)
class Probe:
    """One thing a user tries: ``kind`` on the source's ``resource`` (a topic, a group or a transactional id);
    a commit names the topic whose offset it commits."""

    user: str
    kind: str
    resource: str
    topic: str | None = None

    def describe(self) -> str:
        what = {
            PRODUCE: f"produce to topic {self.resource}",
            CONSUME: f"consume topic {self.resource}",
            COMMIT: f"commit an offset of topic {self.topic} for group {self.resource}",
            DESCRIBE: f"describe topic {self.resource}",
            TRANSACTION: f"start a transaction with transactional id {self.resource}",
        }[self.kind]
        return f"{self.user}: {what}"


@dataclass(frozen=True)
class ProbeOutcome:
    """What each cluster answered a probe (``allowed``, ``denied (ERROR)`` or ``inconclusive: why``), the target
    asked with the renamed topic and the mapped user."""

    probe: Probe
    target_user: str
    target_resource: str
    source: str
    target: str

    @property
    def matched(self) -> bool:
        return self.source == self.target and not self.source.startswith(INCONCLUSIVE)

    def describe(self) -> str:
        there = "" if self.target_resource == self.probe.resource else f" ({self.target_resource} on the target)"
        verdict = "same" if self.matched else "DIFFERENT"
        return f"{self.probe.describe()}{there}: source {self.source}, target {self.target} ({verdict})"


@dataclass(frozen=True)
class ProbeReport:
    """Every probe's outcome."""

    outcomes: tuple[ProbeOutcome, ...] = ()

    @property
    def mismatches(self) -> list[ProbeOutcome]:
        return [o for o in self.outcomes if not o.matched]

    @property
    def proven(self) -> bool:
        return not self.mismatches


# -- which probes (pure) ---------------------------------------------------------------------------------------


def _rename(name: str, rename: str) -> str:
    before, after = split_template(rename)
    return f"{before}{name}{after}"


def target_user(user: str, principals: Mapping[str, str] | None) -> str:
    """The user the target is asked as: the principal map's ``User:`` counterpart, else the same name."""
    mapped = (principals or {}).get(f"User:{user}", f"User:{user}")
    return mapped.split(":", 1)[1] if mapped.startswith("User:") else user


def plan_probes(
    bindings: Iterable[AclBinding],
    users: Iterable[str],
    source_topics: Collection[str],
    target_topics: Collection[str],
    rename: str = "{topic}",
    limit: int = DEFAULT_LIMIT,
) -> list[Probe]:
    """The probes of each user, from the source's bindings of its principal and of ``User:*``: describe every
    topic named; produce and consume those on both clusters; commit for each group (on the user's first such
    topic); a transaction for each prefixed (or ``*``) transactional id. At most ``limit`` a user."""
    on_both = {t for t in source_topics if _rename(t, rename) in set(target_topics)}
    relevant = sorted(bindings)
    probes: list[Probe] = []
    for user in sorted(set(users)):
        mine = [b for b in relevant if b.principal in (f"User:{user}", WILDCARD_PRINCIPAL)]
        topics: list[str] = []
        for b in (b for b in mine if b.resource_type == ResourceType.TOPIC):
            if b.pattern_type == PatternType.PREFIXED:
                matching = sorted(t for t in on_both if t.startswith(b.resource_name))
                names = matching[:1] or [f"{b.resource_name}{PROBE_SUFFIX}"]
            elif b.resource_name == WILDCARD:
                names = sorted(on_both)[:1] or [PROBE_SUFFIX]
            else:
                names = [b.resource_name]
            topics += [n for n in names if n not in topics]
        wanted: list[Probe] = []
        for topic in topics:
            wanted.append(Probe(user, DESCRIBE, topic))
            if topic in on_both:
                wanted += [Probe(user, PRODUCE, topic), Probe(user, CONSUME, topic)]
        commit_topic = next((t for t in topics if t in on_both), topics[0] if topics else PROBE_SUFFIX)
        for b in (b for b in mine if b.resource_type in (ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID)):
            if (
                b.resource_type == ResourceType.TRANSACTIONAL_ID
                and b.pattern_type != PatternType.PREFIXED
                and b.resource_name != WILDCARD
            ):
                continue  # a literal id may be a live producer's: see the module
            if b.pattern_type == PatternType.PREFIXED:
                name = f"{b.resource_name}{PROBE_SUFFIX}"
            else:
                name = PROBE_SUFFIX if b.resource_name == WILDCARD else b.resource_name
            kind = COMMIT if b.resource_type == ResourceType.GROUP else TRANSACTION
            wanted.append(Probe(user, kind, name, commit_topic if kind == COMMIT else None))
        unique = list(dict.fromkeys(wanted))
        probes += unique[:limit]
    return probes


# -- asking both clusters -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeSetup:
    """Who probes and how the target is asked: each user's password and SASL mechanism (SCRAM-SHA-512 when not
    named), the topic rename template and the principal map the sync carried the bindings with, how many users
    are probed (the first by name) and each client's timeout in seconds."""

    passwords: Mapping[str, Password]
    mechanisms: Mapping[str, str]
    rename: str = "{topic}"
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
    limits = {
        "source": max_message_bytes(source, (p.resource for p in probes if p.kind == PRODUCE), timeout),
        "target": max_message_bytes(
            target, (_rename(p.resource, rename) for p in probes if p.kind == PRODUCE), timeout
        ),
    }

    def probe_user(user: str) -> list[ProbeOutcome]:
        other = target_user(user, setup.principals)
        mechanism = mechanisms.get(user, "SCRAM-SHA-512")
        sessions = (
            UserSession(source, user, passwords[user], mechanism, timeout),
            UserSession(target, other, passwords[user], mechanism, timeout),
        )

        def ask(probe: Probe) -> ProbeOutcome:
            there = probe.resource if probe.kind in (COMMIT, TRANSACTION) else _rename(probe.resource, rename)
            topic = _rename(probe.topic, rename) if probe.topic else None
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


def ledger_rows(report: ProbeReport) -> list[dict[str, Any]]:
    """The report as the ledger's km_access_probes rows."""
    return [
        {
            "user": o.probe.user,
            "target_user": o.target_user,
            "probe": o.probe.kind,
            "resource": o.probe.resource,
            "target_resource": o.target_resource,
            "topic": o.probe.topic,
            "source_outcome": o.source,
            "target_outcome": o.target,
            "matched": int(o.matched),
        }
        for o in report.outcomes
    ]


def outcome_from_row(row: Mapping[str, Any]) -> ProbeOutcome:
    """A km_access_probes row as the outcome it records."""
    probe = Probe(row["user"], row["probe"], row["resource"], row["topic"])
    return ProbeOutcome(probe, row["target_user"], row["target_resource"], row["source_outcome"], row["target_outcome"])


def render_probes(report: ProbeReport, most: int = 10) -> list[str]:
    """The console's lines of a probe report: a total, and each mismatch named."""
    if not report.outcomes:
        return []
    users = {o.probe.user for o in report.outcomes}
    mismatches = report.mismatches
    lines = [
        f"  live probes: {plural(len(report.outcomes), 'probe')} of {plural(len(users), 'user')}, "
        f"{len(report.outcomes) - len(mismatches)} answered alike by both clusters"
    ]
    lines += [f"  probe DIFFERENT: {o.describe()}" for o in mismatches[:most]]
    if len(mismatches) > most:
        lines.append(f"  ... and {len(mismatches) - most} more (kafka-migrate access show)")
    return lines


def verdict(report: ProbeReport) -> str | None:
    """None when every probe matched; else one line naming the differences."""
    if report.proven:
        return None
    return (
        f"{plural(len(report.mismatches), 'probe')} answered differently: "
        f"{some([o.describe() for o in report.mismatches], most=3)}"
    )
