"""The cutover report: the final run's sign-off report (with its consumer groups section) and a checklist.

Built from the ledger alone, like the run report (``reports.signoff``), and written next to
it as ``report.json`` / ``report.html`` / ``report.md`` in ``<reports>/<cutover id>/``;
the SHA-256 of ``report.json`` is recorded on the cutover, so ``kafka-migrate report
verify`` vouches for it the same way. A failback adds its run and the groups moved back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_migration.cutover.refusal import (
    FAILBACK_REFUSAL,
    REFUSAL,
    Reason,
    blocking_topics,
    group_detail,
    grouped,
    way_out,
)
from kafka_migration.cutover.report_render import render_html_report, render_markdown_report
from kafka_migration.model.text import noun_for
from kafka_migration.reports.signoff import (
    REPORT_VERSION,
    ReportFiles,
    build_report,
    generate_report,
    write_report_files,
)

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

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


def _final_run(cutover: Mapping[str, Any]) -> str:
    run_id = cutover.get("run_id")
    if run_id:
        return f"run {run_id}"
    return "no final run: the pre-flight refused the cutover" if cutover["status"] == "refused" else "no final run"


def _again(cutover: Mapping[str, Any], what: str = "cutover") -> str:
    """How to run a cutover (or its failback) again: the way it was started."""
    if cutover.get("trigger") == "airflow":
        dag = cutover.get("dag_id") or "kafka_cutover"
        return f"trigger DAG {'kafka_failback' if what == 'failback' else dag}" + (
            f" with cutover_id {cutover['cutover_id']}" if what == "failback" else " with the same Params"
        )
    if what == "failback":
        return f"kafka-migrate failback --cutover {cutover['cutover_id']}"
    return "kafka-migrate cutover with the same options"


def checklist(
    cutover: Mapping[str, Any], groups: Sequence[Mapping[str, Any]], failback_groups: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """What the cutover (and a failback) proved, and what the operator does next, in order.

    Only a completed cutover offers a failback: a refused or failed one switched nothing, and its way
    out is to stop what was named and run the cutover again.
    """
    status = cutover["status"]
    done = status == "completed"
    params = cutover.get("params") or {}
    refusal = [Reason.from_dict(r) for r in params.get(REFUSAL) or []] if status == "refused" else []
    ends = [
        f"{t['source_topic']}[{p['partition']}] {p['source_end']} -> {t['target_topic']}[{p['partition']}] "
        f"{p['target_end']}"
        for t in cutover.get("topics") or []
        for p in t["partitions"]
    ]
    items = [
        _producers_item(cutover, refusal),
        {
            "step": "Final incremental run verified up to the source end",
            "done": bool(ends),
            "detail": f"{_final_run(cutover)}: the clusters hold the same records up to "
            + (", ".join(ends) if ends else "(not reached)")
            if cutover.get("run_id")
            else _final_run(cutover),
        },
        {
            "step": "Consumer groups idle on both clusters, offsets translated and proven",
            "done": done,
            "detail": _groups_detail(cutover, refusal),
        },
        {
            "step": f"Switch producers to the target cluster ({cutover['target_bootstrap']})",
            "done": None,
            "detail": "to do now"
            if done
            else "do NOT switch: the cutover was refused; nothing was switched"
            if status == "refused"
            else "do NOT switch: the cutover did not complete",
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
    if not done:
        items.append(
            {
                "step": "Keep producers and consumers on the source cluster, then run the cutover again",
                "done": None,
                "detail": "nothing to undo and nothing to fail back: the refused cutover switched nothing. "
                + " ".join(way_out(refusal, "cutover", _again(cutover)))
                if status == "refused"
                else f"fix what the message above says, then {_again(cutover)}; there is nothing to fail back",
            }
        )
        return items
    failback = cutover.get("failback_status")
    items.append(
        {
            "step": "To go back: records written to the target flow back to the source",
            "done": True if failback == "completed" else None,
            "detail": f"kafka-migrate failback --cutover {cutover['cutover_id']} (or DAG kafka_failback)"
            + (f"; failback {failback}" if failback else "")
            + (f", run {cutover['failback_run_id']}" if failback and cutover.get("failback_run_id") else ""),
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


def _producers_item(cutover: Mapping[str, Any], refusal: Sequence[Reason]) -> dict[str, Any]:
    status = cutover["status"]
    quiet = (cutover.get("params") or {}).get("quiet_seconds")
    written = blocking_topics(refusal)
    if written:
        detail = "still written to: " + "; ".join(
            f"{role} {noun_for(len(names), 'topic')} {', '.join(names)}" for role, names in sorted(written.items())
        )
        return {"step": "Producers stopped on the source", "done": False, "detail": detail}
    if status in ("refused", "checking"):
        seen = bool(refusal)  # the pre-flight saw the topics quiet and refused for another reason
        detail = f"no source topic moved for {quiet} s" if seen else "not known: the cutover was refused"
        return {"step": "Producers stopped on the source", "done": seen or None, "detail": detail}
    detail = f"no source topic moved for {quiet} s before the final run, nor during it"
    return {"step": "Producers stopped on the source", "done": True, "detail": detail}


def _groups_detail(cutover: Mapping[str, Any], refusal: Sequence[Reason]) -> str:
    blocking = group_detail(refusal)
    if blocking:
        return f"active members in {blocking}"
    moved = ", ".join(cutover.get("groups") or [])
    if cutover["status"] in ("refused", "checking"):
        return "not translated: the cutover was refused before the groups were moved"
    if moved:
        return moved
    if (cutover.get("params") or {}).get("groups"):
        return f"no consumer group matching {cutover['params']['groups']!r} has offsets on these topics"
    return "no consumer group has committed offsets on these topics"


def refusal_section(reasons: Sequence[Mapping[str, Any]], what: str, again: str) -> dict[str, Any] | None:
    """A refusal as the report shows it: problems under their topic or groups, and the safe way out."""
    if not reasons:
        return None
    found = [Reason.from_dict(r) for r in reasons]
    return {
        "problems": [{"about": about, "problems": texts} for about, texts in grouped(found)],
        "way_out": way_out(found, what, again),
    }


def build_cutover_report(
    cutover: Mapping[str, Any],
    run_report: Mapping[str, Any] | None,
    groups: Sequence[Mapping[str, Any]],
    failback_report: Mapping[str, Any] | None = None,
    failback_groups: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    params = dict(cutover.get("params") or {})
    refusal = params.pop(REFUSAL, None)
    failback_refusal = params.pop(FAILBACK_REFUSAL, None)
    failback = cutover.get("failback_status")
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
            "params": params,
            "source": {"cluster_id": cutover["source_cluster_id"], "bootstrap": cutover["source_bootstrap"]},
            "target": {"cluster_id": cutover["target_cluster_id"], "bootstrap": cutover["target_bootstrap"]},
            "run_id": cutover.get("run_id"),
            "started_at": _iso(cutover.get("started_at")),
            "ended_at": _iso(cutover.get("ended_at")),
            "groups": list(cutover.get("groups") or []),
        },
        "refusal": refusal_section(refusal or [], "cutover", _again(cutover))
        if cutover["status"] == "refused"
        else None,
        "ends_at_cutover": list(cutover.get("topics") or []),
        "groups": _group_rows(groups),
        "checklist": checklist(cutover, groups, failback_groups),
        "run_report": dict(run_report) if run_report else None,
        "failback": None
        if not failback
        else {
            "status": failback,
            "message": cutover.get("failback_message"),
            "run_id": cutover.get("failback_run_id"),
            "started_at": _iso(cutover.get("failback_started_at")),
            "ended_at": _iso(cutover.get("failback_ended_at")),
            "refusal": refusal_section(failback_refusal or [], "failback", _again(cutover, "failback")),
            "groups": _group_rows(failback_groups),
            "run_report": dict(failback_report) if failback_report else None,
        },
    }


def write_cutover_report(report: Mapping[str, Any], directory: Path) -> ReportFiles:
    return write_report_files(report, directory, render_html_report, render_markdown_report)


def _run_report(ledger: Ledger, run_id: str | None, reports_dir: Path) -> dict[str, Any] | None:
    """The run's own report, with the groups synced as part of it; rewritten so that its files and
    recorded digest include them too."""
    run = ledger.run(run_id) if run_id else None
    if run is None:
        return None
    generate_report(ledger, run.run_id, reports_dir)
    return build_report(run, ledger.run_segments(run.run_id), _sync_rows(ledger, run.run_id))


def _sync_rows(ledger: Ledger, run_id: str | None) -> list[dict[str, Any]]:
    return [r.to_dict() for r in ledger.group_sync_rows(run_id=run_id)] if run_id else []


def generate_cutover_report(ledger: Ledger, cutover_id: str, reports_dir: Path) -> ReportFiles:
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
