"""One writer per target topic: leases in the ledger, taken before planning reads checkpoints.

A run takes the lease of every target topic it will write, all or none, in one transaction:
``INSERT ... ON CONFLICT DO NOTHING`` for the free topics (many rows per statement), else a
compare-and-set ``UPDATE`` that only succeeds on the row as it was read (held by this run, or expired).
Both statements are atomic on SQLite and PostgreSQL alike, so two runs starting at the same moment cannot both win.
A holder renews its leases while it runs (``LeaseHeartbeat``) and releases them at the end;
one that stops renewing (killed process, lost worker) loses them after the time to live, and
the next run takes them over and says so.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, delete, select, tuple_, update
from sqlalchemy.exc import SQLAlchemyError

from kafka_migration.exceptions import ConfigurationError, LeaseHeldError, LeaseLostError
from kafka_migration.ledger.schema import leases
from kafka_migration.model.text import plural

log = logging.getLogger(__name__)

LEASE_TTL_ENV = "KAFKA_MIGRATION_LEASE_TTL"
DEFAULT_LEASE_TTL = 600.0  # seconds; must outlast the gap between two tasks of a DAG run
MIN_LEASE_TTL = 1.0


def parse_lease_ttl(value: str | float | None, where: str = LEASE_TTL_ENV) -> float:
    """Seconds a lease lives without renewal; ``None`` or empty: the default."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_LEASE_TTL
    try:
        ttl = float(value)
    except ValueError:
        raise ConfigurationError(f"{where}={value!r} is not a number of seconds; use e.g. 600.") from None
    if not ttl >= MIN_LEASE_TTL or ttl == float("inf"):
        raise ConfigurationError(f"{where}={value!r} must be at least {MIN_LEASE_TTL:g} seconds; use e.g. 600.")
    return ttl


def lease_ttl_from_env() -> float:
    return parse_lease_ttl(os.environ.get(LEASE_TTL_ENV))


@dataclass(frozen=True)
class LeaseKey:
    source_cluster_id: str
    source_topic: str
    target_cluster_id: str
    target_topic: str


@dataclass(frozen=True)
class Holder:
    """Who takes a lease: the run, how it was started, and where it runs (for the refusal message)."""

    run_id: str
    trigger: str  # "cli" or "airflow"
    description: str

    @classmethod
    def this_process(cls, run_id: str, trigger: str = "cli") -> Holder:
        return cls(run_id, trigger, f"{trigger} process {os.getpid()} on {socket.gethostname()}")


@dataclass(frozen=True)
class Lease:
    key: LeaseKey
    run_id: str
    trigger: str
    holder: str
    acquired_at: datetime
    renewed_at: datetime
    expires_at: datetime
    taken_over_from: str | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at <= now

    def describe(self) -> str:
        return (
            f"run {self.run_id} ({self.holder}) since {_iso(self.acquired_at)}, last renewed {_iso(self.renewed_at)}, "
            f"expires {_iso(self.expires_at)} unless renewed"
        )


@dataclass(frozen=True)
class Takeover:
    """An expired lease this run took over: recorded in the lease row and in the run's warnings."""

    previous: Lease
    at: datetime

    def message(self) -> str:
        p = self.previous
        return (
            f"took over the lease on target topic {p.key.target_topic} (cluster {p.key.target_cluster_id}) from run "
            f"{p.run_id} ({p.holder}), which held it since {_iso(p.acquired_at)} and stopped renewing it at "
            f"{_iso(p.renewed_at)} (expired {_iso(p.expires_at)}); its copy may have stopped half-way, and this "
            "run resumes it from the target's contents"
        )


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _now() -> datetime:
    return datetime.now(UTC)


def _row_lease(row: Any) -> Lease:
    return Lease(
        key=LeaseKey(row.source_cluster_id, row.source_topic, row.target_cluster_id, row.target_topic),
        run_id=row.run_id,
        trigger=row.trigger,
        holder=row.holder,
        acquired_at=row.acquired_at,
        renewed_at=row.renewed_at,
        expires_at=row.expires_at,
        taken_over_from=row.taken_over_from,
    )


def _key_where(key: LeaseKey) -> Any:
    return and_(leases.c.target_cluster_id == key.target_cluster_id, leases.c.target_topic == key.target_topic)


def _insert_absent(connection: Any, rows: Sequence[dict[str, Any]]) -> set[tuple[str, str]]:
    """INSERT ... ON CONFLICT DO NOTHING (the same statement on SQLite and PostgreSQL) for many rows, which
    SQLAlchemy sends as a few multi-row statements ("insertmanyvalues"); returns the (target cluster, target
    topic) of the rows inserted: the leases that were free."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif connection.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:  # pragma: no cover - the ledger supports SQLite and PostgreSQL
        raise ConfigurationError(f"Leases need SQLite or PostgreSQL, not {connection.dialect.name}.")
    result = connection.execute(
        insert(leases).on_conflict_do_nothing().returning(leases.c.target_cluster_id, leases.c.target_topic),
        list(rows),
    )
    inserted = {(r.target_cluster_id, r.target_topic) for r in result}
    return inserted


class Leases:
    """The lease table of one ledger."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def acquire(self, holder: Holder, keys: Iterable[LeaseKey], ttl: float) -> list[Takeover]:
        """Take every lease or none; raise ``LeaseHeldError`` naming each live holder.

        Re-entrant: a run that already holds a lease (a retried Airflow task) renews it.
        Keys are taken in one order, so two runs never wait on each other in a cycle.
        """
        wanted = sorted(set(keys), key=lambda k: (k.target_cluster_id, k.target_topic))
        if not wanted:
            return []
        for attempt in range(5):
            now = _now()
            expires = now + timedelta(seconds=ttl)
            takeovers: list[Takeover] = []
            held: list[Lease] = []
            rows = [
                {
                    "target_cluster_id": key.target_cluster_id,
                    "target_topic": key.target_topic,
                    "source_cluster_id": key.source_cluster_id,
                    "source_topic": key.source_topic,
                    "run_id": holder.run_id,
                    "trigger": holder.trigger,
                    "holder": holder.description,
                    "acquired_at": now,
                    "renewed_at": now,
                    "expires_at": expires,
                    "taken_over_from": None,
                }
                for key in wanted
            ]
            with self.engine.connect() as c, c.begin() as transaction:
                # Free topics in a few multi-row statements; only those already leased are looked at one by one.
                inserted = _insert_absent(c, rows)
                for key, values in zip(wanted, rows, strict=True):
                    if (key.target_cluster_id, key.target_topic) in inserted:
                        continue
                    row = c.execute(select(leases).where(_key_where(key))).first()
                    if row is None:  # released between the two statements: try again from the start
                        break
                    current = _row_lease(row)
                    if current.run_id != holder.run_id and not current.expired(now):
                        held.append(current)
                        continue
                    if current.run_id == holder.run_id:
                        values.update(acquired_at=current.acquired_at, taken_over_from=current.taken_over_from)
                    else:
                        values["taken_over_from"] = current.run_id
                    swapped = c.execute(
                        update(leases)
                        .where(
                            _key_where(key),
                            leases.c.run_id == row.run_id,
                            leases.c.expires_at == row.expires_at,
                        )
                        .values(**values)
                    ).rowcount
                    if not swapped:  # renewed or taken by someone else meanwhile: try again from the start
                        break
                    if current.run_id != holder.run_id:
                        takeovers.append(Takeover(current, now))
                else:
                    if held:
                        transaction.rollback()
                        raise LeaseHeldError(_held_message(holder, held, ttl))
                    transaction.commit()
                    for takeover in takeovers:
                        log.warning("Run %s %s", holder.run_id, takeover.message())
                    return takeovers
                transaction.rollback()
            time.sleep(0.05 * (attempt + 1))
        raise LeaseHeldError(
            f"Run {holder.run_id} could not take the leases of its target topics: other runs kept changing them. "
            "Nothing was written; try again in a moment."
        )

    def renew(self, run_id: str, keys: Iterable[LeaseKey], ttl: float) -> None:
        """Extend this run's leases; raise ``LeaseLostError`` when any of them is no longer this run's."""
        wanted = set(keys)
        if not wanted:
            return
        now = _now()
        pairs = [(k.target_cluster_id, k.target_topic) for k in wanted]
        in_keys = tuple_(leases.c.target_cluster_id, leases.c.target_topic).in_(pairs)
        with self.engine.begin() as c:
            renewed = c.execute(
                update(leases)
                .where(leases.c.run_id == run_id, in_keys)
                .values(renewed_at=now, expires_at=now + timedelta(seconds=ttl))
            ).rowcount
            if renewed == len(wanted):
                return
            rows = {(r.target_cluster_id, r.target_topic): r for r in c.execute(select(leases).where(in_keys))}
        lost = []
        for key in sorted(wanted, key=lambda k: k.target_topic):
            row = rows.get((key.target_cluster_id, key.target_topic))
            if row is None:
                lost.append(f"{key.target_topic}: released by a run that took it over")
            elif row.run_id != run_id:
                lost.append(f"{key.target_topic}: now held by {_row_lease(row).describe()}")
        raise LeaseLostError(
            f"Run {run_id} lost the lease on {plural(len(lost), 'target topic')} ({'; '.join(lost)}): it stopped "
            "renewing them for longer than their time to live, so another run may be writing there. This run stops "
            "writing; start a new run once the other has finished (it resumes from the checkpoints)."
        )

    def release(self, run_id: str) -> int:
        with self.engine.begin() as c:
            return int(c.execute(delete(leases).where(leases.c.run_id == run_id)).rowcount)

    def held_by(self, run_id: str) -> list[Lease]:
        with self.engine.connect() as c:
            rows = c.execute(select(leases).where(leases.c.run_id == run_id).order_by(leases.c.target_topic))
            return [_row_lease(r) for r in rows]

    def active(self, keys: Iterable[LeaseKey] | None = None) -> list[Lease]:
        """Leases not yet expired (of the given target topics, or all)."""
        query = select(leases).where(leases.c.expires_at > _now())
        wanted = [(k.target_cluster_id, k.target_topic) for k in keys or []]
        if wanted:
            query = query.where(tuple_(leases.c.target_cluster_id, leases.c.target_topic).in_(wanted))
        with self.engine.connect() as c:
            return [_row_lease(r) for r in c.execute(query.order_by(leases.c.target_topic))]


def _held_message(holder: Holder, held: Sequence[Lease], ttl: float) -> str:
    lines = "; ".join(f"target topic {lease.key.target_topic} is held by {lease.describe()}" for lease in held)
    return (
        f"Another run is writing to {len(held)} of the target topics this run needs, so run {holder.run_id} "
        f"stops before writing anything: {lines}. Wait for that run to finish (kafka-migrate history shows it), "
        f"or, if it died, for its lease to expire (a holder that stops renewing loses its lease after its time "
        f"to live, {LEASE_TTL_ENV}; this run's is {ttl:g} s) and run again: the next run takes the lease over."
    )


class LeaseHeartbeat:
    """Renews a run's leases in a daemon thread every ``ttl / 3`` while a step runs.

    ``lost`` tells the run it lost them: another run took them over, or the ledger could not
    be reached for a whole time to live (then another run may have taken them). ``on_lost``
    is called once, from the thread, e.g. to stop a Spark application that is still writing.
    """

    def __init__(
        self,
        leases: Leases,
        run_id: str,
        keys: Iterable[LeaseKey],
        ttl: float,
        on_lost: Callable[[str], None] | None = None,
    ) -> None:
        self.leases = leases
        self.run_id = run_id
        self.keys = list(keys)
        self.ttl = ttl
        self.on_lost = on_lost
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._renewed = time.monotonic()

    def renew_now(self) -> None:
        """Renew at once; raise ``LeaseLostError`` (before anything is written) if the leases are gone."""
        self.leases.renew(self.run_id, self.keys, self.ttl)
        self._renewed = time.monotonic()

    def check(self) -> None:
        if self.lost is not None:
            raise LeaseLostError(self.lost)

    def __enter__(self) -> LeaseHeartbeat:
        if self.keys:
            self._thread = threading.Thread(target=self._run, name=f"lease-{self.run_id}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        interval = max(self.ttl / 3, 0.2)
        while not self._stop.wait(interval):
            try:
                self.renew_now()
            except LeaseLostError as exc:
                self._lose(str(exc))
                return
            except SQLAlchemyError as exc:
                silent = time.monotonic() - self._renewed
                log.warning(
                    "Could not renew the leases of run %s (%.0f s since the last renewal): %s", self.run_id, silent, exc
                )
                if silent > self.ttl:
                    self._lose(
                        f"Run {self.run_id} could not renew its leases for {silent:.0f} s, longer than their time to "
                        f"live ({self.ttl:g} s): the ledger is unreachable ({type(exc).__name__}), and another run may "
                        "have taken them over. This run stops writing; run again when the ledger is back."
                    )
                    return

    def _lose(self, message: str) -> None:
        self.lost = message
        log.error("%s", message)
        if self.on_lost is not None:
            try:
                self.on_lost(message)
            except Exception:  # the run still sees .lost
                log.exception("Stopping the run after losing its leases failed")
