"""Cutover pre-flight: is it safe to switch clusters now?

Two conditions make a switch exact: nobody writes to the topics being switched
(their end offsets stand still for ``quiet_seconds``, and no transaction is open),
and no consumer of the selected groups is running on either side (their committed
offsets cannot move while they are translated). The decisions are pure functions;
``preflight`` reads the clusters through ``KafkaCluster`` and raises
``CutoverRefusedError`` naming every topic and group at fault and what to do.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kafka_migration.cutover.refusal import Reason
from kafka_migration.exceptions import ConfigurationError, CutoverRefusedError, NoTopicsMatchedError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.model.config import compile_group_pattern
from kafka_migration.model.state import IDLE_GROUP_STATES
from kafka_migration.model.text import noun_for, partition_list, per_partition, plural, some
from kafka_migration.run.discovery import select_topics

TopicPartitionKey = tuple[str, int]
Ends = Mapping[TopicPartitionKey, tuple[int, int]]  # (high watermark, last stable offset)


@dataclass(frozen=True)
class Preflight:
    """What the checks saw: the quiet end offsets and the groups that will move."""

    role: str  # which cluster was checked for writers ("source"; "target" for a failback)
    topics: tuple[str, ...]
    end_offsets: dict[TopicPartitionKey, int]
    groups: tuple[str, ...]
    group_states: dict[str, dict[str, str]] = field(default_factory=dict)  # cluster role -> group -> state

    def to_dict(self) -> dict[str, object]:
        return {
            "role": self.role,
            "topics": list(self.topics),
            "end_offsets": [[t, p, o] for (t, p), o in sorted(self.end_offsets.items())],
            "groups": list(self.groups),
            "group_states": {k: dict(v) for k, v in self.group_states.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Preflight:
        return cls(
            role=str(data["role"]),
            topics=tuple(data["topics"]),  # type: ignore[arg-type]
            end_offsets={(str(t), int(p)): int(o) for t, p, o in data["end_offsets"]},  # type: ignore[attr-defined]
            groups=tuple(data["groups"]),  # type: ignore[arg-type]
            group_states={k: dict(v) for k, v in dict(data.get("group_states") or {}).items()},  # type: ignore[call-overload]
        )


def moved_partitions(before: Ends, after: Ends) -> dict[str, list[tuple[int, int, int]]]:
    """Per topic, the partitions whose end moved: (partition, end before, end after)."""
    moved: dict[str, list[tuple[int, int, int]]] = {}
    for key in sorted(set(before) | set(after)):
        start = before.get(key, (0, 0))[0]
        end = after.get(key, (0, 0))[0]
        if start != end:
            moved.setdefault(key[0], []).append((key[1], start, end))
    return moved


def open_transactions(ends: Ends) -> dict[str, list[int]]:
    """Partitions whose last stable offset is below the high watermark: a transaction is still open."""
    found: dict[str, list[int]] = {}
    for (topic, partition), (high, stable) in sorted(ends.items()):
        if stable < high:
            found.setdefault(topic, []).append(partition)
    return found


def quiet_problems(
    moved: Mapping[str, list[tuple[int, int, int]]], open_tx: Mapping[str, list[int]], quiet_seconds: float, role: str
) -> list[str]:
    return [r.text for r in quiet_reasons(moved, open_tx, quiet_seconds, role)]


def quiet_reasons(
    moved: Mapping[str, list[tuple[int, int, int]]],
    open_tx: Mapping[str, list[int]],
    quiet_seconds: float,
    role: str,
    what: str = "cutover",
) -> list[Reason]:
    """One reason per topic written to, and one per topic holding an open transaction."""
    reasons = []
    for topic, parts in sorted(moved.items()):
        records = sum(max(0, b - a) for _, a, b in parts)
        reasons.append(
            Reason(
                f"{role} topic {topic} is still written to: {plural(records, 'new offset')} within "
                f"{quiet_seconds:g} s in {partition_list(p for p, _, _ in parts)} "
                f"({per_partition([(p, f'{a} -> {b}') for p, a, b in parts])}). Switch or stop its producers first, "
                f"then run the {what} again.",
                role,
                topic=topic,
            )
        )
    for topic, parts in sorted(open_tx.items()):
        reasons.append(
            Reason(
                f"{role} topic {topic} has an open transaction in {partition_list(parts)}: a "
                "transactional producer has neither committed nor aborted. Stop it cleanly (or wait for "
                f"transaction.timeout.ms), then run the {what} again.",
                role,
                topic=topic,
            )
        )
    return reasons


GroupStates = dict[str, dict[str, tuple[str, int]]]  # cluster role -> group -> (state, members)


def is_active(state: str, members: int) -> bool:
    """Decided by state: a group with members is never EMPTY or DEAD, whatever its member list says."""
    return members > 0 or state.upper() not in IDLE_GROUP_STATES


def active_group_problems(states: Mapping[str, Mapping[str, tuple[str, int]]]) -> list[str]:
    return [r.text for r in active_group_reasons(states)]


# What a refusal for active members says of consumers that were stopped without closing (killed, crashed).
SESSION_TIMEOUT_NOTE = (
    "A consumer stopped without closing (killed) stays a member until its session timeout passes "
    "(session.timeout.ms, 45 s by default; group.consumer.session.timeout.ms on the broker for the consumer "
    "protocol): if these instances are gone, run the {what} again once it has"
)


def active_group_reasons(
    states: Mapping[str, Mapping[str, tuple[str, int]]],
    what: str = "cutover",
    members: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> list[Reason]:
    """``states``: cluster role -> group -> (state, members). Members on either side stop the cutover.
    ``members``: role -> group -> its members as named by the cluster (client id and host), when read."""
    reasons = []
    for role, groups in states.items():
        active = sorted(g for g, (s, n) in groups.items() if is_active(s, n))
        if active:
            described = [f"{g} ({groups[g][0]}, {plural(groups[g][1], 'member')})" for g in active]
            named = (members or {}).get(role, {})
            who = [f"{g}: {some(list(named[g]), most=5)}" for g in active if named.get(g)]
            reasons.append(
                Reason(
                    f"{plural(len(active), 'consumer group')} {noun_for(len(active), 'has')} active members on the "
                    f"{role} cluster: {some(described, most=10)}"
                    + (f"; members {'; '.join(who[:10])}" if who else "")
                    + f". Stop these consumers (all instances) and run the {what} again; their committed offsets "
                    f"must not move while they are translated. {SESSION_TIMEOUT_NOTE.format(what=what)}.",
                    role,
                    groups=tuple(active),
                )
            )
    return reasons


def groups_on_topics(
    group_ids: Iterable[str],
    offsets: Callable[[str], Mapping[TopicPartitionKey, object]],
    topics: Iterable[str],
    include: str | None,
    exclude: str | None,
) -> tuple[str, ...]:
    """Groups that match the patterns (full match) and hold committed offsets on the selected topics."""
    include_re = compile_group_pattern("group", include or ".*")
    exclude_re = compile_group_pattern("exclude-group", exclude) if exclude else None
    wanted = set(topics)
    chosen = []
    for group in sorted(set(group_ids)):
        if not include_re.fullmatch(group) or (exclude_re is not None and exclude_re.fullmatch(group)):
            continue
        if any(topic in wanted for topic, _ in offsets(group)):
            chosen.append(group)
    return tuple(chosen)


def selected_topics(cluster: KafkaCluster, include: str, exclude: str | None) -> tuple[str, ...]:
    names = cluster.topic_names()
    selection = select_topics(names, include, exclude)
    if not selection.selected:
        raise NoTopicsMatchedError(
            f"No topic on the {cluster.config.role} cluster {cluster.config.bootstrap} matches include {include!r}"
            + (f" and not exclude {exclude!r}" if exclude else "")
            + ". Nothing was written; check the patterns (they must match the whole topic name)."
        )
    return selection.selected


def preflight(
    writers: GroupCluster,
    other: GroupCluster,
    topics: Iterable[str],
    quiet_seconds: float,
    group_include: str | None = None,
    group_exclude: str | None = None,
    what: str = "Cutover",
) -> Preflight:
    """Check the topics on ``writers`` are quiet and the selected groups idle on both clusters.

    ``writers`` is where producers wrote until now (the source of a cutover, the target of a
    failback); groups are selected there by their committed offsets on ``topics``.
    """
    if quiet_seconds < 0:
        raise ConfigurationError(f"quiet seconds must be 0 or more, got {quiet_seconds:g}.")
    names = tuple(topics)
    writers.describe()
    other.describe()
    groups = groups_on_topics(writers.group_ids(), writers.committed, names, group_include, group_exclude)
    if group_include and group_include != ".*" and not groups:
        raise ConfigurationError(
            f"No consumer group on the {writers.config.role} cluster matches {group_include!r}"
            + (f" (and not {group_exclude!r})" if group_exclude else "")
            + f" with committed offsets on the selected topics ({', '.join(names)}). Check the group pattern "
            "(it must match the whole group id), or leave it out to move every group of these topics."
        )
    # Active consumers first: a refusal for them must not wait for the quiet window (seconds, not quiet_seconds).
    active = _active_group_reasons(writers, other, groups, what.lower())
    if active:
        raise CutoverRefusedError(active, what)
    before = writers.log_ends(names)
    if quiet_seconds:
        time.sleep(quiet_seconds)
    after = writers.log_ends(names)
    states = _group_states(writers, other, groups)
    problems = quiet_reasons(
        moved_partitions(before, after), open_transactions(after), quiet_seconds, writers.config.role, what.lower()
    )
    problems += _active_group_reasons(writers, other, groups, what.lower(), states)  # a consumer started meanwhile
    if problems:
        raise CutoverRefusedError(problems, what)
    return Preflight(
        role=writers.config.role,
        topics=names,
        end_offsets={key: high for key, (high, _) in after.items()},
        groups=groups,
        group_states={role: {g: s for g, (s, _) in found.items()} for role, found in states.items()},
    )


def _group_states(writers: GroupCluster, other: GroupCluster, groups: Sequence[str]) -> GroupStates:
    return {writers.config.role: writers.states(groups), other.config.role: _present(other, groups)}


def _active_group_reasons(
    writers: GroupCluster,
    other: GroupCluster,
    groups: Sequence[str],
    what: str,
    states: GroupStates | None = None,
) -> list[Reason]:
    """Why the selected groups stop the cutover (none: every one idle on both clusters), their members named."""
    states = states if states is not None else _group_states(writers, other, groups)
    clusters = {writers.config.role: writers, other.config.role: other}
    active = {role: [g for g, (s, n) in found.items() if is_active(s, n)] for role, found in states.items()}
    if not any(active.values()):
        return []
    members = {role: clusters[role].members(names) for role, names in active.items() if names}
    return active_group_reasons(states, what, members)


def _present(cluster: GroupCluster, groups: Iterable[str]) -> dict[str, tuple[str, int]]:
    """States of those groups that exist on the cluster (a group never seen there cannot be active)."""
    known = set(cluster.group_ids())
    return cluster.states([g for g in groups if g in known])


def still_quiet(writers: KafkaCluster, checked: Preflight) -> list[str]:
    """After the final run: the topics must end where the pre-flight saw them end."""
    now = writers.log_ends(checked.topics)
    before = {key: (offset, offset) for key, offset in checked.end_offsets.items()}
    moved = moved_partitions(before, now)
    return [
        f"{checked.role} topic {topic} was written to during the cutover, in {partition_list(p for p, _, _ in parts)} "
        f"({per_partition([(p, f'{a} -> {b}') for p, a, b in parts])}); those records are not on the other cluster. "
        "Stop its producers and run the cutover again."
        for topic, parts in sorted(moved.items())
    ]
