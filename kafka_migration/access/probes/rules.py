"""Which live probes a sync asks (pure): from the source's bindings of each migrated user (and of ``User:*``), the
topics, groups and transactional ids it speaks of, as ``model/probes.Probe`` values. ``live.py`` asks them.

The decision check (``acls/rules``) computes what the authorizers should decide; the probes ask the brokers
themselves, so a binding that did not reach the target's authorizer, a DENY planted there, or a user whose
credential differs shows up as the broker's own answer. A probe touches only topics on both clusters (renamed on
the target) and names of its own under a prefix (``<prefix>km-probe``); a literal transactional id is never
initialized, since it may be a live producer's (``kafka/sessions.py`` tells how each probe leaves nothing behind).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from kafka_migration.model.access import WILDCARD, WILDCARD_PRINCIPAL, AclBinding, PatternType, ResourceType
from kafka_migration.model.config import DEFAULT_RENAME
from kafka_migration.model.naming import renamed
from kafka_migration.model.probes import PROBE_SUFFIX, Probe, ProbeKind

DEFAULT_LIMIT = 24  # probes per user


def target_user(user: str, principals: Mapping[str, str] | None) -> str:
    """The user the target is asked as: the principal map's ``User:`` counterpart, else the same name."""
    mapped = (principals or {}).get(f"User:{user}", f"User:{user}")
    return mapped.split(":", 1)[1] if mapped.startswith("User:") else user


def plan_probes(
    bindings: Iterable[AclBinding],
    users: Iterable[str],
    source_topics: Collection[str],
    target_topics: Collection[str],
    rename: str = DEFAULT_RENAME,
    limit: int = DEFAULT_LIMIT,
) -> list[Probe]:
    """The probes of each user, from the source's bindings of its principal and of ``User:*``: describe every
    topic named; produce and consume those on both clusters; commit for each group (on the user's first such
    topic); a transaction for each prefixed (or ``*``) transactional id. At most ``limit`` a user."""
    on_both = {t for t in source_topics if renamed(rename, t) in set(target_topics)}
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
            wanted.append(Probe(user, ProbeKind.DESCRIBE, topic))
            if topic in on_both:
                wanted += [Probe(user, ProbeKind.PRODUCE, topic), Probe(user, ProbeKind.CONSUME, topic)]
        commit_topic = next((t for t in topics if t in on_both), topics[0] if topics else PROBE_SUFFIX)
        for b in (b for b in mine if b.resource_type in (ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID)):
            prefixed = b.pattern_type == PatternType.PREFIXED
            if b.resource_type == ResourceType.TRANSACTIONAL_ID and not prefixed and b.resource_name != WILDCARD:
                continue  # a literal id may be a live producer's: see the module
            if prefixed:
                name = f"{b.resource_name}{PROBE_SUFFIX}"
            else:
                name = PROBE_SUFFIX if b.resource_name == WILDCARD else b.resource_name
            if b.resource_type == ResourceType.GROUP:
                wanted.append(Probe(user, ProbeKind.COMMIT, name, commit_topic))
            else:
                wanted.append(Probe(user, ProbeKind.TRANSACTION, name))
        unique = list(dict.fromkeys(wanted))
        probes += unique[:limit]
    return probes
