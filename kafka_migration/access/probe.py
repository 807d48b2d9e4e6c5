"""The live proof of an access sync: each migrated SCRAM user with a password logs in to both clusters and tries
what its bindings speak of (produce, consume, commit a group's offset, describe a topic, start a transaction),
and the target must answer each as the source did (topics renamed, the principal mapped).

The decision check (``rules``) computes what the authorizers should decide; this asks the brokers themselves,
so a binding that did not reach the target's authorizer, a DENY planted there, or a user whose credential differs
shows up as the broker's own answer. The probes are built to leave nothing the migration would copy or count:

- produce: one record larger than the topic's ``max.message.bytes``. The broker checks WRITE first, then the
  size: an allowed producer gets MESSAGE_TOO_LARGE and nothing is appended; a denied one
  TOPIC_AUTHORIZATION_FAILED. A topic whose limit cannot be read is not produced to.
- consume: a fetch from the end of partition 0 (assigned, no group membership, nothing committed): READ allowed
  reaches the end of the partition, denied gets TOPIC_AUTHORIZATION_FAILED.
- commit: an offset commit for the group on a partition the topic does not have: the broker checks READ on the
  group and on the topic, then refuses the unknown partition (UNKNOWN_TOPIC_OR_PART: allowed; nothing stored).
- describe: a topic's metadata (an absent topic answers UNKNOWN_TOPIC_OR_PART when DESCRIBE is allowed).
- transaction: ``init_transactions`` with a transactional id of the binding's prefix (``<prefix>km-probe``, never
  an id an application uses: initializing a live id would fence its producer), then an empty transaction begun
  and aborted. The broker keeps the id's producer state in ``__transaction_state`` (not copied by a run; it
  expires after ``transactional.id.expiration.ms``). LITERAL transactional ids are therefore not probed.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafka_migration.access.rules import split_template
from kafka_migration.kafka.acls import AUTHORIZATION_FAILURES
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.access import (
    GROUP,
    PREFIXED,
    TOPIC,
    TRANSACTIONAL_ID,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    Password,
)
from kafka_migration.model.config import ClusterConfig, scrub
from kafka_migration.model.text import plural, some

PRODUCE, CONSUME, COMMIT, DESCRIBE, TRANSACTION = "produce", "consume", "commit", "describe", "transaction"
ALLOWED = "allowed"
DENIED = "denied"  # an outcome "denied (TOPIC_AUTHORIZATION_FAILED)": the broker's error named
INCONCLUSIVE = "inconclusive"  # no answer, or one that says nothing of the authorizer
PROBE_SUFFIX = "km-probe"  # appended to a prefix: a name of the prefix no application uses
NO_PARTITION = 999_999  # a partition no topic has: a commit to it stores nothing
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
        for b in (b for b in mine if b.resource_type == TOPIC):
            if b.pattern_type == PREFIXED:
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
        for b in (b for b in mine if b.resource_type in (GROUP, TRANSACTIONAL_ID)):
            if b.resource_type == TRANSACTIONAL_ID and b.pattern_type != PREFIXED and b.resource_name != WILDCARD:
                continue  # a literal id may be a live producer's: see the module
            if b.pattern_type == PREFIXED:
                name = f"{b.resource_name}{PROBE_SUFFIX}"
            else:
                name = PROBE_SUFFIX if b.resource_name == WILDCARD else b.resource_name
            kind = COMMIT if b.resource_type == GROUP else TRANSACTION
            wanted.append(Probe(user, kind, name, commit_topic if kind == COMMIT else None))
        unique = list(dict.fromkeys(wanted))
        probes += unique[:limit]
    return probes


# -- asking a cluster ------------------------------------------------------------------------------------------


def _outcome(error: Any) -> str:
    """A broker's answer as an outcome: an authorization failure is a denial; the answers a probe expects of an
    allowed request (see the module) are ``allowed``; anything else is inconclusive."""
    name = error.name() if hasattr(error, "name") else str(error)
    if name in AUTHORIZATION_FAILURES:
        return f"{DENIED} ({name})"
    if name in ("MSG_SIZE_TOO_LARGE", "UNKNOWN_TOPIC_OR_PART", "_PARTITION_EOF"):
        return ALLOWED
    reason = error.str() if hasattr(error, "str") else str(error)
    return f"{INCONCLUSIVE}: {name} ({reason})"


class UserSession:
    """One user's clients on one cluster: the cluster's connection settings with the user's SASL login."""

    def __init__(self, config: ClusterConfig, user: str, password: Password, mechanism: str, timeout: float) -> None:
        self.config, self.user, self.timeout = config, user, timeout
        self._secret = password.password
        self._admin: Any = None
        self.settings = {
            **config.settings,
            "sasl.mechanism": mechanism,
            "sasl.username": user,
            "sasl.password": password.password,
            "socket.connection.setup.timeout.ms": int(timeout * 1000),
        }

    def _scrub(self, text: str) -> str:
        return scrub(text, self.settings).replace(self._secret, "***")

    def run(self, kind: str, resource: str, topic: str | None, max_message_bytes: int | None) -> str:
        from confluent_kafka import KafkaException

        tries = {
            DESCRIBE: lambda: self.describe(resource),
            PRODUCE: lambda: self.produce(resource, max_message_bytes),
            CONSUME: lambda: self.consume(resource),
            COMMIT: lambda: self.commit(resource, topic or PROBE_SUFFIX),
            TRANSACTION: lambda: self.transaction(resource),
        }
        try:
            return tries[kind]()
        except KafkaException as exc:
            return self._scrub(_outcome(exc.args[0] if exc.args else exc))
        except Exception as exc:  # a client that could not even start: the probe says nothing of the authorizer
            return self._scrub(f"{INCONCLUSIVE}: {type(exc).__name__} ({exc})")

    def describe(self, topic: str) -> str:
        from confluent_kafka import TopicCollection
        from confluent_kafka.admin import AdminClient

        if self._admin is None:  # one per user and cluster: its login is paid once for every describe
            self._admin = AdminClient(client_settings(self.settings))
        future = self._admin.describe_topics(TopicCollection([topic]), request_timeout=self.timeout)[topic]
        future.result(timeout=self.timeout + 5)
        return ALLOWED

    def produce(self, topic: str, max_message_bytes: int | None) -> str:
        from confluent_kafka import Producer

        if max_message_bytes is None:
            return f"{INCONCLUSIVE}: the topic's max.message.bytes could not be read, so no record was sent"
        size = max_message_bytes + 1
        producer = Producer(
            client_settings(
                {
                    **self.settings,
                    "enable.idempotence": False,
                    "acks": "all",
                    "retries": 0,
                    "compression.type": "none",
                    "linger.ms": 0,
                    "allow.auto.create.topics": False,
                    "message.max.bytes": min(size + 4096, 1_000_000_000),
                    "message.timeout.ms": int(self.timeout * 1000),
                }
            )
        )
        answers: list[Any] = []
        producer.produce(topic, b"\0" * size, partition=0, on_delivery=lambda err, msg: answers.append((err, msg)))
        producer.flush(self.timeout + 5)
        if not answers:
            return f"{INCONCLUSIVE}: no delivery report within {self.timeout:.0f}s"
        error, message = answers[0]
        if error is None:  # the topic took a record over its own limit: say so, loudly
            return f"{INCONCLUSIVE}: a probe record was appended at offset {message.offset()} of partition 0"
        return self._scrub(_outcome(error))

    def _consumer(self, group: str) -> Any:
        from confluent_kafka import Consumer

        return Consumer(
            client_settings(
                {
                    **self.settings,
                    "group.id": group,
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "enable.partition.eof": True,
                    "allow.auto.create.topics": False,
                    "auto.offset.reset": "latest",
                    "fetch.wait.max.ms": 10,
                }
            )
        )

    def consume(self, topic: str) -> str:
        from confluent_kafka import OFFSET_END, TopicPartition

        consumer = self._consumer(PROBE_SUFFIX)
        try:
            # Without DESCRIBE the partition never gets a leader, and an assigned consumer waits silently.
            described = consumer.list_topics(topic, timeout=self.timeout).topics.get(topic)
            refused = described is not None and described.error is not None
            if refused and described.error.name() in AUTHORIZATION_FAILURES:
                return self._scrub(_outcome(described.error))
            consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is None:
                    continue
                error = message.error()
                if error is None:
                    return ALLOWED  # a record written meanwhile: read, not committed
                if error.name() == "GROUP_AUTHORIZATION_FAILED":
                    continue  # the consumer's coordinator lookup, not the fetch: the commit probe asks the group
                return self._scrub(_outcome(error))
            return f"{INCONCLUSIVE}: no fetch answered within {self.timeout:.0f}s"
        finally:
            consumer.close()

    def commit(self, group: str, topic: str) -> str:
        from confluent_kafka import TopicPartition

        consumer = self._consumer(group)
        try:
            committed = consumer.commit(offsets=[TopicPartition(topic, NO_PARTITION, 0)], asynchronous=False)
            errors = [p.error for p in committed or () if p.error is not None]
            return self._scrub(_outcome(errors[0])) if errors else f"{INCONCLUSIVE}: the commit was accepted"
        finally:
            consumer.close()

    def transaction(self, transactional_id: str) -> str:
        from confluent_kafka import Producer

        producer = Producer(
            client_settings(
                {
                    **self.settings,
                    "transactional.id": transactional_id,
                    "transaction.timeout.ms": 60_000,
                    "message.timeout.ms": 60_000,
                }
            )
        )
        producer.init_transactions(self.timeout)
        producer.begin_transaction()
        producer.abort_transaction(self.timeout)
        return ALLOWED


def max_message_bytes(config: ClusterConfig, topics: Iterable[str], timeout: float) -> dict[str, int]:
    """Each topic's ``max.message.bytes``, read with the sync's own connection (the users may not
    DescribeConfigs); a topic it cannot read is left out, and is then not produced to."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    wanted = sorted(set(topics))
    if not wanted:
        return {}
    admin = AdminClient(client_settings(config.settings))
    resources = [ConfigResource(ResourceType.TOPIC, t) for t in wanted]
    found = {}
    for resource, future in admin.describe_configs(resources, request_timeout=timeout).items():
        try:
            entry = future.result(timeout=timeout + 5).get("max.message.bytes")
        except Exception:
            continue
        if entry is not None and entry.value is not None:
            found[resource.name] = int(entry.value)
    return found


def run_probes(
    source: ClusterConfig,
    target: ClusterConfig,
    probes: Sequence[Probe],
    passwords: Mapping[str, Password],
    mechanisms: Mapping[str, str],
    rename: str = "{topic}",
    principals: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    settle: float = 2.0,
) -> ProbeReport:
    """Ask both clusters every probe as its user (a few users at a time); a probe answered differently is asked
    again once after ``settle`` seconds (a binding just created reaches every broker's authorizer a moment
    later)."""
    limits = {
        "source": max_message_bytes(source, (p.resource for p in probes if p.kind == PRODUCE), timeout),
        "target": max_message_bytes(
            target, (_rename(p.resource, rename) for p in probes if p.kind == PRODUCE), timeout
        ),
    }

    def probe_user(user: str) -> list[ProbeOutcome]:
        other = target_user(user, principals)
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
    passwords: Mapping[str, Password],
    mechanisms: Mapping[str, str],
    topics: tuple[Collection[str], Collection[str]],
    rename: str = "{topic}",
    principals: Mapping[str, str] | None = None,
    most_users: int = DEFAULT_USERS,
    timeout: float = 10.0,
) -> ProbeReport:
    """Plan and run the probes of the first ``most_users`` users (by name) given a password (``topics``: the
    topics of each cluster)."""
    users = sorted(passwords)[: max(most_users, 0)]
    probes = plan_probes(bindings, users, topics[0], topics[1], rename)
    return run_probes(source, target, probes, passwords, mechanisms, rename, principals, timeout)


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
