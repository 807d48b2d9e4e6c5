"""The sign-off report as Markdown (tickets, change boards) and self-contained HTML (browsers, print).

Both read the report's JSON form (``reports.signoff.build_report``) and nothing else, so a report
rendered again from the ledger reads the same; the HTML has the look every report shares
(``reports.html``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_migration.model.groups import GOOD_OUTCOMES
from kafka_migration.model.text import offset_range, plural
from kafka_migration.model.timings import RunTimings
from kafka_migration.reports.html import escape as _e
from kafka_migration.reports.html import head
from kafka_migration.reports.schemas import schemas_html, schemas_markdown
from kafka_migration.reports.summary import timing_parts


def shared_job_note(topics: Sequence[Mapping[str, Any]]) -> str | None:
    """The footnote of topics marked as sharing a Spark job, or None when every topic had its own."""
    others = sorted({t["job_topics"] - 1 for t in topics if t.get("job_topics", 1) > 1})
    if not others:
        return None
    n = str(others[0]) if len(others) == 1 else f"{others[0]} to {others[-1]}"
    return (
        f"shared a Spark job with {n} other topic{'' if n == '1' else 's'}; "
        "time is its own tasks' time (summed over its partitions), records/s per task second"
    )


def _configs_copied(topic: Mapping[str, Any]) -> str:
    """The configs set on a created target topic; an existing one keeps its own (the run sizes its copy only)."""
    if not topic["created"]:
        return "none, existing target topic not changed"
    return ", ".join(f"{k}={v}" for k, v in topic["configs_copied"].items())


def _n(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)


def _range(start: Any, end: Any) -> str:
    """An offset range in a table whose count is a column of its own (``model.text.offset_range``)."""
    return offset_range(start, end, count=False)


# -- Markdown -------------------------------------------------------------------------------------


def render_markdown(report: Mapping[str, Any]) -> str:
    run, scope, totals = report["run"], report["scope"], report["totals"]
    lines = [
        f"# Kafka migration report: {report['verdict']}",
        "",
        f"Run `{run['run_id']}` ({run['trigger']}"
        + (f", DAG `{run['dag_id']}` run `{run['dag_run_id']}`" if run.get("dag_id") else "")
        + f"), {run['started_at']} to {run['ended_at'] or 'unfinished'}.",
        "",
        "## Scope",
        "",
        "| | cluster id | bootstrap |",
        "|---|---|---|",
        f"| source | `{scope['source']['cluster_id']}` | `{scope['source']['bootstrap']}` |",
        f"| target | `{scope['target']['cluster_id']}` | `{scope['target']['bootstrap']}` |",
        "",
        f"Include `{scope['include']}`, exclude `{scope['exclude'] or '(none)'}`, rename `{scope['rename']}`, "
        f"first-copy start `{scope['start']}`, gaps allowed: {bool(scope['allow_gaps'])}.",
        "",
        "## Totals",
        "",
        f"{plural(totals['topics'], 'topic')}, {plural(totals['partitions'], 'partition')}, "
        f"{plural(totals['records_copied'], 'record')} ({plural(totals['bytes_copied'], 'byte')}) copied, "
        f"{plural(totals['records_verified'], 'record')} verified; "
        f"{plural(totals['partitions_verified'], 'partition')} verified, {totals['partitions_not_verified']:,} not "
        f"verified, {plural(totals['expired_offsets'], 'offset')} expired before copying.",
        "",
        "| topic | target | verdict | records copied | records/s | copy task s | configs copied | configs skipped |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for t in report["topics"]:
        lines.append(
            f"| `{t['source_topic']}` | `{t['target_topic']}` | {t['verdict']} | {_n(t['records_copied'])} | "
            f"{_n(t['records_per_second'])} | {_n(t['copy_seconds'])}{_mark(t)} | "
            f"{_configs_copied(t) or '–'} | "
            f"{', '.join(t['configs_skipped']) or '–'} |"
        )
    note = shared_job_note(report["topics"])
    if note:
        lines += ["", f"{SHARED_MARK} {note}."]
    lines += ["", *_timings_markdown(report.get("timings"))]
    if report["differences"]:
        lines += [
            "",
            "## Differences",
            "",
            "| topic | partition | what | source offset | target offset |",
            "|---|---:|---|---:|---:|",
        ]
        for d in report["differences"]:
            lines.append(
                f"| `{d['source_topic']}` | {d['partition']} | {d['first_difference']} | "
                f"{_n(d['first_source_offset'])} | {_n(d['first_target_offset'])} |"
            )
    lines += _losses_markdown(report.get("target_losses") or [])
    if report["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in report["warnings"]]
    if report.get("consumer_groups"):
        lines += ["", *_groups_markdown(report["consumer_groups"])]
    if report.get("schemas"):
        lines += ["", *schemas_markdown(report["schemas"])]
    lines += ["", "## Partitions", ""]
    for t in report["topics"]:
        lines += [f"### `{t['source_topic']}` → `{t['target_topic']}`", ""]
        if t["config_decisions"]:
            lines += [f"- config `{k}`: {v}" for k, v in t["config_decisions"].items()] + [""]
        lines += [
            "| partition | source offsets | target offsets | copied | source records | target records | source checksum | target checksum | verdict |",
            "|---:|---|---|---:|---:|---:|---|---|---|",
        ]
        for p in t["partition_details"]:
            lines.append(
                f"| {p['partition']} | {_range(p['source_start'], p['source_end'])} | "
                f"{_range(p['target_start'], p['target_end'])} | {_n(p['copied_records'])} | "
                f"{_n(p['source_records'])} | {_n(p['target_records'])} | `{(p['source_checksum'] or '–')[:23]}` | "
                f"`{(p['target_checksum'] or '–')[:23]}` | {p['status']} |"
            )
        lines.append("")
    for name, reason in report["skipped_topics"].items():
        lines.append(f"- skipped `{name}`: {reason}")
    return "\n".join(lines).rstrip() + "\n"


SHARED_MARK = "†"

LOSSES_TITLE = "Verified records the target lost"
LOSSES_NOTE = (
    "The target's log start moved past records that earlier runs verified and the source still holds. Offsets "
    "cannot be re-created on a topic: re-migrate to a new target topic, or accept the loss (--accept-target-loss)."
)


def _loss_cells(loss: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        loss["source_topic"],
        loss["target_topic"],
        str(loss["partition"]),
        _range(loss["source_start"], loss["source_end"]),
        _range(loss["target_start"], loss["target_end"]),
        _n(loss["records"]),
        loss["verified_by"],
        "accepted" if loss["accepted"] else "LOST",
    )


LOSS_HEADER = ("topic", "target", "partition", "source offsets", "target offsets", "records", "verified by", "state")


def _losses_markdown(losses: Sequence[Mapping[str, Any]]) -> list[str]:
    if not losses:
        return []
    lines = ["", f"## {LOSSES_TITLE}", "", LOSSES_NOTE, "", "| " + " | ".join(LOSS_HEADER) + " |"]
    lines.append("|" + "---|" * len(LOSS_HEADER))
    lines += ["| " + " | ".join(_loss_cells(loss)) + " |" for loss in losses]
    return lines


def _losses_html(losses: Sequence[Mapping[str, Any]]) -> str:
    if not losses:
        return ""
    rows = "".join("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in _loss_cells(loss)) + "</tr>" for loss in losses)
    header = "".join(f"<th>{_e(h)}</th>" for h in LOSS_HEADER)
    return f"<h2 class='lost'>{_e(LOSSES_TITLE)}</h2><p>{_e(LOSSES_NOTE)}</p><table><tr>{header}</tr>{rows}</table>"


def _mark(topic: Mapping[str, Any]) -> str:
    return f" {SHARED_MARK}" if topic.get("job_topics", 1) > 1 else ""


def _html_mark(topic: Mapping[str, Any]) -> str:
    return f"<sup title='shared a Spark job'>{SHARED_MARK}</sup>" if _mark(topic) else ""


def _share(seconds: float, wall: float) -> str:
    return f"{100 * seconds / wall:.0f} %" if wall > 0 else "–"


def _timings_markdown(stored: Mapping[str, Any] | None) -> list[str]:
    lines = ["## Where the time went", ""]
    timings = RunTimings.from_dict(stored)
    if timings is None:
        return [
            *lines,
            "No timings were recorded for this run (it ended before its verdict, or was recorded by a version that kept none).",
        ]
    lines += [
        f"Wall time {timings.wall:.1f} s, from the start of the run to its verdict. Copy and verification may "
        "overlap, so the parts need not add up to the wall time.",
        "",
        "| part | seconds | share of wall | what |",
        "|---|---:|---:|---|",
    ]
    for name, seconds, note in timing_parts(timings):
        lines.append(f"| {name} | {seconds:.1f} | {_share(seconds, timings.wall)} | {note} |")
    lines.append(f"| **wall** | **{timings.wall:.1f}** | 100 % | |")
    return lines


def _timings_html(stored: Mapping[str, Any] | None) -> str:
    timings = RunTimings.from_dict(stored)
    if timings is None:
        return "<h2 id='timings'>Where the time went</h2><p class='muted'>No timings were recorded for this run (it ended before its verdict, or was recorded by a version that kept none).</p>"
    out = [
        "<h2 id='timings'>Where the time went</h2>",
        f"<p>Wall time <b>{timings.wall:.1f} s</b>, from the start of the run to its verdict. "
        "<span class='muted'>Copy and verification may overlap, so the parts need not add up to the wall "
        "time.</span></p>",
        "<table><tr><th>part</th><th>seconds</th><th>share of wall</th><th>what</th></tr>",
    ]
    for name, seconds, note in timing_parts(timings):
        out.append(
            f"<tr><td>{_e(name)}</td><td class='num'>{seconds:.1f}</td>"
            f"<td class='num'>{_e(_share(seconds, timings.wall))}</td><td class='muted'>{_e(note)}</td></tr>"
        )
    out.append(f"<tr><th>wall</th><th class='num'>{timings.wall:.1f}</th><th class='num'>100 %</th><th></th></tr>")
    out.append("</table>")
    return "".join(out)


def _groups_markdown(section: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Consumer groups",
        "",
        f"Synced {section['synced_at']} ({', '.join(f'`{i}`' for i in section['sync_ids'])}): "
        f"{section['partitions']} group partitions, {section['partitions_not_synced']} not synced. A proven "
        "partition's next record on the target is the record the group would have read next on the source.",
        "",
        "| group | source partition | source offset | target partition | target offset | lag on source | outcome | proof |",
        "|---|---|---:|---|---:|---:|---|---|",
    ]
    notes = []
    for g in section["groups"]:
        for p in g["partitions"]:
            target = f"`{p['target_topic']}[{p['partition']}]`" if p["target_topic"] else "–"
            lines.append(
                f"| `{g['group_id']}` | `{p['source_topic']}[{p['partition']}]` | {_n(p['source_offset'])} | {target} | "
                f"{_n(p['target_offset'])} | {_n(p['lag'])} | {p['outcome']} | {p['proof'] or '–'} |"
            )
            if p["reason"]:
                notes.append(f"- `{g['group_id']}` `{p['source_topic']}[{p['partition']}]`: {p['reason']}")
    return lines + (["", *notes] if notes else [])


def _groups_html(section: Mapping[str, Any]) -> str:
    out = [
        "<h2 id='consumer-groups'>Consumer groups</h2>",
        f"<p class='muted'>Synced {_e(section['synced_at'])} ({_e(', '.join(section['sync_ids']))}): "
        f"{section['partitions']} group partitions, {section['partitions_not_synced']} not synced. A proven "
        "partition's next record on the target is the record the group would have read next on the source.</p>",
        "<table><tr><th>group</th><th>source partition</th><th>source offset</th><th>target partition</th>"
        "<th>target offset</th><th>lag on source</th><th>outcome</th><th>proof</th><th>note</th></tr>",
    ]
    for g in section["groups"]:
        for p in g["partitions"]:
            outcome = p["outcome"]
            pill = "ok" if outcome in GOOD_OUTCOMES else "bad"
            target = f"{p['target_topic']}[{p['partition']}]" if p["target_topic"] else None
            out.append(
                f"<tr><td><code>{_e(g['group_id'])}</code></td><td><code>{_e(p['source_topic'])}[{p['partition']}]</code></td>"
                f"<td class='num'>{_e(_n(p['source_offset']))}</td><td><code>{_e(target)}</code></td>"
                f"<td class='num'>{_e(_n(p['target_offset']))}</td><td class='num'>{_e(_n(p['lag']))}</td>"
                f"<td><span class='pill {pill}'>{_e(outcome)}</span></td><td>{_e(p['proof'])}</td>"
                f"<td>{_e(p['reason'] or '')}</td></tr>"
            )
    out.append("</table>")
    return "".join(out)


# -- HTML -----------------------------------------------------------------------------------------


def _cls(verdict: str) -> str:
    v = verdict.lower()
    if v in ("verified", "up to date"):
        return "ok"
    if v in ("dry run", "incomplete"):
        return "neutral"
    return "bad"


def _chart(topics: Sequence[Mapping[str, Any]]) -> str:
    """Horizontal bars: records per task second per topic, with its copy task seconds as a label."""
    rows = [t for t in topics if t["records_per_second"]]
    if not rows:
        return '<p class="muted">No records were copied in this run.</p>'
    top = max(t["records_per_second"] for t in rows)
    label_w, bar_w, row_h = 220, 560, 22
    height = row_h * len(rows) + 10
    parts = [
        f'<svg class="chart" role="img" aria-label="throughput per topic" width="{label_w + bar_w + 170}" height="{height}">'
    ]
    for i, t in enumerate(rows):
        y = 5 + i * row_h
        w = max(2, int(bar_w * t["records_per_second"] / top))
        name = t["source_topic"] if len(t["source_topic"]) <= 30 else t["source_topic"][:29] + "…"
        parts.append(f'<text x="{label_w - 8}" y="{y + 14}" text-anchor="end">{_e(name)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 2}" width="{w}" height="{row_h - 6}" fill="#3b7dd8"/>')
        parts.append(
            f'<text x="{label_w + w + 6}" y="{y + 14}">{_e(_n(t["records_per_second"]))} rec/s · '
            f"{_e(_n(t['copy_seconds']))} s</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: Mapping[str, Any]) -> str:
    run, scope, totals = report["run"], report["scope"], report["totals"]
    out = [
        head(f"Kafka migration {run['run_id']}: {report['verdict']}"),
        f"<p class='muted'>Kafka migration report</p><h1>Run {_e(run['run_id'])}</h1>",
        f"<p><span class='verdict {_cls(report['verdict'])}'>{_e(report['verdict'])}</span> ",
        f"<span class='muted'>{_e(run['started_at'])} → {_e(run['ended_at'] or 'unfinished')} · triggered by "
        f"{_e(run['trigger'])}{' · DAG ' + _e(run['dag_id']) + ' run ' + _e(run['dag_run_id']) if run.get('dag_id') else ''}</span></p>",
        "<h2>Scope</h2><table><tr><th></th><th>cluster id</th><th>bootstrap</th></tr>",
        f"<tr><th>source</th><td><code>{_e(scope['source']['cluster_id'])}</code></td><td><code>{_e(scope['source']['bootstrap'])}</code></td></tr>",
        f"<tr><th>target</th><td><code>{_e(scope['target']['cluster_id'])}</code></td><td><code>{_e(scope['target']['bootstrap'])}</code></td></tr></table>",
        f"<p>Include <code>{_e(scope['include'])}</code> · exclude <code>{_e(scope['exclude'] or '(none)')}</code> · "
        f"rename <code>{_e(scope['rename'])}</code> · first-copy start <code>{_e(scope['start'])}</code> · "
        f"gaps allowed: {_e(bool(scope['allow_gaps']))}</p>",
        "<h2>Summary</h2>",
        f"<p>{plural(totals['topics'], 'topic')}, {plural(totals['partitions'], 'partition')} · "
        f"{plural(totals['records_copied'], 'record')} ({plural(totals['bytes_copied'], 'byte')}) copied · "
        f"{plural(totals['records_verified'], 'record')} verified · "
        f"{plural(totals['partitions_verified'], 'partition')} verified, {totals['partitions_not_verified']:,} not "
        f"verified · {plural(totals['expired_offsets'], 'offset')} expired before copying</p>",
        "<table><tr><th>source topic</th><th>target topic</th><th>verdict</th><th>partitions</th><th>records copied</th>"
        "<th>records verified</th><th>records/s</th><th>copy task s</th></tr>",
    ]
    for t in report["topics"]:
        out.append(
            f"<tr><td><a href='#t-{_e(t['source_topic'])}'><code>{_e(t['source_topic'])}</code></a></td>"
            f"<td><code>{_e(t['target_topic'])}</code></td>"
            f"<td><span class='pill {_cls(t['verdict'])}'>{_e(t['verdict'])}</span></td>"
            f"<td class='num'>{t['partitions']}</td><td class='num'>{_e(_n(t['records_copied']))}</td>"
            f"<td class='num'>{_e(_n(t['records_verified']))}</td><td class='num'>{_e(_n(t['records_per_second']))}</td>"
            f"<td class='num'>{_e(_n(t['copy_seconds']))}{_html_mark(t)}</td></tr>"
        )
    out.append("</table>")
    note = shared_job_note(report["topics"])
    if note:
        out.append(f"<p class='muted'>{SHARED_MARK} {_e(note)}.</p>")
    out.append(_timings_html(report.get("timings")))
    out.append("<h2>Throughput per topic</h2>" + _chart(report["topics"]))
    if report["differences"]:
        out.append(
            "<h2>Differences</h2><table><tr><th>topic</th><th>partition</th><th>what</th><th>first source offset</th><th>first target offset</th><th>source / target records</th></tr>"
        )
        for d in report["differences"]:
            out.append(
                f"<tr><td><code>{_e(d['source_topic'])}</code></td><td class='num'>{d['partition']}</td>"
                f"<td>{_e(d['first_difference'])}</td><td class='num'>{_e(_n(d['first_source_offset']))}</td>"
                f"<td class='num'>{_e(_n(d['first_target_offset']))}</td>"
                f"<td class='num'>{_e(_n(d['source_records']))} / {_e(_n(d['target_records']))}</td></tr>"
            )
        out.append("</table>")
    out.append(_losses_html(report.get("target_losses") or []))
    if report["warnings"]:
        out.append(
            "<h2>Warnings</h2><ul class='warnings'>"
            + "".join(f"<li>{_e(w)}</li>" for w in report["warnings"])
            + "</ul>"
        )
    if report.get("consumer_groups"):
        out.append(_groups_html(report["consumer_groups"]))
    if report.get("schemas"):
        out.append(schemas_html(report["schemas"]))
    out.append("<h2>Topics and partitions</h2>")
    for t in report["topics"]:
        out.append(
            f"<h3 id='t-{_e(t['source_topic'])}'><code>{_e(t['source_topic'])}</code> → <code>{_e(t['target_topic'])}</code></h3>"
        )
        out.append(
            f"<p class='muted'>{'created' if t['created'] else 'existing target topic'}, "
            f"{plural(t['partitions'], 'partition')}, "
            f"replication factor {_e(t['replication_factor'])}. Configs copied: "
            f"{_e(_configs_copied(t) or 'none')}. Not copied: "
            f"{_e(', '.join(f'{k} ({v})' for k, v in t['configs_skipped'].items()) or 'none')}.</p>"
        )
        if t["config_decisions"]:
            out.append(
                "<ul class='muted'>"
                + "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in t["config_decisions"].items())
                + "</ul>"
            )
        out.append(
            "<table><tr><th>partition</th><th>source offsets</th><th>target offsets</th><th>copied</th>"
            "<th>source records</th><th>target records</th><th>source checksum</th><th>target checksum</th><th>verdict</th></tr>"
        )
        for p in t["partition_details"]:
            out.append(
                f"<tr><td class='num'>{p['partition']}</td><td>{_e(_range(p['source_start'], p['source_end']))}</td>"
                f"<td>{_e(_range(p['target_start'], p['target_end']))}</td><td class='num'>{_e(_n(p['copied_records']))}</td>"
                f"<td class='num'>{_e(_n(p['source_records']))}</td><td class='num'>{_e(_n(p['target_records']))}</td>"
                f"<td><code title='{_e(p['source_checksum'])}'>{_e((p['source_checksum'] or '–')[:19])}</code></td>"
                f"<td><code title='{_e(p['target_checksum'])}'>{_e((p['target_checksum'] or '–')[:19])}</code></td>"
                f"<td><span class='pill {_cls(p['status'])}'>{_e(p['status'])}</span></td></tr>"
            )
        out.append("</table>")
    if report["skipped_topics"]:
        out.append(
            "<h2>Skipped topics</h2><ul>"
            + "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in report["skipped_topics"].items())
            + "</ul>"
        )
    out.append(
        "<p class='muted'>The SHA-256 of report.json is recorded in the migration ledger; "
        "<code>kafka-migrate report verify report.json</code> checks this file against it.</p></body></html>"
    )
    return "\n".join(out)
