"""Fresh databases on the local PostgreSQL server, for tests and the benchmark.

The server is the machine's (127.0.0.1:5432, user postgres, trust auth) unless
$KAFKA_MIGRATION_TEST_POSTGRES names another admin URL. Each caller gets databases of its own,
dropped (even with open connections) when its block ends.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy.engine import make_url

ADMIN_URL_VARIABLE = "KAFKA_MIGRATION_TEST_POSTGRES"
DEFAULT_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def admin_url() -> str:
    return os.environ.get(ADMIN_URL_VARIABLE, DEFAULT_ADMIN_URL)


def admin_connect(database: str | None = None, timeout: int = 5) -> Any:
    """An autocommit psycopg connection to the admin URL's server (its database, or ``database``)."""
    import psycopg

    admin = make_url(admin_url())
    return psycopg.connect(
        host=admin.host,
        port=admin.port or 5432,
        user=admin.username,
        dbname=database or admin.database,
        autocommit=True,
        connect_timeout=timeout,
    )


def database_url(database: str, like: str | None = None) -> str:
    """The URL of ``database`` on the admin URL's server, with the driver and options of ``like`` (else
    of the admin URL) and no password (trust auth)."""
    admin = make_url(admin_url())
    url = make_url(like or admin_url()).set(host=admin.host, port=admin.port or 5432, username=admin.username)
    # URL.set takes None for "unchanged": the NamedTuple's _replace clears the password
    return url._replace(password=None, database=database).render_as_string(hide_password=False)


@contextlib.contextmanager
def temporary_databases(*prefixes: str) -> Iterator[list[str]]:
    """One new, empty database per prefix (``<prefix>_<random>``), dropped when the block ends.

    Raises psycopg.OperationalError before the block when the server cannot be reached.
    """
    names = [f"{prefix}_{uuid.uuid4().hex[:10]}" for prefix in prefixes]
    created: list[str] = []
    with admin_connect() as conn:
        try:
            for name in names:
                conn.execute(f'CREATE DATABASE "{name}"')
                created.append(name)
        except BaseException:
            _drop(conn, created)
            raise
    try:
        yield names
    finally:
        with admin_connect() as conn:
            _drop(conn, created)


@contextlib.contextmanager
def optional_databases(*prefixes: str, required: bool = False) -> Iterator[list[str] | None]:
    """``temporary_databases``, or None when the server cannot be reached and ``required`` is false."""
    import psycopg

    with contextlib.ExitStack() as stack:
        try:
            names = stack.enter_context(temporary_databases(*prefixes))
        except psycopg.OperationalError:
            if required:
                raise
            names = None
        yield names


def _drop(conn: Any, names: list[str]) -> None:
    for name in names:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
