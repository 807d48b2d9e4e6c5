"""What the console reads from the clusters "now": source end offsets, and a read-only cutover pre-flight.

The ledger names clusters by id; the console reaches them through Airflow's Kafka connections (the
DAGs' ``kafka_source`` and ``kafka_target``, and any listed in ``[kafka_migration] console_connections``),
each described once a minute to learn which cluster it reaches. Every call has a short timeout: a page
must render, saying a cluster is unreachable, rather than wait for it.

A person reads clusters by name (``display_names``): the name the operator gives a cluster id in
``[kafka_migration] cluster_names``, else the id of the connection whose bootstrap addresses are the ones the
ledger recorded for it (no cluster is asked).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka_migration.exceptions import MigrationError

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

DEFAULT_CONNECTIONS = ("kafka_source", "kafka_target")
TIMEOUT = 3.0  # seconds per Kafka call from a page
CACHE_SECONDS = 60.0


def configured_connections() -> tuple[str, ...]:
    """The Kafka connection ids the console may use: the DAGs' defaults and ``console_connections``."""
    from kafka_migration.airflow.settings import _airflow_option

    extra = _airflow_option("console_connections") or os.environ.get("KAFKA_MIGRATION_CONSOLE_CONNECTIONS") or ""
    listed = [c.strip() for c in extra.split(",") if c.strip()]
    return tuple(dict.fromkeys([*DEFAULT_CONNECTIONS, *listed]))


def configured_cluster_names() -> tuple[dict[str, str], list[str]]:
    """The names the operator gives clusters, ``[kafka_migration] cluster_names`` (or
    ``KAFKA_MIGRATION_CLUSTER_NAMES``): ``CLUSTER_ID=name`` entries separated by commas; and the entries that are
    not of that form, said as what to fix."""
    from kafka_migration.airflow.settings import _airflow_option

    text = _airflow_option("cluster_names") or os.environ.get("KAFKA_MIGRATION_CLUSTER_NAMES") or ""
    names: dict[str, str] = {}
    problems = []
    for entry in (e.strip() for e in text.split(",")):
        cluster_id, equals, name = (part.strip() for part in entry.partition("="))
        if cluster_id and equals and name:
            names[cluster_id] = name
        elif entry:
            problems.append(
                f"[kafka_migration] cluster_names: {entry!r} is not CLUSTER_ID=name "
                "(e.g. MkU3OEVBNTcwNTJENDM2Qg=production, entries separated by commas)"
            )
    return names, problems


def addresses(bootstrap: str | None) -> set[str]:
    """A bootstrap list as addresses to compare: ``host:port`` in lower case, without a listener's name."""
    found = set()
    for address in (bootstrap or "").split(","):
        address = address.strip().lower().rpartition("://")[2]
        if address:
            found.add(address)
    return found


def display_names(
    known: Mapping[str, Sequence[str]], connections: Sequence[tuple[str, str]], given: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each known cluster (its id and the bootstrap lists the ledger recorded for it) with the name a person reads:
    the one ``given`` it, else the first of ``connections`` (id, bootstrap list, in the configured order) sharing
    an address with it; with every such connection."""
    out = []
    for cluster_id, bootstraps in known.items():
        recorded = set().union(*(addresses(b) for b in bootstraps))
        matching = [conn_id for conn_id, bootstrap in connections if addresses(bootstrap) & recorded]
        name, named_by = (
            (given[cluster_id], "setting")
            if cluster_id in given
            else ((matching[0], "connection") if matching else (None, None))
        )
        out.append(
            {
                "cluster_id": cluster_id,
                "name": name,
                "named_by": named_by,
                "connections": matching,
                "bootstraps": list(bootstraps),
            }
        )
    return out


def _connection_bootstrap(conn_id: str) -> str:
    from kafka_migration.airflow.hooks import KafkaClusterHook

    return str(KafkaClusterHook(conn_id).get_cluster_config().settings["bootstrap.servers"])


@dataclass(frozen=True)
class Reach:
    """What one connection reached: a cluster id, or why not."""

    conn_id: str
    cluster_id: str | None
    error: str | None


def _cluster(conn_id: str, role: str, timeout: float) -> Any:
    from kafka_migration.airflow.hooks import KafkaClusterHook
    from kafka_migration.kafka.groups import GroupCluster

    return GroupCluster(KafkaClusterHook(conn_id, role).get_cluster_config(), timeout=timeout)


class Clusters:
    """Kafka connections by the cluster they reach, described at most once a minute each."""

    def __init__(
        self,
        connections: Callable[[], Sequence[str]] = configured_connections,
        timeout: float = TIMEOUT,
        opener: Callable[[str, str, float], Any] = _cluster,
        bootstrap_of: Callable[[str], str] = _connection_bootstrap,
        given_names: Callable[[], tuple[dict[str, str], list[str]]] = configured_cluster_names,
    ) -> None:
        self.connections = connections
        self.timeout = timeout
        self.opener = opener
        self.bootstrap_of = bootstrap_of
        self.given_names = given_names
        self._lock = threading.Lock()
        self._reach: dict[str, tuple[float, Reach]] = {}

    def reach(self, conn_id: str) -> Reach:
        with self._lock:
            cached = self._reach.get(conn_id)
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        try:
            info = self.opener(conn_id, "source", self.timeout).describe()
            found = Reach(conn_id, info.cluster_id, None)
        except (MigrationError, Exception) as exc:  # a page says what failed; it never fails itself
            found = Reach(conn_id, None, " ".join(str(exc).split()))
        with self._lock:
            self._reach[conn_id] = (time.monotonic(), found)
        return found

    def connection_for(self, cluster_id: str) -> tuple[str | None, list[Reach]]:
        """The connection that reaches ``cluster_id``, and what each tried connection reached."""
        tried = []
        for conn_id in self.connections():
            found = self.reach(conn_id)
            tried.append(found)
            if found.cluster_id == cluster_id:
                return conn_id, tried
        return None, tried

    def log_ends(self, cluster_id: str, topics: Iterable[str]) -> tuple[dict[tuple[str, int], int], str | None]:
        """High watermarks of the topics' partitions now, or an empty map and the reason they could not be read."""
        conn_id, tried = self.connection_for(cluster_id)
        if conn_id is None:
            return {}, unreachable(cluster_id, tried)
        try:
            ends = self.opener(conn_id, "source", self.timeout).log_ends(sorted(set(topics)))
        except Exception as exc:
            with self._lock:
                self._reach.pop(conn_id, None)
            return {}, f"cluster {cluster_id} (connection {conn_id}) did not answer: {' '.join(str(exc).split())}"
        return {key: high for key, (high, _stable) in ends.items()}, None

    def target_losses(
        self, source_cluster_id: str, target_cluster_id: str, checkpoints: Sequence[Mapping[str, Any]], ledger: Ledger
    ) -> tuple[dict[tuple[str, str], int], str | None]:
        """Verified records each target topic no longer holds although the source does, checked now as a run
        checks them (run/target_checks.find_losses): {(source topic, target topic): records} of the topics that
        lost any, or an empty map and why the clusters could not be read. The target's log starts come first
        (one request); only topics whose log start moved are looked at further."""
        from kafka_migration.model.checkpoints import Checkpoint
        from kafka_migration.model.plan import ClusterInfo
        from kafka_migration.model.state import TopicState
        from kafka_migration.run.target_checks import PlanningReads, find_losses

        target_conn, tried = self.connection_for(target_cluster_id)
        if target_conn is None:
            return {}, unreachable(target_cluster_id, tried)
        source_conn, tried = self.connection_for(source_cluster_id)
        if source_conn is None:
            return {}, unreachable(source_cluster_id, tried)
        cps = {
            (r["source_topic"], int(r["partition"]), r["target_topic"]): Checkpoint(
                int(r["source_offset"]), int(r["target_offset"]), r["run_id"]
            )
            for r in checkpoints
        }
        try:
            target = self.opener(target_conn, "target", self.timeout)
            starts = target.log_starts({t for _, _, t in cps})
            moved = {(s, t) for (s, p, t) in cps if starts.get((t, p), 0) > 0}
            if not moved:
                return {}, None
            source = self.opener(source_conn, "source", self.timeout)
            states: dict[str, TopicState] = source.topic_states({s for s, _ in moved})
            targets: dict[str, TopicState] = target.topic_states({t for _, t in moved})
        except Exception as exc:
            return {}, f"the clusters did not answer: {' '.join(str(exc).split())}"
        try:
            losses, _ = find_losses(
                source,
                ledger,
                (ClusterInfo("source", "", source_cluster_id, 0), ClusterInfo("target", "", target_cluster_id, 0)),
                PlanningReads(sorted(moved), states, targets, cps),
            )
        except Exception as exc:  # a page says what failed; it never fails itself
            return {}, f"the clusters did not answer: {' '.join(str(exc).split())}"
        lost: dict[tuple[str, str], int] = {}
        for loss in losses:
            key = (loss.source_topic, loss.target_topic)
            lost[key] = lost.get(key, 0) + loss.records
        return lost, None

    def names(self, known: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """The known clusters' display names (``display_names``), from the connections' settings as Airflow
        stores them now (none is asked anything; one that cannot be read names no cluster) and the names given."""
        given, problems = self.given_names()
        connections = []
        for conn_id in self.connections():
            try:
                connections.append((conn_id, self.bootstrap_of(conn_id)))
            except Exception:  # a missing or broken connection: the overview says so where it is used
                continue
        return {"clusters": display_names(known, connections, given), "problems": problems}

    def forget(self) -> None:
        with self._lock:
            self._reach.clear()


def unreachable(cluster_id: str, tried: Sequence[Reach]) -> str:
    seen = "; ".join(
        f"{r.conn_id}: {'cluster ' + r.cluster_id if r.cluster_id else 'unreachable (' + (r.error or '?') + ')'}"
        for r in tried
    )
    return (
        f"No Kafka connection reaches cluster {cluster_id} now ({seen or 'no connection configured'}). "
        "The numbers below are the ledger's; list the connection in [kafka_migration] console_connections "
        "if it has another id."
    )


def preflight_view(
    clusters: Clusters,
    connections: tuple[str, str],
    include: str,
    exclude: str | None,
    groups: str | None,
    exclude_groups: str | None,
    quiet_seconds: float,
) -> dict[str, Any]:
    """The cutover pre-flight's checks, read only: is each selected source topic quiet, which selected groups
    have members on either cluster (``connections``: the source's and the target's Kafka connection ids).
    Nothing is recorded; the answer lists problems instead of raising."""
    source_conn_id, target_conn_id = connections
    from kafka_migration.cutover.preflight import (
        active_group_problems,
        groups_on_topics,
        is_active,
        moved_partitions,
        open_transactions,
        quiet_problems,
        selected_topics,
    )
    from kafka_migration.model.config import compile_group_pattern, compile_topic_pattern

    for name, pattern in (
        ("include", include),
        ("exclude", exclude),
        ("group", groups),
        ("exclude-group", exclude_groups),
    ):
        if pattern:
            compile = compile_group_pattern if name.endswith("group") else compile_topic_pattern
            compile(name, pattern)  # bad input: one clear line before any cluster is asked
    source = clusters.opener(source_conn_id, "source", clusters.timeout)
    target = clusters.opener(target_conn_id, "target", clusters.timeout)
    source_info, target_info = source.describe(), target.describe()
    names = selected_topics(source, include, exclude)
    chosen = groups_on_topics(source.group_ids(), source.committed, names, groups, exclude_groups)
    before = source.log_ends(names)
    if quiet_seconds:
        time.sleep(quiet_seconds)
    after = source.log_ends(names)
    moved = moved_partitions(before, after)
    open_tx = open_transactions(after)
    known_on_target = set(target.group_ids())
    states = {
        "source": source.states(chosen),
        "target": target.states([g for g in chosen if g in known_on_target]),
    }
    topics = []
    for name in names:
        parts = sorted(p for t, p in after if t == name)
        topics.append(
            {
                "topic": name,
                "partitions": len(parts),
                "end_offsets": {str(p): after[(name, p)][0] for p in parts},
                "new_offsets": sum(max(0, b - a) for _, a, b in moved.get(name, [])),
                "open_transactions": open_tx.get(name, []),
                "quiet": name not in moved and name not in open_tx,
            }
        )
    group_rows = []
    for group in chosen:
        row: dict[str, Any] = {"group_id": group}
        for role in ("source", "target"):
            state, members = states[role].get(group, ("(none)", 0))
            row[role] = {
                "state": state,
                "members": members,
                "active": group in states[role] and is_active(state, members),
            }
        group_rows.append(row)
    problems = quiet_problems(moved, open_tx, quiet_seconds, "source") + active_group_problems(
        {role: dict(found) for role, found in states.items()}
    )
    return {
        "source": {"conn_id": source_conn_id, "cluster_id": source_info.cluster_id, "bootstrap": source_info.bootstrap},
        "target": {"conn_id": target_conn_id, "cluster_id": target_info.cluster_id, "bootstrap": target_info.bootstrap},
        "quiet_seconds": quiet_seconds,
        "topics": topics,
        "groups": group_rows,
        "problems": problems,
        "ready": not problems,
    }
