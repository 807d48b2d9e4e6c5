"""The cutover report as Markdown and HTML, in the look of the run's sign-off report (``reports.html``).

A refused cutover reads as what happened and the safe way out: its problems listed under the topic
or consumer groups they name, then the steps that stop those and run the cutover again. Only a
completed cutover mentions a failback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_migration.model.text import plural
from kafka_migration.reports.html import escape as _e
from kafka_migration.reports.html import head
from kafka_migration.reports.signoff import render_html, render_markdown


def _mark(done: bool | None) -> str:
    return {True: "[x]", False: "[ ] NOT DONE:", None: "[ ]"}[done]


def _final_run(cutover: Mapping[str, Any]) -> str:
    if cutover.get("run_id"):
        return f"final run `{cutover['run_id']}`"
    if cutover["status"] == "refused":
        return "no final run (the pre-flight refused the cutover before it)"
    return "no final run"


def _count(refusal: Mapping[str, Any]) -> int:
    return sum(len(g["problems"]) for g in refusal["problems"])


def _refused_line(refusal: Mapping[str, Any], what: str, stays: str) -> str:
    undone = "nothing was copied back" if what == "failback" else "nothing was switched"
    return (
        f"The pre-flight refused the {what} ({plural(_count(refusal), 'problem')}): {undone} and nothing was "
        f"written. Producers and consumers stay on the {stays} cluster."
    )


def _refusal_markdown(refusal: Mapping[str, Any], title: str) -> list[str]:
    lines = ["", f"{title} Why it was refused", ""]
    for group in refusal["problems"]:
        lines.append(f"- **{group['about']}**")
        lines += [f"  - {text}" for text in group["problems"]]
    lines += ["", f"{title} The safe way out", ""]
    lines += [f"{n}. {step}" for n, step in enumerate(refusal["way_out"], 1)]
    return lines


def _failback_markdown(f: Mapping[str, Any]) -> list[str]:
    lines = ["", f"## Failback: {str(f['status']).upper()}", ""]
    if f.get("run_id"):
        lines.append(
            f"Run `{f['run_id']}` copied what the target received after the cutover back to the source "
            f"({f['started_at']} to {f['ended_at'] or 'unfinished'}). {f['message'] or ''}".rstrip()
        )
    elif f.get("refusal"):
        lines.append(_refused_line(f["refusal"], "failback", "target"))
    else:
        lines.append(f"No failback run. {f['message'] or ''}".rstrip())
    if f.get("refusal"):
        lines += _refusal_markdown(f["refusal"], "###")
    if f.get("run_report"):
        lines += ["", _demote(render_markdown(f["run_report"]))]
    return lines


def render_markdown_report(report: Mapping[str, Any]) -> str:
    c = report["cutover"]
    refusal = report.get("refusal")
    lines = [
        f"# Kafka cutover report: {report['verdict']}",
        "",
        f"Cutover `{c['cutover_id']}` ({c['trigger']}), {c['started_at']} to {c['ended_at'] or 'unfinished'}: "
        f"`{c['source']['cluster_id']}` ({c['source']['bootstrap']}) -> `{c['target']['cluster_id']}` "
        f"({c['target']['bootstrap']}), {_final_run(c)}.",
        "",
        _refused_line(refusal, "cutover", "source") if refusal else (c["message"] or ""),
    ]
    if refusal:
        lines += _refusal_markdown(refusal, "##")
    lines += ["", "## Checklist", ""]
    lines += [f"- {_mark(i['done'])} {i['step']}: {i['detail']}" for i in report["checklist"]]
    if report["ends_at_cutover"]:
        lines += ["", "## Offsets at the cutover", "", "| source | source end | target | target end |"]
        lines += ["|---|---:|---|---:|"]
        for t in report["ends_at_cutover"]:
            for p in t["partitions"]:
                lines.append(
                    f"| `{t['source_topic']}[{p['partition']}]` | {p['source_end']} | "
                    f"`{t['target_topic']}[{p['partition']}]` | {p['target_end']} |"
                )
    if report.get("failback"):
        lines += _failback_markdown(report["failback"])
    if report.get("run_report"):
        lines += ["", "## Final run", "", _demote(render_markdown(report["run_report"]))]
    return "\n".join(lines).rstrip() + "\n"


def _demote(markdown: str) -> str:
    return "\n".join("##" + line if line.startswith("#") else line for line in markdown.splitlines())


def _body(document: str) -> str:
    start = document.find("<body>")
    end = document.rfind("</body>")
    return document[start + len("<body>") : end] if start >= 0 and end > start else document


def _code_spans(markdown_text: str) -> str:
    """Escaped text with `backticks` as <code>."""
    parts = markdown_text.split("`")
    return "".join(f"<code>{_e(p)}</code>" if i % 2 else _e(p) for i, p in enumerate(parts))


def _refusal_html(refusal: Mapping[str, Any], level: str) -> str:
    out = [f"<{level}>Why it was refused</{level}><ul class='reasons'>"]
    for group in refusal["problems"]:
        items = "".join(f"<li>{_e(text)}</li>" for text in group["problems"])
        out.append(f"<li><b>{_e(group['about'])}</b><ul>{items}</ul></li>")
    out.append(f"</ul><{level}>The safe way out</{level}><ol class='way-out'>")
    out += [f"<li>{_e(step)}</li>" for step in refusal["way_out"]]
    out.append("</ol>")
    return "".join(out)


def _failback_html(f: Mapping[str, Any]) -> str:
    out = [f"<h2>Failback: {_e(str(f['status']).upper())}</h2>"]
    if f.get("run_id"):
        out.append(
            f"<p>Run <code>{_e(f['run_id'])}</code> copied what the target received after the cutover back to the "
            f"source ({_e(f['started_at'])} → {_e(f['ended_at'] or 'unfinished')}). {_e(f['message'] or '')}</p>"
        )
    elif f.get("refusal"):
        out.append(f"<p>{_e(_refused_line(f['refusal'], 'failback', 'target'))}</p>")
    else:
        out.append(f"<p>No failback run. {_e(f['message'] or '')}</p>")
    if f.get("refusal"):
        out.append(_refusal_html(f["refusal"], "h3"))
    if f.get("run_report"):
        out.append("<h2>Failback run</h2>" + _body(render_html(f["run_report"])))
    return "".join(out)


def render_html_report(report: Mapping[str, Any]) -> str:
    c = report["cutover"]
    ok = report["verdict"] == "CUTOVER COMPLETED"
    refusal = report.get("refusal")
    out = [
        head(f"Kafka cutover {c['cutover_id']}: {report['verdict']}"),
        f"<p class='muted'>Kafka cutover report</p><h1>Cutover {_e(c['cutover_id'])}</h1>",
        f"<p><span class='verdict {'ok' if ok else 'bad'}'>{_e(report['verdict'])}</span> "
        f"<span class='muted'>{_e(c['started_at'])} → {_e(c['ended_at'] or 'unfinished')} · triggered by "
        f"{_e(c['trigger'])}{' · DAG ' + _e(c['dag_id']) + ' run ' + _e(c['dag_run_id']) if c.get('dag_id') else ''}"
        f"</span></p>",
        "<table><tr><th></th><th>cluster id</th><th>bootstrap</th></tr>",
        f"<tr><th>source</th><td><code>{_e(c['source']['cluster_id'])}</code></td>"
        f"<td><code>{_e(c['source']['bootstrap'])}</code></td></tr>",
        f"<tr><th>target</th><td><code>{_e(c['target']['cluster_id'])}</code></td>"
        f"<td><code>{_e(c['target']['bootstrap'])}</code></td></tr></table>",
        f"<p>{_code_spans(_final_run(c)[0].upper() + _final_run(c)[1:])}.</p>",
        f"<p>{_e(_refused_line(refusal, 'cutover', 'source') if refusal else (c['message'] or ''))}</p>",
    ]
    if refusal:
        out.append(_refusal_html(refusal, "h2"))
    out.append("<h2>Checklist</h2><ul class='checklist'>")
    for i in report["checklist"]:
        box = {True: "☑", False: "☒", None: "☐"}[i["done"]]
        pill = {True: "ok", False: "bad", None: "neutral"}[i["done"]]
        state = {True: "done", False: "not done", None: "to do"}[i["done"]]
        out.append(f"<li>{box} <span class='pill {pill}'>{state}</span> <b>{_e(i['step'])}</b>: {_e(i['detail'])}</li>")
    out.append("</ul>")
    if report["ends_at_cutover"]:
        out.append(
            "<h2>Offsets at the cutover</h2><table><tr><th>source</th><th>source end</th><th>target</th>"
            "<th>target end</th></tr>"
        )
        for t in report["ends_at_cutover"]:
            for p in t["partitions"]:
                out.append(
                    f"<tr><td><code>{_e(t['source_topic'])}[{p['partition']}]</code></td><td class='num'>"
                    f"{p['source_end']}</td><td><code>{_e(t['target_topic'])}[{p['partition']}]</code></td>"
                    f"<td class='num'>{p['target_end']}</td></tr>"
                )
        out.append("</table>")
    if report.get("failback"):
        out.append(_failback_html(report["failback"]))
    if report.get("run_report"):
        out.append("<h2>Final run</h2>" + _body(render_html(report["run_report"])))
    out.append(
        "<p class='muted'>The SHA-256 of report.json is recorded in the migration ledger; "
        "<code>kafka-migrate report verify report.json</code> checks this file against it.</p></body></html>"
    )
    return "\n".join(out)
