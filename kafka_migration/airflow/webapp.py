"""The "Kafka migrations" page inside the Airflow UI: runs from the ledger and their reports.

A FastAPI app from a factory, mounted by the plugin under ``/kafka-migrations``;
tests use it with FastAPI's TestClient.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse

from kafka_migration.model.timings import RunTimings
from kafka_migration.reports.signoff import VERDICTS, generate_report
from kafka_migration.reports.summary import timings_line

_MEDIA = {"html": "text/html; charset=utf-8", "json": "application/json", "md": "text/markdown; charset=utf-8"}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2430;margin:1.5rem;}
h1{font-size:1.4rem;margin:0 0 .3rem}p.muted{color:#5c6b7a;margin:.2rem 0 1rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #dde3ea;padding:.45rem .6rem;text-align:left}
th{background:#f3f6f9;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,Menlo,monospace}.pill{padding:.1rem .5rem;border-radius:3px;color:#fff;font-size:12px;font-weight:600}
.ok{background:#1f8a4c}.bad{background:#c0392b}.neutral{background:#6c7a89}a{color:#1b5fb4}
"""


def _status_class(status: str) -> str:
    if status in ("verified", "up_to_date"):
        return "ok"
    if status in ("mismatch", "failed", "unverified"):
        return "bad"
    return "neutral"


def create_app(
    ledger_url: Callable[[], str] | None = None,
    reports_dir: Callable[[], Path] | None = None,
    dependencies: Sequence[Any] = (),
) -> FastAPI:
    """``ledger_url`` and ``reports_dir`` are read per request, so configuration changes need no restart.

    ``dependencies`` guard every route: Airflow mounts plugin apps without authentication,
    so the plugin passes Airflow's own access check (see ``plugins/``).
    """
    from kafka_migration.airflow import settings

    get_url = ledger_url or settings.configured_ledger_url
    get_reports = reports_dir or settings.reports_dir
    app = FastAPI(title="Kafka migrations", docs_url=None, redoc_url=None, dependencies=list(dependencies))

    @lru_cache(maxsize=4)
    def ledger_for(url: str) -> Any:
        from kafka_migration.ledger import Ledger

        return Ledger.open(url)

    def ledger() -> Any:
        return ledger_for(get_url())

    def run_or_404(run_id: str) -> dict[str, Any]:
        run = ledger().run(run_id)
        if run is None:
            raise HTTPException(status_code=404, detail=f"No run {run_id!r} in the ledger")
        return run

    @app.get("/api/runs")
    def api_runs(limit: int = 100) -> JSONResponse:
        rows = ledger().runs(limit=limit)
        keys = ("run_id", "trigger", "dag_id", "dag_run_id", "status", "topics", "records", "report_sha256")
        return JSONResponse(
            [
                {
                    **{k: r[k] for k in keys},
                    "started_at": r["started_at"].isoformat() if r["started_at"] else None,
                    "ended_at": r["ended_at"].isoformat() if r["ended_at"] else None,
                    "source_cluster_id": r["source_cluster_id"],
                    "target_cluster_id": r["target_cluster_id"],
                    "timings": t.to_dict() if (t := _timings(r)) else None,
                }
                for r in rows
            ]
        )

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> HTMLResponse:
        rows = ledger().runs(limit=200)
        body = []
        for r in rows:
            report = request.url_for("report_file", run_id=r["run_id"], fmt="html")
            duration = _duration(r)
            origin = f"{r['dag_id']}" if r["dag_id"] else r["trigger"]
            body.append(
                "<tr>"
                f"<td><code>{html.escape(r['run_id'])}</code></td><td>{html.escape(origin)}</td>"
                f"<td>{html.escape(r['started_at'].strftime('%Y-%m-%d %H:%M:%S') if r['started_at'] else '–')}</td>"
                f"<td class='num'>{duration}</td>"
                f"<td><span class='pill {_status_class(r['status'])}'>"
                f"{html.escape(VERDICTS.get(r['status'], r['status']))}</span></td>"
                f"<td class='num'>{r['topics']}</td><td class='num'>{r['records']:,}</td>"
                f"<td>{html.escape(r['source_cluster_id'])} → {html.escape(r['target_cluster_id'])}</td>"
                f"<td><a href='{report}'>report</a></td></tr>"
            )
        table = (
            "<table><tr><th>run</th><th>DAG / trigger</th><th>started (UTC)</th><th>duration</th><th>verdict</th>"
            "<th>topics</th><th>records copied</th><th>clusters</th><th></th></tr>" + "".join(body) + "</table>"
            if body
            else "<p>No migration runs yet. Trigger the <code>kafka_migration</code> DAG to start one.</p>"
        )
        table += _cutovers_table(request, ledger().cutovers(limit=50))
        page = (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Kafka migrations</title>"
            f"<style>{_CSS}</style></head><body><h1>Kafka migrations</h1>"
            f"<p class='muted'>{len(rows)} run(s) in the ledger, newest first. Each report's SHA-256 is recorded in "
            "the ledger (<code>kafka-migrate report verify</code>).</p>"
            f"{table}</body></html>"
        )
        return HTMLResponse(page)

    @app.get("/runs/{run_id}")
    def run_page(run_id: str, request: Request) -> RedirectResponse:
        run_or_404(run_id)
        return RedirectResponse(str(request.url_for("report_file", run_id=run_id, fmt="html")), status_code=307)

    @app.get("/runs/{run_id}/report.{fmt}", name="report_file")
    def report_file(run_id: str, fmt: str) -> FileResponse:
        if fmt not in _MEDIA:
            raise HTTPException(status_code=404, detail="report formats: html, json, md")
        run = run_or_404(run_id)
        directory = Path(get_reports()) / run_id
        path = directory / f"report.{'md' if fmt == 'md' else fmt}"
        if not path.exists():
            if run["status"] == "running":
                raise HTTPException(
                    status_code=404, detail=f"Run {run_id} is still running; its report comes at the end"
                )
            generate_report(ledger(), run_id, Path(get_reports()))
        return FileResponse(path, media_type=_MEDIA[fmt])

    @app.get("/cutovers/{cutover_id}/report.{fmt}", name="cutover_report_file")
    def cutover_report_file(cutover_id: str, fmt: str) -> FileResponse:
        return FileResponse(_cutover_report(ledger(), Path(get_reports()), cutover_id, fmt), media_type=_MEDIA[fmt])

    return app


def _timings(run: dict[str, Any]) -> RunTimings | None:
    stored = run.get("timings")
    return RunTimings.from_dict(stored if isinstance(stored, dict) else None)


def _duration(run: dict[str, Any]) -> str:
    """The measured wall time with its parts as a tooltip; else end minus start as the ledger saw them."""
    timings = _timings(run)
    if timings is not None:
        return f"<span title='{html.escape(timings_line(timings))}'>{timings.wall:,.1f} s</span>"
    if run["ended_at"] and run["started_at"]:
        return f"{(run['ended_at'] - run['started_at']).total_seconds():,.0f} s"
    return "–"


def _cutover_report(ledger: Any, reports: Path, cutover_id: str, fmt: str) -> Path:
    """A cutover's report file, written from the ledger when missing."""
    from kafka_migration.cutover.report import generate_cutover_report

    if fmt not in _MEDIA:
        raise HTTPException(status_code=404, detail="report formats: html, json, md")
    if ledger.cutover(cutover_id) is None:
        raise HTTPException(status_code=404, detail=f"No cutover {cutover_id!r} in the ledger")
    path = reports / cutover_id / f"report.{fmt}"
    if not path.exists():
        generate_cutover_report(ledger, cutover_id, reports)
    return path


def _cutovers_table(request: Request, rows: Sequence[dict[str, Any]]) -> str:
    """The cutovers and their failbacks, each with its report (checklist, group start offsets)."""
    if not rows:
        return ""
    body = []
    for r in rows:
        report = request.url_for("cutover_report_file", cutover_id=r["cutover_id"], fmt="html")
        status = {"completed": "verified", "refused": "running"}.get(r["status"], r["status"])
        failback = f"{r['failback_status']}" if r["failback_status"] else "–"
        body.append(
            f"<tr><td><code>{html.escape(r['cutover_id'])}</code></td>"
            f"<td>{html.escape(r['started_at'].strftime('%Y-%m-%d %H:%M:%S') if r['started_at'] else '–')}</td>"
            f"<td><span class='pill {_status_class(status)}'>{html.escape(r['status'].upper())}</span></td>"
            f"<td><code>{html.escape(r['run_id'] or '–')}</code></td><td>{html.escape(failback)}</td>"
            f"<td>{html.escape(r['source_cluster_id'])} → {html.escape(r['target_cluster_id'])}</td>"
            f"<td><a href='{report}'>report</a></td></tr>"
        )
    return (
        "<h1 style='margin-top:1.5rem'>Cutovers</h1><table><tr><th>cutover</th><th>started (UTC)</th><th>status</th>"
        "<th>final run</th><th>failback</th><th>clusters</th><th></th></tr>" + "".join(body) + "</table>"
    )
