"""An access sync's live probes as plain values: what a migrated user tries on both clusters, what each answered,
and the report of them all. Planned by ``access/probes/rules.py``, asked by ``kafka/sessions.py`` (which says how
each probe leaves nothing behind), recorded by the ledger and shown by the CLI, the DAG's log and the reports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

PROBE_SUFFIX = "km-probe"  # appended to a prefix: a name of the prefix no application uses


class ProbeKind(StrEnum):
    """What a user tries."""

    PRODUCE = "produce"
    CONSUME = "consume"
    COMMIT = "commit"
    DESCRIBE = "describe"
    TRANSACTION = "transaction"


class ProbeAnswer(StrEnum):
    """How an outcome begins: ``allowed``, ``denied (ERROR)`` with the broker's error named, or ``inconclusive:
    why`` (no answer, or one that says nothing of the authorizer)."""

    ALLOWED = "allowed"
    DENIED = "denied"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True, order=True)
class Probe:
    """One thing a user tries: ``kind`` on the source's ``resource`` (a topic, a group or a transactional id);
    a commit names the topic whose offset it commits."""

    user: str
    kind: ProbeKind
    resource: str
    topic: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ProbeKind(self.kind))

    def describe(self) -> str:
        what = {
            ProbeKind.PRODUCE: f"produce to topic {self.resource}",
            ProbeKind.CONSUME: f"consume topic {self.resource}",
            ProbeKind.COMMIT: f"commit an offset of topic {self.topic} for group {self.resource}",
            ProbeKind.DESCRIBE: f"describe topic {self.resource}",
            ProbeKind.TRANSACTION: f"start a transaction with transactional id {self.resource}",
        }[self.kind]
        return f"{self.user}: {what}"


@dataclass(frozen=True)
class ProbeOutcome:
    """What each cluster answered a probe (see ``ProbeAnswer``), the target asked with the renamed topic and the
    mapped user."""

    probe: Probe
    target_user: str
    target_resource: str
    source: str
    target: str

    @property
    def matched(self) -> bool:
        return self.source == self.target and not self.source.startswith(ProbeAnswer.INCONCLUSIVE)

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
