"""The plugin's FastAPI app, mounted by Airflow under ``/kafka-migrations``: the console's JSON API and bundle,
and the sign-off reports.

- ``/api/...``: the console's JSON API (``console.api``; OpenAPI at ``/openapi.json``);
- ``/static/...``: the console's React bundle, which the Airflow UI loads (the plugin's ``react_apps``);
- ``/runs/{run_id}/report.{html,json,md}`` and ``/cutovers/{cutover_id}/report.{...}``: the reports,
  written from the ledger when missing (the tasks' "Migration report" link leads here);
- ``/``: the console inside the Airflow UI.

Airflow mounts plugin apps without authentication: ``dependencies`` guard every route (the plugin passes
Airflow's own access check). Tests build the app with FastAPI's TestClient.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, RedirectResponse

from kafka_migration.airflow.console.clusters import Clusters
from kafka_migration.model.recorded import RecordedRun
from kafka_migration.reports import MEDIA_TYPES

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

BUNDLE_DIR = Path(__file__).parent / "console" / "www" / "dist"
BUNDLE = "console.umd.cjs"
CONSOLE_ROUTE = "kafka-migrations"  # /plugin/<this> in the Airflow UI
RUN_TAB_ROUTE = "kafka-migration-run"  # the tab on DAG run pages


def create_app(
    ledger_url: Callable[[], str] | None = None,
    reports_dir: Callable[[], Path] | None = None,
    dependencies: Sequence[Any] = (),
    state_dir: Callable[[], Path] | None = None,
    clusters: Clusters | None = None,
    bundle_dir: Path = BUNDLE_DIR,
) -> FastAPI:
    """``ledger_url``, ``reports_dir`` and ``state_dir`` are read per request, so configuration changes need no
    restart. ``dependencies`` guard every route."""
    from kafka_migration.airflow import settings
    from kafka_migration.airflow.console.api import create_router

    get_url = ledger_url or settings.configured_ledger_url
    get_reports = reports_dir or settings.reports_dir
    get_state = state_dir or settings.state_dir
    app = FastAPI(
        title="Kafka migrations console API",
        description="What the operator's console inside Airflow shows: runs, progress, checkpoints, consumer "
        "group syncs and cutovers, read from the migration ledger. Requires an Airflow login with read access "
        "to the kafka_migration DAG.",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served below, behind the same dependencies as every other route
        dependencies=list(dependencies),
    )

    @app.get("/openapi.json", include_in_schema=False)
    def openapi() -> dict[str, Any]:
        return app.openapi()

    @lru_cache(maxsize=4)
    def ledger_for(url: str) -> Ledger:
        from kafka_migration.ledger import Ledger

        return Ledger.open(url)

    def ledger() -> Ledger:
        return ledger_for(get_url())

    app.include_router(
        create_router(ledger, get_state, clusters or Clusters(), get_reports),
        prefix="/api",
        tags=["console"],
    )

    def run_or_404(run_id: str) -> RecordedRun:
        run = ledger().run(run_id)
        if run is None:
            raise HTTPException(status_code=404, detail=f"No run {run_id!r} in the ledger")
        return run

    @app.get("/", include_in_schema=False)
    def index() -> RedirectResponse:
        """The old page's address leads to the console inside the Airflow UI."""
        return RedirectResponse(f"../plugin/{CONSOLE_ROUTE}", status_code=307)

    @app.get("/static/{name}", include_in_schema=False)
    def bundle(name: str) -> FileResponse:
        path = bundle_dir / name
        if name != path.name or not path.is_file():
            missing = "" if (bundle_dir / BUNDLE).is_file() else " The console is not built: run `make console`."
            raise HTTPException(status_code=404, detail=f"No file {name!r} in the console's bundle.{missing}")
        return FileResponse(path, media_type="text/javascript" if name.endswith(("js", "cjs")) else None)

    @app.get("/runs/{run_id}", include_in_schema=False)
    def run_page(run_id: str, request: Request) -> RedirectResponse:
        run_or_404(run_id)
        return RedirectResponse(str(request.url_for("report_file", run_id=run_id, fmt="html")), status_code=307)

    @app.get("/runs/{run_id}/report.{fmt}", name="report_file", tags=["reports"], summary="A run's sign-off report")
    def report_file(run_id: str, fmt: str) -> FileResponse:
        from kafka_migration.reports.signoff import generate_report

        if fmt not in MEDIA_TYPES:
            raise HTTPException(status_code=404, detail="report formats: html, json, md")
        run = run_or_404(run_id)
        path = Path(get_reports()) / run_id / f"report.{fmt}"
        if not path.exists():
            if run.status == "running":
                raise HTTPException(
                    status_code=404, detail=f"Run {run_id} is still running; its report comes at the end"
                )
            generate_report(ledger(), run_id, Path(get_reports()))
        return FileResponse(path, media_type=MEDIA_TYPES[fmt])

    @app.get(
        "/cutovers/{cutover_id}/report.{fmt}",
        name="cutover_report_file",
        tags=["reports"],
        summary="A cutover's report (checklist, group start offsets)",
    )
    def cutover_report_file(cutover_id: str, fmt: str) -> FileResponse:
        return FileResponse(
            _cutover_report(ledger(), Path(get_reports()), cutover_id, fmt), media_type=MEDIA_TYPES[fmt]
        )

    return app


def _cutover_report(ledger: Ledger, reports: Path, cutover_id: str, fmt: str) -> Path:
    """A cutover's report file, written from the ledger when missing."""
    from kafka_migration.cutover.report import generate_cutover_report

    if fmt not in MEDIA_TYPES:
        raise HTTPException(status_code=404, detail="report formats: html, json, md")
    if ledger.cutover(cutover_id) is None:
        raise HTTPException(status_code=404, detail=f"No cutover {cutover_id!r} in the ledger")
    path = reports / cutover_id / f"report.{fmt}"
    if not path.exists():
        generate_cutover_report(ledger, cutover_id, reports)
    return path
