"""An access sync's report as Markdown (tickets, change boards) and as one self-contained HTML page, from its
``report.json`` content (reports/security.py): the verdict, the decision check, counts per resource type and
pattern, every binding and what became of it, the users (those needing a password first), quotas, probes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_migration.model.access import AccessAction
from kafka_migration.model.text import plural
from kafka_migration.reports.html import escape as _e
from kafka_migration.reports.html import head

# A count row's columns, as the report says them (a dry run's would_add counts as added, its would_remove as removed).
COLUMNS = (AccessAction.ADDED, AccessAction.PRESENT, AccessAction.REMOVED, AccessAction.REFUSED, AccessAction.CONFLICT)


def _value(value: Any) -> str:
    if value is None:
        return "–"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


def _check_sentence(s: Mapping[str, Any]) -> str:
    check = s["decision_check"]
    unreadable = check["unreadable"]
    text = (
        f"{check['actions_checked']:,} actions of the source's bindings decided on both clusters with Apache Kafka's "
        f"authorizer rules: {plural(len(check['differences']), 'difference')}"
    )
    if any(unreadable):
        text += f"; bindings that could not be read: {unreadable[0]} on the source, {unreadable[1]} on the target"
    return text + "."


def _summary_lines(s: Mapping[str, Any]) -> list[str]:
    probes = s["probes"]
    return [
        _check_sentence(s),
        f"SCRAM users: {len(s['users'])}; needing a password: {', '.join(s['needs_password']) or 'none'}.",
        f"Client quotas: {len(s['quotas'])}; left different on the target: {s['quota_differences']}.",
        f"Live probes: {probes['matched']} of {probes['total']} answered alike on both clusters.",
    ]


def render_access_markdown(report: Mapping[str, Any]) -> str:
    s = report["security"]
    lines = [
        f"# Access sync report: {report['verdict']}",
        "",
        f"Sync `{s['sync_id']}`, {s['synced_at']}" + (" (dry run: nothing written)" if s["dry_run"] else "") + ".",
        "",
        "| | cluster id | bootstrap |",
        "|---|---|---|",
        f"| source | `{s['source']['cluster_id']}` | `{s['source']['bootstrap']}` |",
        f"| target | `{s['target']['cluster_id']}` | `{s['target']['bootstrap']}` |",
        "",
        "## Verdict",
        "",
        *(f"- {line}" for line in _summary_lines(s)),
        *(f"- different: {d}" for d in s["decision_check"]["differences"]),
        *(f"- probe answered differently: {m}" for m in s["probes"]["mismatches"]),
        "",
        "## ACL bindings per resource type and pattern",
        "",
        "| resource type | pattern | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---:|" * len(COLUMNS),
        *(
            f"| {c['resource_type']} | {c['pattern_type']} | " + " | ".join(f"{c[k]:,}" for k in COLUMNS) + " |"
            for c in s["counts"]
        ),
        "",
        "## Every binding",
        "",
        "| action | binding | reason |",
        "|---|---|---|",
        *(f"| {b['action']} | {b['binding']} | {b['reason'] or '–'} |" for b in s["bindings"]),
        "",
        "## SCRAM users",
        "",
        "| user | mechanism | iterations | action | login on the target |",
        "|---|---|---:|---|---|",
        *(
            f"| {u['user']} | {u['mechanism']} | {u['iterations']:,} | {u['action']} | "
            f"{u['login'] or '–'}{': ' + u['reason'] if u['reason'] else ''} |"
            for u in _users_first_needing(s["users"])
        ),
        "",
        "## Client quotas",
        "",
        "| entity | key | source | target before | action |",
        "|---|---|---:|---:|---|",
        *(
            f"| {q['entity']} | {q['key']} | {_value(q['value'])} | {_value(q['target_value'])} | {q['action']} |"
            for q in s["quotas"]
        ),
        "",
    ]
    return "\n".join(lines)


def _users_first_needing(users: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(users, key=lambda u: (u["action"] != AccessAction.NEEDS_PASSWORD, u["user"]))


def _cls(verdict: str) -> str:
    return {"PROVEN": "ok", "DRY RUN": "neutral"}.get(verdict, "bad")


def render_access_html(report: Mapping[str, Any]) -> str:
    s = report["security"]
    verdict = report["verdict"]
    out = [
        head(f"Access sync {s['sync_id']}: {verdict}"),
        f"<p class='muted'>Access sync report</p><h1>Sync {_e(s['sync_id'])}</h1>",
        f"<p><span class='verdict {_cls(verdict)}'>{_e(verdict)}</span> <span class='muted'>{_e(s['synced_at'])}"
        + (" · dry run: nothing written" if s["dry_run"] else "")
        + "</span></p>",
        "<table><tr><th></th><th>cluster id</th><th>bootstrap</th></tr>",
        *(
            f"<tr><th>{role}</th><td><code>{_e(s[role]['cluster_id'])}</code></td>"
            f"<td><code>{_e(s[role]['bootstrap'])}</code></td></tr>"
            for role in ("source", "target")
        ),
        "</table><h2>Verdict</h2><ul>",
        *(f"<li>{_e(line)}</li>" for line in _summary_lines(s)),
        *(f"<li>different: {_e(d)}</li>" for d in s["decision_check"]["differences"]),
        *(f"<li>probe answered differently: {_e(m)}</li>" for m in s["probes"]["mismatches"]),
        "</ul><h2>ACL bindings per resource type and pattern</h2><table><tr><th>resource type</th><th>pattern</th>",
        *(f"<th>{_e(c)}</th>" for c in COLUMNS),
        "</tr>",
        *(
            f"<tr><td>{_e(c['resource_type'])}</td><td>{_e(c['pattern_type'])}</td>"
            + "".join(f"<td class='num'>{c[k]:,}</td>" for k in COLUMNS)
            + "</tr>"
            for c in s["counts"]
        ),
        "</table><h2>Every binding</h2><table><tr><th>action</th><th>binding</th><th>reason</th></tr>",
        *(
            f"<tr><td>{_e(b['action'])}</td><td><code>{_e(b['binding'])}</code></td><td>{_e(b['reason'])}</td></tr>"
            for b in s["bindings"]
        ),
        "</table><h2>SCRAM users</h2><table><tr><th>user</th><th>mechanism</th><th>iterations</th><th>action</th>"
        "<th>login on the target</th></tr>",
        *(
            f"<tr><td>{_e(u['user'])}</td><td>{_e(u['mechanism'])}</td><td class='num'>{u['iterations']:,}</td>"
            f"<td>{_e(u['action'])}</td><td>{_e(u['login'])}{_e(': ' + u['reason']) if u['reason'] else ''}</td></tr>"
            for u in _users_first_needing(s["users"])
        ),
        "</table><h2>Client quotas</h2><table><tr><th>entity</th><th>key</th><th>source</th><th>target before</th>"
        "<th>action</th></tr>",
        *(
            f"<tr><td>{_e(q['entity'])}</td><td>{_e(q['key'])}</td><td class='num'>{_e(_value(q['value']))}</td>"
            f"<td class='num'>{_e(_value(q['target_value']))}</td><td>{_e(q['action'])}</td></tr>"
            for q in s["quotas"]
        ),
        "</table></body></html>",
    ]
    return "\n".join(out)
