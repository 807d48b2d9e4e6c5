"""Airflow plugin: the "Kafka migrations" page (runs and reports) and a report link on migration tasks.

Airflow mounts plugin FastAPI apps without authentication; the page and reports
require the same read access as the ``kafka_migration`` DAG (Bearer token or the
UI's session cookie), checked by Airflow's own security dependency.
"""

from airflow.api_fastapi.core_api.security import requires_access_dag
from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends

from kafka_migration.airflow.links import URL_PREFIX, MigrationReportLink
from kafka_migration.airflow.webapp import create_app

_app = create_app(dependencies=[Depends(requires_access_dag("GET", param_dag_id="kafka_migration"))])


class KafkaMigrationPlugin(AirflowPlugin):
    name = "kafka_migration"
    fastapi_apps = [{"app": _app, "url_prefix": URL_PREFIX, "name": "Kafka migrations"}]
    external_views = [
        {
            "name": "Kafka migrations",
            "href": f"{URL_PREFIX}/",
            "destination": "nav",
            "category": "browse",
            "url_route": "kafka-migrations",
        }
    ]
    global_operator_extra_links = [MigrationReportLink()]
