"""Ledger URLs: the default SQLite file, the check that refuses a URL that cannot work, and the redacted form."""

from __future__ import annotations

from pathlib import Path

from kafka_migration.exceptions import ConfigurationError


def default_ledger_url(state_dir: Path) -> str:
    return f"sqlite:///{Path(state_dir).expanduser().resolve() / 'ledger.db'}"


def postgres_url(
    login: str | None, password: str | None, host: str | None, port: int | None, database: str | None
) -> str:
    """The URL of a PostgreSQL ledger (psycopg 3) from its parts, each quoted as a URL needs, password included: for
    ``Ledger.open``, never for a log."""
    from sqlalchemy.engine import URL

    return URL.create(
        "postgresql+psycopg", username=login, password=password, host=host, port=port, database=database
    ).render_as_string(hide_password=False)


def redact_url(url: str) -> str:
    """The URL without its password, for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable ledger URL>"


# Backends the schema migrations are written and tested for (drivers installed with the project).
SUPPORTED_LEDGER_SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg")
_LEDGER_EXAMPLES = "sqlite:////PATH/ledger.db or postgresql://USER:PASSWORD@HOST:5432/DB"
# Spellings other tools accept for a supported scheme (libpq and Heroku write postgres://).
_MEANT = {"postgres": "postgresql", "pgsql": "postgresql", "psql": "postgresql", "sqlite3": "sqlite"}


def check_ledger_url(url: str) -> str:
    """Refuse a ledger URL that cannot work before anything is written; return it ready for SQLAlchemy."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError(f"The ledger URL is empty; give one such as {_LEDGER_EXAMPLES}.")
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        # Not echoed: an unparseable URL may still hold a password.
        raise ConfigurationError(
            f"The ledger URL is not a database URL (SCHEME://...); give one such as {_LEDGER_EXAMPLES}."
        ) from None
    if parsed.drivername in _MEANT:
        meant = _MEANT[parsed.drivername]
        raise ConfigurationError(
            f"The ledger URL {redact_url(url)} has the scheme {parsed.drivername!r}; did you mean {meant}://? "
            f"(SQLAlchemy, which opens the ledger, knows only {meant}://), e.g. {_LEDGER_EXAMPLES}."
        )
    if parsed.drivername not in SUPPORTED_LEDGER_SCHEMES:
        raise ConfigurationError(
            f"The ledger URL {redact_url(url)} has the scheme {parsed.drivername!r}, which the ledger does not "
            f"support; use SQLite or PostgreSQL, e.g. {_LEDGER_EXAMPLES}."
        )
    if parsed.drivername == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise ConfigurationError(
            f"The ledger URL {url} names no database file (an in-memory ledger forgets every run); "
            "give a file, e.g. sqlite:////var/lib/kafka-migration/ledger.db."
        )
    if parsed.drivername == "postgresql":
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def check_named_sqlite_folder(url: str, named_by: str) -> None:
    """A SQLite ledger someone named (``named_by``: --ledger, an environment variable, a setting) must be in a folder
    that exists: created there, a new empty ledger would know none of the runs, and a run would then take the
    target's records for someone else's. The default ledger in the state directory is created with its folder."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return
    folder = Path(parsed.database).expanduser().parent
    if not folder.exists():
        raise ConfigurationError(
            f"The ledger {parsed.database} given by {named_by} is in a folder that does not exist ({folder}); "
            "a new, empty ledger there would know none of your runs. Check the path in the URL (sqlite:////ABSOLUTE/"
            "PATH has four slashes); to start a new ledger there, create the folder first."
        )
