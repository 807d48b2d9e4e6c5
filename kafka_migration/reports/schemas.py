"""The sign-off report's schema section (``--schema-ids``): the registries, every subject version with what the run
did and the fingerprint proven on both, the id map, and the keys and values translated per partition.

Built from the run's plan and segments as the ledger recorded them, and rendered as Markdown and HTML beside the
report's other sections; a run that moved no schemas has none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_migration.model.recorded import RecordedSegment
from kafka_migration.model.schema_runs import SchemaRun
from kafka_migration.reports.html import escape as _e

PARTS = ("keys", "values")
OUTCOMES = ("translated", "unchanged", "without_header")


def schemas_section(plan: Mapping[str, Any], segments: Sequence[RecordedSegment]) -> dict[str, Any] | None:
    if not plan.get("schemas"):
        return None
    run = SchemaRun.from_dict(plan["schemas"])
    counts = [
        {"source_topic": s.source_topic, "partition": s.partition, **{p: s.schema_counts[p] for p in PARTS}}
        for s in sorted(segments, key=lambda s: (s.source_topic, s.partition))
        if s.schema_counts
    ]
    totals = {p: {o: sum(c[p].get(o, 0) for c in counts) for o in OUTCOMES} for p in PARTS}
    return {
        "mode": run.mode.value,
        "source_registry": run.source_registry,
        "target_registry": run.target_registry,
        "versions": [v.to_dict() for v in run.versions],
        "id_map": run.id_map.to_dict()["ids"],
        "partitions": counts,
        "totals": totals,
        "compatibility": [c.to_dict() for c in run.compatibility],
    }


def _level(compatibility: Mapping[str, Any], side: str) -> str:
    level = compatibility.get(side)
    return "unknown" if level is None else f"{level}{' (global)' if compatibility.get(f'{side}_global') else ''}"


def _line(section: Mapping[str, Any]) -> str:
    totals = section["totals"]
    return (
        f"Schema ids {section['mode']}d from {section['source_registry']} to {section['target_registry']}: "
        f"{len(section['versions'])} subject versions, {len(section['id_map'])} ids mapped; "
        f"{totals['keys']['translated']:,} keys and {totals['values']['translated']:,} values translated and proven "
        "record by record (each target id the map's, every other byte the source's)."
    )


def schemas_markdown(section: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Schemas",
        "",
        _line(section),
        "",
        "| subject | version | from subject | format | source id | target id | action | fingerprint |",
        "|---|---:|---|---|---:|---:|---|---|",
    ]
    for v in section["versions"]:
        lines.append(
            f"| `{v['target_subject']}` | {v['version']} | `{v['source_subject']}` | {v['format']} | {v['source_id']} "
            f"| {v['target_id'] if v['target_id'] is not None else '–'} | {v['action']} | "
            f"`{(v['fingerprint'] or '–')[:23]}` |"
        )
    if section.get("compatibility"):
        lines += ["", "| subject | compatibility on the source | on the target |", "|---|---|---|"]
        for c in section["compatibility"]:
            lines.append(f"| `{c['target_subject']}` | {_level(c, 'source')} | {_level(c, 'target')} |")
    if section["partitions"]:
        lines += ["", "| topic | partition | keys translated / unchanged / no header | values |", "|---|---:|---|---|"]
        for c in section["partitions"]:
            keys, values = (" / ".join(f"{c[p].get(o, 0):,}" for o in OUTCOMES) for p in PARTS)
            lines.append(f"| `{c['source_topic']}` | {c['partition']} | {keys} | {values} |")
    return lines


def schemas_html(section: Mapping[str, Any]) -> str:
    out = [
        "<h2 id='schemas'>Schemas</h2>",
        f"<p class='muted'>{_e(_line(section))}</p>",
        "<table><tr><th>subject</th><th>version</th><th>from subject</th><th>format</th><th>source id</th>"
        "<th>target id</th><th>action</th><th>fingerprint</th></tr>",
    ]
    for v in section["versions"]:
        out.append(
            f"<tr><td><code>{_e(v['target_subject'])}</code></td><td class='num'>{v['version']}</td>"
            f"<td><code>{_e(v['source_subject'])}</code></td><td>{_e(v['format'])}</td>"
            f"<td class='num'>{v['source_id']}</td><td class='num'>{_e(v['target_id'])}</td><td>{_e(v['action'])}</td>"
            f"<td><code title='{_e(v['fingerprint'])}'>{_e((v['fingerprint'] or '–')[:19])}</code></td></tr>"
        )
    out.append("</table>")
    if section.get("compatibility"):
        out.append("<table><tr><th>subject</th><th>compatibility on the source</th><th>on the target</th></tr>")
        for c in section["compatibility"]:
            out.append(
                f"<tr><td><code>{_e(c['target_subject'])}</code></td><td>{_e(_level(c, 'source'))}</td>"
                f"<td>{_e(_level(c, 'target'))}</td></tr>"
            )
        out.append("</table>")
    if section["partitions"]:
        out.append(
            "<table><tr><th>topic</th><th>partition</th><th>keys translated / unchanged / no header</th>"
            "<th>values</th></tr>"
        )
        for c in section["partitions"]:
            keys, values = (" / ".join(f"{c[p].get(o, 0):,}" for o in OUTCOMES) for p in PARTS)
            out.append(
                f"<tr><td><code>{_e(c['source_topic'])}</code></td><td class='num'>{c['partition']}</td>"
                f"<td>{_e(keys)}</td><td>{_e(values)}</td></tr>"
            )
        out.append("</table>")
    return "".join(out)
