"""The ledger: one ``Ledger`` over SQLAlchemy (SQLite by default, PostgreSQL in production).

``Ledger`` opens the database and brings its schema up to date; what it reads and writes lives in one
module per concern, each a part of the class, so call sites keep one object:

  runs.py         runs and their evidence (segments, copy and verification results)
  checkpoints.py  checkpoints, topic ids, pending segments, the offset map and translation
  group_syncs.py  consumer group syncs
  cutovers.py     cutovers and failbacks
  leases.py       one writer per target topic (``Ledger.leases``)
  losses.py       verified records a target lost, found by later runs
  schema_ids.py   the schema ids a run moved: subject versions, source and target ids, fingerprints

It takes and gives plain rows and the value types of ``kafka_migration.model``; it imports no capability.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger.access_syncs import AccessSyncRecords
from kafka_migration.ledger.checkpoints import CheckpointRecords
from kafka_migration.ledger.cutovers import CutoverRecords
from kafka_migration.ledger.group_syncs import GroupSyncRecords
from kafka_migration.ledger.leases import Leases
from kafka_migration.ledger.losses import LossRecords
from kafka_migration.ledger.runs import RunRecords
from kafka_migration.ledger.schema_ids import SchemaIdRecords, SchemaModeRecords
from kafka_migration.ledger.urls import check_ledger_url, redact_url
from kafka_migration.ledger.views import LedgerViews

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"

_MIGRATION_LOCK_KEY = 0x6B6D6C6564676572  # PostgreSQL advisory lock of schema migrations ("kmledger")


# What a ledger call raises when the database fails (SQLAlchemy's base error). Code that keeps going without the
# ledger catches it by this name: only ledger/ imports SQLAlchemy.
LedgerError = SQLAlchemyError


class Ledger(
    RunRecords,
    CheckpointRecords,
    GroupSyncRecords,
    CutoverRecords,
    LossRecords,
    AccessSyncRecords,
    SchemaIdRecords,
    SchemaModeRecords,
    LedgerViews,
):
    """The ledger's one entry point: ``Ledger.open(url)``, then the methods of its parts."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.leases = Leases(engine)

    @property
    def label(self) -> str:
        """Where this ledger is, for messages: a SQLite file's path, else the URL without its password."""
        url = self.engine.url
        return str(url.database) if url.get_backend_name() == "sqlite" else redact_url(str(url))

    @classmethod
    def open(cls, url: str, create: bool = True) -> Ledger:
        """Connect and bring the schema up to date (Alembic).

        ``create=False`` (commands that only read): a SQLite ledger that does not exist is refused,
        not created empty, so a mistyped path is not answered with "no runs".
        """
        url = check_ledger_url(url)
        if url.startswith("sqlite:///") and not create and not Path(url.removeprefix("sqlite:///")).is_file():
            raise ConfigurationError(
                f"There is no ledger at {url.removeprefix('sqlite:///')}; give the --ledger URL or the "
                "--state-dir that your runs used (a run creates the ledger)."
            )
        if url.startswith("sqlite:///"):
            folder = Path(url.removeprefix("sqlite:///")).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigurationError(
                    f"Cannot create the ledger's directory {folder} ({exc.strerror}); give a writable path in "
                    "the ledger URL or the state directory."
                ) from None
        try:
            engine = create_engine(
                url,
                pool_pre_ping=True,
                connect_args={"timeout": 30} if url.startswith("sqlite") else {"connect_timeout": 15},
            )
        except Exception as exc:
            raise ConfigurationError(f"Ledger URL {redact_url(url)} is not usable: {exc}") from None
        if url.startswith("sqlite"):
            event.listen(engine, "connect", _sqlite_pragmas)
        ledger = cls(engine)
        ledger.upgrade()
        return ledger

    def upgrade(self) -> None:
        try:
            with self._migration_lock(), self.engine.begin() as connection:
                if connection.dialect.name == "postgresql":  # runs starting at once on a new ledger: one migrates
                    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
                if _schema_at_head(connection):
                    return  # the usual case: no need to load Alembic and its scripts (~1 s of every command)
                from alembic import command
                from alembic.config import Config

                config = Config()
                config.set_main_option("script_location", str(MIGRATIONS))
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
        except OperationalError as exc:
            raise ConfigurationError(
                f"Cannot open the ledger at {redact_url(str(self.engine.url))}: {' '.join(str(exc.orig).split())}. "
                "Check the URL, that the "
                "database server is up and that the user may create tables."
            ) from None

    @contextlib.contextmanager
    def _migration_lock(self) -> Iterator[None]:
        """SQLite creates tables outside transactions: processes sharing the file take turns through a lock file."""
        database = self.engine.url.database if self.engine.dialect.name == "sqlite" else None
        if not database or database == ":memory:":
            yield
            return
        import fcntl

        with open(f"{database}.migrate.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


_VERSION_TABLE = "km_alembic_version"  # as migrations/env.py configures it
_REVISION = re.compile(r"^(down_revision|revision)\s*(?::[^=\n]*)?=\s*(?:['\"]([^'\"]+)['\"]|None)", re.MULTILINE)


def _head_revisions() -> set[str]:
    """The newest migration(s): revisions no other migration names as its down_revision (read, not imported).

    Empty (so Alembic decides) when a script does not read as one revision and one down_revision.
    """
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS / "versions").glob("[0-9]*.py"):
        found = _REVISION.findall(script.read_text())
        kinds = sorted(kind for kind, _ in found)
        if kinds != ["down_revision", "revision"]:
            return set()
        for kind, value in found:
            if value:
                (revisions if kind == "revision" else parents).add(value)
    return revisions - parents


def _schema_at_head(connection: Any) -> bool:
    """True when the ledger's recorded Alembic revision is the newest this code knows."""
    from sqlalchemy import inspect

    if not inspect(connection).has_table(_VERSION_TABLE):
        return False
    current = {row[0] for row in connection.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}"))}
    heads = _head_revisions()
    return bool(heads) and current == heads


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
