"""The cutover report: the final run's sign-off report (with its consumer groups section) and a checklist.

Built from the ledger alone, like the run report (``reports.signoff``), and written next to
it as ``report.json`` / ``report.html`` / ``report.md`` in ``<reports>/<cutover id>/``;
the SHA-256 of ``report.json`` is recorded on the cutover, so ``kafka-migrate report
verify`` vouches for it the same way. A failback adds its run and the groups moved back.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kafka_migration.reports.signoff import (
    REPORT_VERSION,
    ReportFiles,
    build_report,
    generate_report,
    render_html,
    render_markdown,
    write_report_files,
)

VERDICTS = {
    "completed": "CUTOVER COMPLETED",
    "failed": "CUTOVER FAILED",
    "refused": "CUTOVER REFUSED",
    "running": "CUTOVER INCOMPLETE",
    "checking": "CUTOVER INCOMPLETE",
}


def _iso(value: Any) -> str | None:
    return value.isoformat(timespec="seconds") if hasattr(value, "isoformat") else value


def _group_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    keep = (
        "group_id",
        "source_topic",
        "partition",
        "source_offset",
        "source_end",
        "target_topic",
        "target_offset",
        "outcome",
        "proof",
        "reason",
    )
    return [{k: r.get(k) for k in keep} for r in rows]


def _starts(groups: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per group, where it starts on the other cluster: the proven target offsets."""
    starts: dict[str, list[str]] = {}
    for r in groups:
        if r.get("target_offset") is not None and r.get("outcome") in ("synced", "unchanged"):
            where = f"{r['target_topic']}[{r['partition']}] at {r['target_offset']}"
            starts.setdefault(r["group_id"], []).append(where)
    return starts


def checklist(
    cutover: Mapping[str, Any], groups: Sequence[Mapping[str, Any]], failback_groups: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """What the cutover (and a failback) proved, and what the operator does next, in order."""
    done = cutover["status"] == "completed"
    params = cutover.get("params") or {}
    ends = [
        f"{t['source_topic']}[{p['partition']}] {p['source_end']} -> {t['target_topic']}[{p['partition']}] "
        f"{p['target_end']}"
        for t in cutover.get("topics") or []
        for p in t["partitions"]
    ]
    items = [
        {
            "step": "Producers stopped on the source",
            "done": cutover["status"] not in ("refused", "checking"),
            "detail": f"no source topic moved for {params.get('quiet_seconds')} s before the final run, nor during it",
        },
        {
            "step": "Final incremental run verified up to the source end",
            "done": bool(ends),
            "detail": f"run {cutover.get('run_id')}: the clusters hold the same records up to "
            + (", ".join(ends) if ends else "(not reached)"),
        },
        {
            "step": "Consumer groups idle on both clusters, offsets translated and proven",
            "done": done,
            "detail": ", ".join(cutover.get("groups") or []) or "no consumer group selected",
        },
        {
            "step": f"Switch producers to the target cluster ({cutover['target_bootstrap']})",
            "done": None,
            "detail": "to do now" if done else "do NOT switch: the cutover did not complete",
        },
    ]
    starts = _starts(groups)
    for group in sorted(set(cutover.get("groups") or []) | set(starts)):
        items.append(
            {
                "step": f"Consumers of group {group} may start on the target",
                "done": None,
                "detail": ("starts from " + ", ".join(starts[group])) if group in starts else "no proven offsets",
            }
        )
    failback = cutover.get("failback_status")
    items.append(
        {
            "step": "To go back: records written to the target flow back to the source",
            "done": True if failback == "completed" else None,
            "detail": f"kafka-migrate failback --cutover {cutover['cutover_id']} (or DAG kafka_failback)"
            + (f"; failback {failback}, run {cutover.get('failback_run_id')}" if failback else ""),
        }
    )
    if failback == "completed":
        back = _starts(failback_groups)
        items.append(
            {
                "step": f"Switch producers back to the source cluster ({cutover['source_bootstrap']})",
                "done": None,
                "detail": "every record written to the target after the cutover is on the source, verified",
            }
        )
        items.extend(
            {
                "step": f"Consumers of group {group} may start on the source again",
                "done": None,
                "detail": "starts from " + ", ".join(back[group]),
            }
            for group in sorted(back)
        )
    return items


def build_cutover_report(
    cutover: Mapping[str, Any],
    run_report: Mapping[str, Any] | None,
    groups: Sequence[Mapping[str, Any]],
    failback_report: Mapping[str, Any] | None = None,
    failback_groups: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    return {
        "report_version": REPORT_VERSION,
        "kind": "cutover",
        "verdict": VERDICTS.get(cutover["status"], str(cutover["status"]).upper()),
        "cutover": {
            "cutover_id": cutover["cutover_id"],
            "status": cutover["status"],
            "message": cutover.get("message"),
            "trigger": cutover.get("trigger"),
            "dag_id": cutover.get("dag_id"),
            "dag_run_id": cutover.get("dag_run_id"),
            "params": dict(cutover.get("params") or {}),
            "source": {"cluster_id": cutover["source_cluster_id"], "bootstrap": cutover["source_bootstrap"]},
            "target": {"cluster_id": cutover["target_cluster_id"], "bootstrap": cutover["target_bootstrap"]},
            "run_id": cutover.get("run_id"),
            "started_at": _iso(cutover.get("started_at")),
            "ended_at": _iso(cutover.get("ended_at")),
            "groups": list(cutover.get("groups") or []),
        },
        "ends_at_cutover": list(cutover.get("topics") or []),
        "groups": _group_rows(groups),
        "checklist": checklist(cutover, groups, failback_groups),
        "run_report": dict(run_report) if run_report else None,
        "failback": None
        if not cutover.get("failback_status")
        else {
            "status": cutover.get("failback_status"),
            "message": cutover.get("failback_message"),
            "run_id": cutover.get("failback_run_id"),
            "started_at": _iso(cutover.get("failback_started_at")),
            "ended_at": _iso(cutover.get("failback_ended_at")),
            "groups": _group_rows(failback_groups),
            "run_report": dict(failback_report) if failback_report else None,
        },
    }


def _mark(done: bool | None) -> str:
    return {True: "[x]", False: "[ ] NOT DONE:", None: "[ ]"}[done]


def render_markdown_report(report: Mapping[str, Any]) -> str:
    c = report["cutover"]
    lines = [
        f"# Kafka cutover report: {report['verdict']}",
        "",
        f"Cutover `{c['cutover_id']}` ({c['trigger']}), {c['started_at']} to {c['ended_at'] or 'unfinished'}: "
        f"`{c['source']['cluster_id']}` ({c['source']['bootstrap']}) -> `{c['target']['cluster_id']}` "
        f"({c['target']['bootstrap']}), final run `{c['run_id']}`.",
        "",
        f"{c['message'] or ''}",
        "",
        "## Checklist",
        "",
    ]
    lines += [f"- {_mark(i['done'])} {i['step']}: {i['detail']}" for i in report["checklist"]]
    lines += ["", "## Offsets at the cutover", "", "| source | source end | target | target end |"]
    lines += ["|---|---:|---|---:|"]
    for t in report["ends_at_cutover"]:
        for p in t["partitions"]:
            lines.append(
                f"| `{t['source_topic']}[{p['partition']}]` | {p['source_end']} | "
                f"`{t['target_topic']}[{p['partition']}]` | {p['target_end']} |"
            )
    if report.get("failback"):
        f = report["failback"]
        lines += [
            "",
            f"## Failback: {str(f['status']).upper()}",
            "",
            f"Run `{f['run_id']}` copied what the target received after the cutover back to the source "
            f"({f['started_at']} to {f['ended_at'] or 'unfinished'}). {f['message'] or ''}",
        ]
        if f.get("run_report"):
            lines += ["", _demote(render_markdown(f["run_report"]))]
    if report.get("run_report"):
        lines += ["", "## Final run", "", _demote(render_markdown(report["run_report"]))]
    return "\n".join(lines).rstrip() + "\n"


def _demote(markdown: str) -> str:
    return "\n".join("##" + line if line.startswith("#") else line for line in markdown.splitlines())


def _body(document: str) -> str:
    start = document.find("<body>")
    end = document.rfind("</body>")
    return document[start + len("<body>") : end] if start >= 0 and end > start else document


def _e(value: Any) -> str:
    return html.escape("–" if value is None else str(value))


def render_html_report(report: Mapping[str, Any]) -> str:
    c = report["cutover"]
    ok = report["verdict"] == "CUTOVER COMPLETED"
    run_html = render_html(report["run_report"]) if report.get("run_report") else ""
    style = run_html[run_html.find("<style>") : run_html.find("</style>") + 8] if run_html else ""
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Kafka cutover {_e(c['cutover_id'])}: {_e(report['verdict'])}</title>{style}</head><body>",
        f"<p class='muted'>Kafka cutover report</p><h1>Cutover {_e(c['cutover_id'])}</h1>",
        f"<p><span class='verdict {'ok' if ok else 'bad'}'>{_e(report['verdict'])}</span> "
        f"<span class='muted'>{_e(c['started_at'])} → {_e(c['ended_at'] or 'unfinished')} · "
        f"<code>{_e(c['source']['cluster_id'])}</code> → <code>{_e(c['target']['cluster_id'])}</code> · final run "
        f"<code>{_e(c['run_id'])}</code></span></p><p>{_e(c['message'] or '')}</p>",
        "<h2>Checklist</h2><ul>",
        *(f"<li>{_e(_mark(i['done']))} <b>{_e(i['step'])}</b>: {_e(i['detail'])}</li>" for i in report["checklist"]),
        "</ul><h2>Offsets at the cutover</h2><table><tr><th>source</th><th>source end</th><th>target</th>"
        "<th>target end</th></tr>",
    ]
    for t in report["ends_at_cutover"]:
        for p in t["partitions"]:
            out.append(
                f"<tr><td><code>{_e(t['source_topic'])}[{p['partition']}]</code></td><td class='num'>"
                f"{p['source_end']}</td><td><code>{_e(t['target_topic'])}[{p['partition']}]</code></td>"
                f"<td class='num'>{p['target_end']}</td></tr>"
            )
    out.append("</table>")
    if report.get("failback"):
        f = report["failback"]
        out.append(
            f"<h2>Failback: {_e(str(f['status']).upper())}</h2><p>Run <code>{_e(f['run_id'])}</code> copied what "
            f"the target received after the cutover back to the source. {_e(f['message'] or '')}</p>"
        )
        if f.get("run_report"):
            out.append("<h2>Failback run</h2>" + _body(render_html(f["run_report"])))
    if run_html:
        out.append("<h2>Final run</h2>" + _body(run_html))
    out.append("</body></html>")
    return "\n".join(out)


def write_cutover_report(report: Mapping[str, Any], directory: Path) -> ReportFiles:
    return write_report_files(report, directory, render_html_report, render_markdown_report)


def _run_report(ledger: Any, run_id: str | None, reports_dir: Path) -> dict[str, Any] | None:
    """The run's own report, with the groups synced as part of it; rewritten so that its files and
    recorded digest include them too."""
    run = ledger.run(run_id) if run_id else None
    if run is None:
        return None
    generate_report(ledger, run["run_id"], reports_dir)
    return build_report(ledger.run(run["run_id"]), ledger.run_segments(run_id), _sync_rows(ledger, run_id))


def _sync_rows(ledger: Any, run_id: str | None) -> list[dict[str, Any]]:
    return ledger.group_sync_rows(run_id=run_id) if run_id else []


def generate_cutover_report(ledger: Any, cutover_id: str, reports_dir: Path) -> ReportFiles:
    """Build the cutover's report from the ledger, write it, and record its digest on the cutover."""
    from kafka_migration.exceptions import ConfigurationError

    cutover = ledger.cutover(cutover_id)
    if cutover is None:
        raise ConfigurationError(f"The ledger has no cutover {cutover_id!r}; list them with 'kafka-migrate history'.")
    report = build_cutover_report(
        cutover,
        _run_report(ledger, cutover.get("run_id"), reports_dir),
        _sync_rows(ledger, cutover.get("run_id")),
        _run_report(ledger, cutover.get("failback_run_id"), reports_dir),
        _sync_rows(ledger, cutover.get("failback_run_id")),
    )
    files = write_cutover_report(report, Path(reports_dir) / cutover_id)
    ledger.update_cutover(cutover_id, report_sha256=files.sha256)
    return files
