"""An access sync's live probes as lines for a terminal or a task's log: ``kafka-migrate access sync`` prints them,
the ``kafka_migration_access`` DAG logs them (the report files show them from the ledger: ``security``)."""

from __future__ import annotations

from kafka_migration.model.probes import ProbeReport
from kafka_migration.model.text import plural


def probe_lines(report: ProbeReport, most: int = 10) -> list[str]:
    """A total, and each mismatch named (``most`` at most, the rest counted); none when nothing was probed."""
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
