"""ledger/urls.py: a PostgreSQL ledger's URL from an Airflow connection's parts (airflow/hooks.LedgerHook)."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from kafka_migration.ledger.urls import postgres_url, redact_url


def test_a_postgres_url_keeps_every_part_however_it_is_spelled() -> None:
    url = postgres_url("km user", "p@ss/w:rd%", "db.example", 5433, "ledger")
    parsed = make_url(url)
    assert parsed.drivername == "postgresql+psycopg"
    assert (parsed.username, parsed.password, parsed.host, parsed.port, parsed.database) == (
        "km user",
        "p@ss/w:rd%",
        "db.example",
        5433,
        "ledger",
    )
    assert "p@ss" not in redact_url(url)


def test_a_postgres_url_leaves_out_the_parts_a_connection_does_not_set() -> None:
    assert postgres_url(None, None, "db", None, None) == "postgresql+psycopg://db"
