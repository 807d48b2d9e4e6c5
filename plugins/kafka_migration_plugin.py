"""Airflow plugin: the "Kafka migrations" page (runs and reports) and a report link on migration tasks."""

from airflow.plugins_manager import AirflowPlugin

from kafka_migration.airflow.links import URL_PREFIX, MigrationReportLink
from kafka_migration.airflow.webapp import create_app


class KafkaMigrationPlugin(AirflowPlugin):
    name = "kafka_migration"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Kafka migrations"}]
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
