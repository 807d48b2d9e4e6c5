"""Fresh PostgreSQL databases for tests and the benchmark, on a throwaway server started when none is named.

$KAFKA_MIGRATION_TEST_POSTGRES names a server's admin URL (user with CREATEDB, trust or a
password in the URL). Without it, the first caller starts a private server from Debian's
``postgresql`` binaries (initdb and pg_ctl in a temporary folder, a free loopback port, trust
auth, fsync off), sets the variable so that child processes (Airflow servers, CLIs) use the
same one, and stops and removes it when the process ends. Nothing needs to run beforehand: a
fresh machine and a laptop with its own server on 5432 behave the same. Each caller gets
databases of its own, dropped (even with open connections) when its block ends.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from harness.servers.ports import free_port

ADMIN_URL_VARIABLE = "KAFKA_MIGRATION_TEST_POSTGRES"
BINDIR_VARIABLE = "KAFKA_MIGRATION_POSTGRES_BINDIR"


class PostgresMissing(RuntimeError):
    """No server is named and none can be started here (no binaries, or they failed)."""


def postgres_bindir() -> Path:
    """Where initdb and pg_ctl are: $KAFKA_MIGRATION_POSTGRES_BINDIR, the PATH, or Debian's newest version."""
    configured = os.environ.get(BINDIR_VARIABLE)
    candidates = [Path(configured)] if configured else []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    debian = Path("/usr/lib/postgresql")
    if debian.is_dir():
        versions = sorted(debian.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1, reverse=True)
        candidates += [version / "bin" for version in versions]
    for candidate in candidates:
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            return candidate
    raise PostgresMissing("PostgreSQL's initdb/pg_ctl not found: run `make system-deps` (Debian package postgresql)")


@dataclass
class LocalServer:
    """A private PostgreSQL server: its folder (data, socket, log), port and admin URL."""

    directory: Path
    port: int
    bindir: Path

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_path(self) -> Path:
        return self.directory / "server.log"

    @property
    def admin_url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        """Stop at once (nothing to keep) and remove the folder."""
        if (self.data_dir / "postmaster.pid").exists():
            _run_as_owner(
                [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "immediate", "-w"], check=False
            )
        shutil.rmtree(self.directory, ignore_errors=True)


def _as_owner(command: list[str]) -> list[str]:
    """initdb refuses to run as root: as root, run the server's commands as the ``postgres`` user."""
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresMissing("running as root without runuser: cannot start PostgreSQL as another user")
    return [runuser, "-u", "postgres", "--", *command]


def _run_as_owner(command: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(_as_owner(command), capture_output=True, text=True, check=False, timeout=120)
    if check and done.returncode != 0:
        raise PostgresMissing(f"{Path(command[0]).name} failed ({done.returncode}): {done.stdout}{done.stderr}".strip())
    return done


def start_server(directory: Path | None = None) -> LocalServer:
    """initdb (trust auth, no fsync) and pg_ctl start on a free loopback port; the socket stays in the folder.

    As root the server runs as ``postgres``, which must be able to reach ``directory`` (the default,
    a new folder in the system's temporary directory, is).
    """
    bindir = postgres_bindir()
    directory = directory or Path(tempfile.mkdtemp(prefix="kafka-migration-postgres-"))
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    server = LocalServer(directory=directory, port=free_port(), bindir=bindir)
    _run_as_owner(
        [
            str(bindir / "initdb"),
            "--pgdata",
            str(server.data_dir),
            "--username",
            "postgres",
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync",
        ]
    )
    options = (
        f"-p {server.port} -h 127.0.0.1 -k {directory} -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c max_connections=200"
    )
    try:
        _run_as_owner(
            [
                str(bindir / "pg_ctl"),
                "start",
                "-D",
                str(server.data_dir),
                "-l",
                str(server.log_path),
                "-w",
                "-t",
                "60",
                "-o",
                options,
            ]
        )
    except PostgresMissing as error:
        log = server.log_path.read_text(errors="replace")[-2000:] if server.log_path.exists() else ""
        server.stop()
        raise PostgresMissing(f"{error}\n{log}") from None
    return server


_started: LocalServer | None = None
_starting = threading.Lock()


def ensure_server() -> str:
    """The admin URL: $KAFKA_MIGRATION_TEST_POSTGRES, else a server this process starts (once) and stops at exit."""
    global _started  # noqa: PLW0603 - one server per process
    configured = os.environ.get(ADMIN_URL_VARIABLE)
    if configured:
        return configured
    with _starting:
        if _started is None:
            _started = start_server()
            atexit.register(_started.stop)
        os.environ[ADMIN_URL_VARIABLE] = _started.admin_url
        return _started.admin_url


def admin_url() -> str:
    """The admin URL of the server in use, without starting one (for messages)."""
    return os.environ.get(ADMIN_URL_VARIABLE) or "(a throwaway server, not started)"


def admin_connect(database: str | None = None, timeout: int = 5) -> Any:
    """An autocommit psycopg connection to the admin URL's server (its database, or ``database``)."""
    import psycopg

    admin = make_url(ensure_server())
    return psycopg.connect(
        host=admin.host,
        port=admin.port or 5432,
        user=admin.username,
        password=admin.password,
        dbname=database or admin.database,
        autocommit=True,
        connect_timeout=timeout,
    )


def database_url(database: str, like: str | None = None) -> str:
    """The URL of ``database`` on the admin URL's server, with the driver and options of ``like`` (else
    of the admin URL) and the admin's login."""
    admin = make_url(ensure_server())
    url = make_url(like or admin).set(host=admin.host, port=admin.port or 5432, username=admin.username)
    # URL.set takes None for "unchanged": the NamedTuple's _replace sets (or clears) the password
    return url._replace(password=admin.password, database=database).render_as_string(hide_password=False)


@contextlib.contextmanager
def temporary_databases(*prefixes: str) -> Iterator[list[str]]:
    """One new, empty database per prefix (``<prefix>_<random>``), dropped when the block ends.

    Raises psycopg.OperationalError (a named server that does not answer) or PostgresMissing (no
    server named and none could be started) before the block.
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
    """``temporary_databases``, or None when no server can be had and ``required`` is false."""
    import psycopg

    with contextlib.ExitStack() as stack:
        try:
            names = stack.enter_context(temporary_databases(*prefixes))
        except (psycopg.OperationalError, PostgresMissing):
            if required:
                raise
            names = None
        yield names


def _drop(conn: Any, names: list[str]) -> None:
    for name in names:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
