"""Why a cutover or failback was refused, kept whole: each problem with the topic or consumer groups it names.

The pre-flight raises ``CutoverRefusedError`` with these reasons; the ledger keeps them with the
cutover, and the report lists them grouped by topic (as every problem list of the product is) and
ends with the safe way out. A refused cutover switched nothing, so that way out is never a failback:
stop what was named, then run the cutover again. Pure: no Kafka, Airflow or Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_migration.model.text import noun_for, some

# Where the ledger keeps a refusal's reasons: beside the cutover's parameters (km_cutovers.params).
REFUSAL = "refusal"
FAILBACK_REFUSAL = "failback_refusal"


@dataclass(frozen=True)
class Reason:
    """One problem of a refusal: its text, the cluster it was seen on, and the topic or groups it names."""

    text: str
    cluster: str | None = None  # the cluster's role: "source" or "target"
    topic: str | None = None  # the topic written to (or holding an open transaction)
    groups: tuple[str, ...] = ()  # the consumer groups with active members

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "cluster": self.cluster, "topic": self.topic, "groups": list(self.groups)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reason:
        return cls(
            text=str(data["text"]),
            cluster=data.get("cluster"),
            topic=data.get("topic"),
            groups=tuple(data.get("groups") or ()),
        )

    @classmethod
    def of(cls, problem: object) -> Reason:
        """A reason from a problem that may be plain text (an error that names nothing in particular)."""
        return problem if isinstance(problem, Reason) else cls(str(problem))


def reasons_of(problems: Iterable[object]) -> list[dict[str, Any]]:
    """The ledger's form of a refusal's problems."""
    return [Reason.of(p).to_dict() for p in problems]


def grouped(reasons: Sequence[Reason]) -> list[tuple[str, list[str]]]:
    """Headings and their problems, one heading per topic (in name order), then per set of consumer groups,
    then anything naming neither: ``[("source topic orders", [text, ...]), ...]``."""
    topics: dict[tuple[str, str], list[str]] = {}
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    other: list[str] = []
    for r in reasons:
        if r.topic:
            topics.setdefault((r.cluster or "", r.topic), []).append(r.text)
        elif r.groups:
            groups.setdefault((r.cluster or "", r.groups), []).append(r.text)
        else:
            other.append(r.text)
    out = [(_where(role, f"topic {topic}"), texts) for (role, topic), texts in sorted(topics.items(), key=_by_name)]
    out += [
        (
            f"{noun_for(len(names), 'consumer group')} {', '.join(names)}"
            + (f" on the {role} cluster" if role else ""),
            texts,
        )
        for (role, names), texts in sorted(groups.items())
    ]
    if other:
        out.append(("Other", other))
    return out


def _by_name(item: tuple[tuple[str, str], list[str]]) -> tuple[str, str]:
    (role, topic), _ = item
    return topic, role


def _where(role: str, what: str) -> str:
    return f"{role} {what}" if role else what


def blocking_topics(reasons: Sequence[Reason]) -> dict[str, list[str]]:
    """Per cluster role, the topics someone still writes to."""
    found: dict[str, list[str]] = {}
    for r in reasons:
        if r.topic and r.topic not in found.setdefault(r.cluster or "", []):
            found[r.cluster or ""].append(r.topic)
    return {role: sorted(names) for role, names in found.items() if names}


def blocking_groups(reasons: Sequence[Reason]) -> dict[str, list[str]]:
    """Per cluster role, the consumer groups with active members."""
    found: dict[str, set[str]] = {}
    for r in reasons:
        if r.groups:
            found.setdefault(r.cluster or "", set()).update(r.groups)
    return {role: sorted(names) for role, names in found.items()}


def way_out(reasons: Sequence[Reason], what: str, again: str) -> list[str]:
    """The safe way out of a refused cutover (``what``: "cutover") or failback, as steps in order.

    ``again`` is how to run it again (the command, or the DAG to trigger). A refusal switched and wrote
    nothing, so nothing is undone: the steps stop what was named and run the same thing again.
    """
    steps = []
    for role, names in sorted(blocking_topics(reasons).items()):
        on = f" on the {role} cluster" if role else ""
        steps.append(
            f"Stop the producers of {noun_for(len(names), 'topic')} {some(names, most=10)}{on} (a transactional "
            "producer: commit or abort, or let transaction.timeout.ms end its transaction)."
        )
    for role, names in sorted(blocking_groups(reasons).items()):
        on = f" on the {role} cluster" if role else ""
        steps.append(
            f"Stop every consumer (all instances) of {noun_for(len(names), 'consumer group')} "
            f"{some(names, most=10)}{on}."
        )
    if not steps:
        steps.append("Fix what the problems above name.")
    steps.append(f"Run the {what} again: {again}.")
    return steps


def group_detail(reasons: Sequence[Reason]) -> str | None:
    """The blocking groups in one line (``billing, audit on the source cluster``); None when none blocked."""
    found = blocking_groups(reasons)
    if not found:
        return None
    return "; ".join(
        f"{', '.join(names)}" + (f" on the {role} cluster" if role else "") for role, names in found.items()
    )
