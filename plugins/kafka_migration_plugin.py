"""Airflow plugin: the operator's console inside the Airflow UI, its JSON API, the reports, a report link on tasks.

- ``react_apps``: the console in the navigation (Browse > Kafka migrations) and as a tab on every DAG run
  page (it shows the migration run of our DAGs' runs); a React bundle built from
  kafka_migration/airflow/console/www (``make console``), loaded by the Airflow UI.
- ``fastapi_apps``: under ``/kafka-migrations``, the console's JSON API, its bundle and the sign-off reports.
  Airflow mounts plugin apps without authentication: every route requires the same read access as the
  ``kafka_migration`` DAG (Bearer token or the UI's session cookie), checked by Airflow's own dependency.
"""

from airflow.api_fastapi.core_api.security import requires_access_dag
from airflow.configuration import conf
from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends

from kafka_migration.airflow.links import URL_PREFIX, MigrationReportLink
from kafka_migration.airflow.webapp import BUNDLE, CONSOLE_ROUTE, RUN_TAB_ROUTE, create_app

_app = create_app(dependencies=[Depends(requires_access_dag("GET", param_dag_id="kafka_migration"))])


def _path(path: str) -> str:
    """``path`` under the path of ``[api] base_url`` (Airflow may be served below a prefix)."""
    from urllib.parse import urlparse

    base = conf.get("api", "base_url", fallback="/") or "/"
    return (urlparse(base).path if "://" in base else base).rstrip("/") + path


class KafkaMigrationPlugin(AirflowPlugin):
    name = "kafka_migration"
    fastapi_apps = [{"app": _app, "url_prefix": URL_PREFIX, "name": "Kafka migrations"}]
    react_apps = [
        {
            "name": "Kafka migrations",
            "bundle_url": _path(f"{URL_PREFIX}/static/{BUNDLE}"),
            "destination": "nav",
            "category": "browse",
            "url_route": CONSOLE_ROUTE,
        },
        {
            "name": "Migration",
            # Its own address: the UI imports each bundle URL as a module, once; a second import of the same URL
            # would not run the bundle again, and the tab would find no component (Airflow's 404 page).
            "bundle_url": _path(f"{URL_PREFIX}/static/{BUNDLE}?app=dag-run"),
            "destination": "dag_run",
            "url_route": RUN_TAB_ROUTE,
        },
    ]
    global_operator_extra_links = [MigrationReportLink()]
