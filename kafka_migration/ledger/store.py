"""Read and write the ledger through SQLAlchemy (SQLite by default, PostgreSQL in production)."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, and_, bindparam, case, create_engine, delete, event, func, insert, select, text, update
from sqlalchemy.exc import OperationalError

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger.leases import LeaseKey, Leases
from kafka_migration.ledger.schema import (
    checkpoint_topic_ids,
    checkpoints,
    cutovers,
    group_syncs,
    offset_map,
    runs,
    segments,
)
from kafka_migration.model.checkpoints import Checkpoint, Key, PendingSegment, TopicIds, Translation
from kafka_migration.model.groups import GOOD_OUTCOMES, GroupSyncResult
from kafka_migration.model.offsets import MappedSegment, translate
from kafka_migration.model.plan import MigrationPlan, TopicPlan
from kafka_migration.model.results import TopicOutcome
from kafka_migration.model.timings import RunTimings

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"

_MIGRATION_LOCK_KEY = 0x6B6D6C6564676572  # PostgreSQL advisory lock of schema migrations ("kmledger")


def default_ledger_url(state_dir: Path) -> str:
    return f"sqlite:///{Path(state_dir).expanduser().resolve() / 'ledger.db'}"


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


def _now() -> datetime:
    return datetime.now(UTC)


class Ledger:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.leases = Leases(engine)

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

    # -- runs -----------------------------------------------------------------------------------

    def start_run(
        self, plan: MigrationPlan, trigger: str, dag_id: str | None = None, dag_run_id: str | None = None
    ) -> None:
        """Record the run and its planned segments. Safe to call again for a retried planning task."""
        with self.engine.begin() as c:
            exists = c.execute(select(runs.c.run_id).where(runs.c.run_id == plan.run_id)).first()
            values = {
                "trigger": trigger,
                "dag_id": dag_id,
                "dag_run_id": dag_run_id,
                "params": dict(plan.options),
                "source_cluster_id": plan.source.cluster_id,
                "source_bootstrap": plan.source.bootstrap,
                "target_cluster_id": plan.target.cluster_id,
                "target_bootstrap": plan.target.bootstrap,
                "status": "dry_run" if plan.options.get("dry_run") else "running",
                "topics": len(plan.topics),
                "records": 0,
                "warnings": list(plan.warnings),
                "plan": plan.to_dict(),
            }
            if exists:
                c.execute(update(runs).where(runs.c.run_id == plan.run_id).values(**values))
                c.execute(delete(segments).where(segments.c.run_id == plan.run_id))
            else:
                c.execute(insert(runs).values(run_id=plan.run_id, started_at=_now(), **values))
            if plan.options.get("dry_run"):
                return
            rows = [
                {
                    "run_id": plan.run_id,
                    "source_cluster_id": plan.source.cluster_id,
                    "source_topic": t.source_topic,
                    "partition": p.partition,
                    "target_cluster_id": plan.target.cluster_id,
                    "target_topic": t.target_topic,
                    "source_start": p.start,
                    "source_end": p.end,
                    "target_start": p.target_start,
                    "expired_offsets": p.expired,
                    "status": "planned",
                }
                for t in plan.topics
                for p in t.partitions
            ]
            if rows:
                c.execute(insert(segments), rows)

    def finish_run(
        self,
        run_id: str,
        status: str,
        records: int,
        message: str | None = None,
        timings: RunTimings | None = None,
    ) -> None:
        values: dict[str, Any] = {"status": status, "records": records, "ended_at": _now(), "message": message}
        if timings is not None:
            values["timings"] = timings.to_dict()
        with self.engine.begin() as c:
            c.execute(update(runs).where(runs.c.run_id == run_id).values(**values))

    def set_run_timings(self, run_id: str, timings: RunTimings | None) -> None:
        """Store where the run's wall time went (known only once the run is over), for reports and history."""
        if timings is None:
            return
        with self.engine.begin() as c:
            c.execute(update(runs).where(runs.c.run_id == run_id).values(timings=timings.to_dict()))

    def set_report_digest(self, run_id: str, sha256: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(runs).where(runs.c.run_id == run_id).values(report_sha256=sha256))

    def runs(self, limit: int = 50) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            result = c.execute(select(runs).order_by(runs.c.started_at.desc()).limit(limit))
            return [dict(r._mapping) for r in result]

    def run(self, run_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = c.execute(select(runs).where(runs.c.run_id == run_id)).first()
            return dict(row._mapping) if row else None

    def run_segments(self, run_id: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            result = c.execute(
                select(segments)
                .where(segments.c.run_id == run_id)
                .order_by(segments.c.source_topic, segments.c.partition)
            )
            return [dict(r._mapping) for r in result]

    # -- what earlier runs left ---------------------------------------------------------------------

    def checkpoints(self, source_cluster_id: str, target_cluster_id: str) -> dict[Key, Checkpoint]:
        with self.engine.connect() as c:
            result = c.execute(
                select(checkpoints).where(
                    checkpoints.c.source_cluster_id == source_cluster_id,
                    checkpoints.c.target_cluster_id == target_cluster_id,
                )
            )
            return {
                (r.source_topic, r.partition, r.target_topic): Checkpoint(r.source_offset, r.target_offset, r.run_id)
                for r in result
            }

    def topic_ids(self, source_cluster_id: str, target_cluster_id: str) -> dict[tuple[str, str], TopicIds]:
        """(source topic, target topic) -> the topic ids its last verified run saw."""
        with self.engine.connect() as c:
            result = c.execute(
                select(checkpoint_topic_ids).where(
                    checkpoint_topic_ids.c.source_cluster_id == source_cluster_id,
                    checkpoint_topic_ids.c.target_cluster_id == target_cluster_id,
                )
            )
            return {
                (r.source_topic, r.target_topic): TopicIds(r.source_topic_id, r.target_topic_id, r.run_id)
                for r in result
            }

    def pending_segments(
        self, source_cluster_id: str, target_cluster_id: str, checkpoints: Mapping[Key, Checkpoint] | None = None
    ) -> dict[Key, PendingSegment]:
        """Per partition, the oldest segment not verified since the last checkpoint (where a retry must resume)."""
        out: dict[Key, PendingSegment] = {}
        cps = self.checkpoints(source_cluster_id, target_cluster_id) if checkpoints is None else checkpoints
        with self.engine.connect() as c:
            forgotten = {
                (r.source_topic, r.target_topic): r.forgotten_through_segment
                for r in c.execute(
                    select(checkpoint_topic_ids).where(
                        checkpoint_topic_ids.c.source_cluster_id == source_cluster_id,
                        checkpoint_topic_ids.c.target_cluster_id == target_cluster_id,
                        checkpoint_topic_ids.c.forgotten_through_segment.is_not(None),
                    )
                )
            }
            result = c.execute(
                select(segments)
                .where(
                    segments.c.source_cluster_id == source_cluster_id,
                    segments.c.target_cluster_id == target_cluster_id,
                    segments.c.status.in_(("planned", "copied", "failed", "mismatch", "unverified")),
                )
                .order_by(segments.c.id)
            )
            for r in result:
                key = (r.source_topic, r.partition, r.target_topic)
                if r.id <= forgotten.get((r.source_topic, r.target_topic), -1):
                    continue  # forgotten with `kafka-migrate checkpoints forget`
                cp = cps.get(key)
                if cp is not None and r.source_start < cp.source_offset:
                    continue  # superseded by a later verified segment
                out.setdefault(key, PendingSegment(r.run_id, r.source_start, r.target_start))
        return out

    def forget_checkpoints(
        self,
        source_topic: str,
        target_topic: str | None = None,
        source_cluster_id: str | None = None,
        target_cluster_id: str | None = None,
    ) -> list[tuple[str, str, str, str]]:
        """Forget where a topic's copies stand (checkpoints, interrupted copies), so the next run starts afresh.

        For a source or target topic that was deleted and recreated. The runs and their evidence stay.
        Returns the (source cluster, source topic, target cluster, target topic) forgotten.
        """
        conditions = [segments.c.source_topic == source_topic]
        for column, value in (
            ("target_topic", target_topic),
            ("source_cluster_id", source_cluster_id),
            ("target_cluster_id", target_cluster_id),
        ):
            if value is not None:
                conditions.append(segments.c[column] == value)
        with self.engine.begin() as c:
            found = c.execute(
                select(
                    segments.c.source_cluster_id,
                    segments.c.source_topic,
                    segments.c.target_cluster_id,
                    segments.c.target_topic,
                    func.max(segments.c.id),
                )
                .where(*conditions)
                .group_by(
                    segments.c.source_cluster_id,
                    segments.c.source_topic,
                    segments.c.target_cluster_id,
                    segments.c.target_topic,
                )
            ).all()
            if not found:
                raise ConfigurationError(
                    f"The ledger has no copy of source topic {source_topic}"
                    + (f" to {target_topic}" if target_topic else "")
                    + " for these clusters; nothing to forget (kafka-migrate history lists the runs)."
                )
            held = self.leases.active(LeaseKey(*row[:4]) for row in found)
            if held:
                raise ConfigurationError(
                    "A run is copying this topic now: "
                    + "; ".join(f"target topic {x.key.target_topic} is held by {x.describe()}" for x in held)
                    + ". Nothing was forgotten; wait for it to finish."
                )
            for s_cluster, s_topic, t_cluster, t_topic, last_segment in found:
                key = {
                    "source_cluster_id": s_cluster,
                    "source_topic": s_topic,
                    "target_cluster_id": t_cluster,
                    "target_topic": t_topic,
                }
                c.execute(delete(checkpoints).where(and_(*(checkpoints.c[k] == v for k, v in key.items()))))
                where = and_(*(checkpoint_topic_ids.c[k] == v for k, v in key.items()))
                values = {
                    "source_topic_id": None,
                    "target_topic_id": None,
                    "run_id": "forgotten",
                    "forgotten_through_segment": last_segment,
                }
                if c.execute(update(checkpoint_topic_ids).where(where).values(**values)).rowcount == 0:
                    c.execute(insert(checkpoint_topic_ids).values(**key, **values))
        return [(row[0], row[1], row[2], row[3]) for row in found]

    def known_topics(self, source_cluster_id: str, target_cluster_id: str) -> dict[str, str]:
        """Source topics copied before (source -> target name) for this pair of clusters."""
        return {k[0]: k[2] for k in self.checkpoints(source_cluster_id, target_cluster_id)}

    # -- evidence -------------------------------------------------------------------------------------

    def record_nothing_new(self, plan: MigrationPlan) -> None:
        with self.engine.begin() as c:
            c.execute(update(segments).where(segments.c.run_id == plan.run_id).values(status="nothing_new"))

    def record_topic(
        self,
        plan: MigrationPlan,
        topic: TopicPlan,
        copy: TopicOutcome | None,
        verify: TopicOutcome | None,
        target_topic_id: str | None = None,
    ) -> None:
        """Store one topic's copy and verification results; advance checkpoints of verified partitions.

        ``target_topic_id`` is the id of a target topic created after planning (the plan has the others).
        """
        self.record_topics(plan, [(topic, copy, verify, target_topic_id)])

    def record_topics(
        self,
        plan: MigrationPlan,
        results: Sequence[tuple[TopicPlan, TopicOutcome | None, TopicOutcome | None, str | None]],
    ) -> None:
        """``record_topic`` for many topics at once: one transaction, a few bulk statements, not a few per partition.

        Each item is (topic plan, copy outcome, verify outcome, id of a target topic created after planning).
        A run of 1,000 topics stores its evidence in well under a second instead of 1,000 commits.
        """
        now = _now()
        updates: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        verified_parts: list[tuple[TopicPlan, Any, dict[str, Any]]] = []
        advanced: dict[str, tuple[TopicPlan, str | None]] = {}
        for topic, copy, verify, target_topic_id in results:
            copied = {p["partition"]: p for p in (copy.partitions if copy else [])}
            verified = {p["partition"]: p for p in (verify.partitions if verify else [])}
            # the report's "shared a Spark job" note: the larger of the two steps' job sizes
            shared = [o.job_topics for o in (copy, verify) if o is not None and getattr(o, "job_topics", None)]
            job_topics = max(shared) if shared else None
            for part in topic.partitions:
                cp_row = copied.get(part.partition)
                v = verified.get(part.partition)
                values = _segment_values(part.offset_span, copy, cp_row, v)
                if job_topics is not None:
                    values["job_topics"] = job_topics
                values.update(b_topic=topic.source_topic, b_partition=part.partition)
                updates.setdefault(tuple(sorted(values)), []).append(values)
                if values["status"] == "verified" and v is not None:
                    verified_parts.append((topic, part, v))
                    advanced[topic.source_topic] = (topic, target_topic_id or topic.target_topic_id)
        with self.engine.begin() as c:
            by_segment = segments.c.run_id == plan.run_id
            for rows in updates.values():
                c.execute(
                    update(segments)
                    .where(
                        by_segment,
                        segments.c.source_topic == bindparam("b_topic"),
                        segments.c.partition == bindparam("b_partition"),
                    )
                    .values({k: bindparam(k) for k in rows[0] if not k.startswith("b_")}),
                    rows,
                )
            if not verified_parts:
                return
            wanted = {(t.source_topic, part.partition) for t, part, _ in verified_parts}
            segment_ids = {
                (r.source_topic, r.partition): r.id
                for r in c.execute(
                    select(segments.c.id, segments.c.source_topic, segments.c.partition).where(by_segment)
                )
                if (r.source_topic, r.partition) in wanted
            }
            ids = [segment_ids[(t.source_topic, part.partition)] for t, part, _ in verified_parts]
            for chunk in _chunks(ids, 500):
                c.execute(delete(offset_map).where(offset_map.c.segment_id.in_(chunk)))
            points = [
                {"segment_id": segment_id, "source_offset": s, "target_offset": t}
                for segment_id, (_, _, v) in zip(ids, verified_parts, strict=True)
                for s, t in v.get("offset_map", [])
            ]
            if points:
                c.execute(insert(offset_map), points)
            self._advance_all(
                c,
                plan,
                [
                    (t.source_topic, t.target_topic, part.partition, part.end, v["target_end"])
                    for t, part, v in verified_parts
                ],
                now,
            )
            self._record_topic_ids_all(c, plan, list(advanced.values()))

    def _record_topic_ids_all(
        self, c: Any, plan: MigrationPlan, topics: Sequence[tuple[TopicPlan, str | None]]
    ) -> None:
        if not topics:
            return
        pair = {"source_cluster_id": plan.source.cluster_id, "target_cluster_id": plan.target.cluster_id}
        existing = {
            (r.source_topic, r.target_topic)
            for r in c.execute(
                select(checkpoint_topic_ids.c.source_topic, checkpoint_topic_ids.c.target_topic).where(
                    checkpoint_topic_ids.c.source_cluster_id == pair["source_cluster_id"],
                    checkpoint_topic_ids.c.target_cluster_id == pair["target_cluster_id"],
                )
            )
        }
        rows = [
            {
                "b_source_topic": topic.source_topic,
                "b_target_topic": topic.target_topic,
                "source_topic_id": topic.source_topic_id,
                "target_topic_id": target_topic_id,
                "run_id": plan.run_id,
            }
            for topic, target_topic_id in topics
        ]
        old = [r for r in rows if (r["b_source_topic"], r["b_target_topic"]) in existing]
        new = [r for r in rows if (r["b_source_topic"], r["b_target_topic"]) not in existing]
        if old:
            c.execute(
                update(checkpoint_topic_ids)
                .where(
                    checkpoint_topic_ids.c.source_cluster_id == pair["source_cluster_id"],
                    checkpoint_topic_ids.c.target_cluster_id == pair["target_cluster_id"],
                    checkpoint_topic_ids.c.source_topic == bindparam("b_source_topic"),
                    checkpoint_topic_ids.c.target_topic == bindparam("b_target_topic"),
                )
                .values(
                    source_topic_id=bindparam("source_topic_id"),
                    target_topic_id=bindparam("target_topic_id"),
                    run_id=bindparam("run_id"),
                ),
                old,
            )
        if new:
            c.execute(
                insert(checkpoint_topic_ids),
                [
                    {
                        **pair,
                        "source_topic": r["b_source_topic"],
                        "target_topic": r["b_target_topic"],
                        "source_topic_id": r["source_topic_id"],
                        "target_topic_id": r["target_topic_id"],
                        "run_id": r["run_id"],
                    }
                    for r in new
                ],
            )

    def _advance_all(
        self,
        c: Any,
        plan: MigrationPlan,
        verified: Sequence[tuple[str, str, int, int, int]],
        now: datetime,
    ) -> None:
        """Move the checkpoints of verified partitions (source topic, target topic, partition, source end, target
        end) forward; never backwards (a late replay of an older run leaves a newer checkpoint alone)."""
        pair = {"source_cluster_id": plan.source.cluster_id, "target_cluster_id": plan.target.cluster_id}
        current = {
            (r.source_topic, r.partition, r.target_topic): r.source_offset
            for r in c.execute(
                select(
                    checkpoints.c.source_topic,
                    checkpoints.c.partition,
                    checkpoints.c.target_topic,
                    checkpoints.c.source_offset,
                ).where(
                    checkpoints.c.source_cluster_id == pair["source_cluster_id"],
                    checkpoints.c.target_cluster_id == pair["target_cluster_id"],
                )
            )
        }
        inserts: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        for source_topic, target_topic, partition, source_offset, target_offset in verified:
            values = {
                "source_offset": source_offset,
                "target_offset": target_offset,
                "run_id": plan.run_id,
                "updated_at": now,
            }
            at = current.get((source_topic, partition, target_topic))
            if at is None:
                inserts.append(
                    {
                        **pair,
                        "source_topic": source_topic,
                        "partition": partition,
                        "target_topic": target_topic,
                        **values,
                    }
                )
            elif source_offset >= at:  # never move a checkpoint backwards
                updates.append(
                    {"b_source_topic": source_topic, "b_partition": partition, "b_target_topic": target_topic, **values}
                )
        if inserts:
            c.execute(insert(checkpoints), inserts)
        if updates:
            c.execute(
                update(checkpoints)
                .where(
                    checkpoints.c.source_cluster_id == pair["source_cluster_id"],
                    checkpoints.c.target_cluster_id == pair["target_cluster_id"],
                    checkpoints.c.source_topic == bindparam("b_source_topic"),
                    checkpoints.c.partition == bindparam("b_partition"),
                    checkpoints.c.target_topic == bindparam("b_target_topic"),
                )
                .values({k: bindparam(k) for k in ("source_offset", "target_offset", "run_id", "updated_at")}),
                updates,
            )

    # -- offset translation -----------------------------------------------------------------------

    def translate(
        self,
        source_topic: str,
        partition: int,
        offset: int,
        target_topic: str | None = None,
        source_cluster_id: str | None = None,
        target_cluster_id: str | None = None,
    ) -> Translation:
        conditions = [
            segments.c.source_topic == source_topic,
            segments.c.partition == partition,
            segments.c.status == "verified",
        ]
        for column, value in (
            (segments.c.target_topic, target_topic),
            (segments.c.source_cluster_id, source_cluster_id),
            (segments.c.target_cluster_id, target_cluster_id),
        ):
            if value is not None:
                conditions.append(column == value)
        with self.engine.connect() as c:
            found = c.execute(select(segments).where(*conditions).order_by(segments.c.source_start)).all()
            if not found:
                raise ConfigurationError(
                    f"The ledger has no verified copy of {source_topic}[{partition}]"
                    + (f" to {target_topic}" if target_topic else "")
                    + "; run a migration first."
                )
            pairs = {(r.source_cluster_id, r.target_cluster_id, r.target_topic) for r in found}
            if len(pairs) > 1:
                options = ", ".join(f"{s} -> {t} topic {n}" for s, t, n in sorted(pairs))
                raise ConfigurationError(
                    f"{source_topic}[{partition}] was copied to several places ({options}); "
                    "name --target-topic and/or the clusters."
                )
            covering = [r for r in found if r.source_start <= offset <= r.source_end and r.source_end > r.source_start]
            if not covering:
                low = min(r.source_start for r in found)
                high = max(r.source_end for r in found)
                raise ConfigurationError(
                    f"Source offset {offset} of {source_topic}[{partition}] is outside the verified copies "
                    f"(offsets {low}..{high}); it was not copied yet or expired before the first run."
                )
            seg = covering[-1] if offset == covering[-1].source_end else covering[0]
            points = [
                (r.source_offset, r.target_offset)
                for r in c.execute(
                    select(offset_map).where(offset_map.c.segment_id == seg.id).order_by(offset_map.c.source_offset)
                )
            ]
        target_offset = translate(points, seg.source_end, seg.target_end, offset)
        return Translation(
            source_topic=source_topic,
            partition=partition,
            source_offset=offset,
            target_topic=seg.target_topic,
            target_offset=target_offset,
            run_id=seg.run_id,
            source_cluster_id=seg.source_cluster_id,
            target_cluster_id=seg.target_cluster_id,
        )

    def verified_segments(self, source_cluster_id: str, target_cluster_id: str) -> dict[Key, list[MappedSegment]]:
        """Every verified segment between two clusters with its offset map, per (source topic, partition,
        target topic), oldest first: the input of ``offsets.translate_position``."""
        out: dict[Key, list[MappedSegment]] = {}
        with self.engine.connect() as c:
            found = c.execute(
                select(segments)
                .where(
                    segments.c.source_cluster_id == source_cluster_id,
                    segments.c.target_cluster_id == target_cluster_id,
                    segments.c.status == "verified",
                    segments.c.target_end.is_not(None),
                )
                .order_by(segments.c.source_start, segments.c.id)
            ).all()
            points: dict[int, list[tuple[int, int]]] = {}
            if found:
                rows = c.execute(
                    select(offset_map)
                    .join(segments, segments.c.id == offset_map.c.segment_id)
                    .where(
                        segments.c.source_cluster_id == source_cluster_id,
                        segments.c.target_cluster_id == target_cluster_id,
                        segments.c.status == "verified",
                    )
                    .order_by(offset_map.c.segment_id, offset_map.c.source_offset)
                )
                for r in rows:
                    points.setdefault(r.segment_id, []).append((r.source_offset, r.target_offset))
        for r in found:
            out.setdefault((r.source_topic, r.partition, r.target_topic), []).append(
                MappedSegment(
                    run_id=r.run_id,
                    source_start=r.source_start,
                    source_end=r.source_end,
                    target_start=r.target_start,
                    target_end=r.target_end,
                    points=tuple(points.get(r.id, ())),
                )
            )
        return out

    # -- consumer group syncs -------------------------------------------------------------------

    def record_group_sync(self, result: GroupSyncResult) -> None:
        """Store a group sync's rows, replacing an earlier record of the same sync id (a retried task)."""
        now = _now()
        rows = [
            {
                "sync_id": result.sync_id,
                "run_id": result.run_id,
                "synced_at": now,
                "source_cluster_id": result.source_cluster_id,
                "target_cluster_id": result.target_cluster_id,
                "group_id": p.group_id,
                "source_topic": p.source_topic,
                "partition": p.partition,
                "source_offset": p.source_offset,
                "source_end": p.source_end,
                "target_topic": p.target_topic,
                "target_offset": p.target_offset,
                "previous_target_offset": p.previous_target_offset,
                "translation": p.translation,
                "translated_by": p.translated_by,
                "outcome": p.outcome,
                "proof": p.proof,
                "reason": p.reason,
            }
            for p in result.partitions
        ]
        with self.engine.begin() as c:
            c.execute(delete(group_syncs).where(group_syncs.c.sync_id == result.sync_id))
            if rows:
                c.execute(insert(group_syncs), rows)

    def group_sync_rows(self, *, sync_id: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
        """Rows of one sync, or of every sync that was part of a run, by group, topic and partition."""
        conditions = []
        if sync_id is not None:
            conditions.append(group_syncs.c.sync_id == sync_id)
        if run_id is not None:
            conditions.append(group_syncs.c.run_id == run_id)
        with self.engine.connect() as c:
            result = c.execute(
                select(group_syncs)
                .where(*conditions)
                .order_by(
                    group_syncs.c.sync_id, group_syncs.c.group_id, group_syncs.c.source_topic, group_syncs.c.partition
                )
            )
            return [dict(r._mapping) for r in result]

    def group_syncs(self, limit: int = 50) -> list[dict[str, Any]]:
        """One summary per sync, newest first: when, clusters, groups, partitions, and how many are not ok."""
        good = group_syncs.c.outcome.in_(sorted(GOOD_OUTCOMES))
        with self.engine.connect() as c:
            result = c.execute(
                select(
                    group_syncs.c.sync_id,
                    func.max(group_syncs.c.run_id).label("run_id"),
                    func.max(group_syncs.c.synced_at).label("synced_at"),
                    func.max(group_syncs.c.source_cluster_id).label("source_cluster_id"),
                    func.max(group_syncs.c.target_cluster_id).label("target_cluster_id"),
                    func.count(func.distinct(group_syncs.c.group_id)).label("groups"),
                    func.count().label("partitions"),
                    func.sum(case((good, 0), else_=1)).label("not_ok"),
                )
                .group_by(group_syncs.c.sync_id)
                .order_by(func.max(group_syncs.c.synced_at).desc())
                .limit(limit)
            )
            return [dict(r._mapping) for r in result]

    # -- cutovers and failbacks -------------------------------------------------------------------

    def start_cutover(self, cutover_id: str, values: Mapping[str, Any]) -> None:
        """Record a cutover attempt (status ``checking``); a retried task updates its own row."""
        with self.engine.begin() as c:
            exists = c.execute(select(cutovers.c.cutover_id).where(cutovers.c.cutover_id == cutover_id)).first()
            if exists:
                c.execute(update(cutovers).where(cutovers.c.cutover_id == cutover_id).values(**values))
            else:
                c.execute(
                    insert(cutovers).values(
                        cutover_id=cutover_id, started_at=_now(), topics=[], groups=[], status="checking", **values
                    )
                )

    def update_cutover(self, cutover_id: str, finished: bool = False, **values: Any) -> None:
        if finished:
            values["ended_at"] = _now()
        if values.get("failback_status") == "running":
            values.setdefault("failback_started_at", _now())
        elif values.get("failback_status") in ("completed", "failed"):
            values["failback_ended_at"] = _now()
        with self.engine.begin() as c:
            c.execute(update(cutovers).where(cutovers.c.cutover_id == cutover_id).values(**values))

    def cutover(self, cutover_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = c.execute(select(cutovers).where(cutovers.c.cutover_id == cutover_id)).first()
            return dict(row._mapping) if row else None

    def cutovers(self, limit: int = 50) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            result = c.execute(select(cutovers).order_by(cutovers.c.started_at.desc()).limit(limit))
            return [dict(r._mapping) for r in result]

    def seed_checkpoints(
        self, source_cluster_id: str, target_cluster_id: str, seeds: Mapping[Key, Checkpoint]
    ) -> dict[Key, Checkpoint]:
        """Place checkpoints where a run of this direction must start (a failback at the cutover point).

        A checkpoint already at or beyond its seed is kept (a retried failback continues from its
        progress); the checkpoints in force afterwards are returned.
        """
        now = _now()
        with self.engine.begin() as c:
            for (source_topic, partition, target_topic), seed in seeds.items():
                key = {
                    "source_cluster_id": source_cluster_id,
                    "source_topic": source_topic,
                    "partition": partition,
                    "target_cluster_id": target_cluster_id,
                    "target_topic": target_topic,
                }
                where = and_(*(checkpoints.c[k] == v for k, v in key.items()))
                current = c.execute(select(checkpoints.c.source_offset).where(where)).scalar()
                values = {
                    "source_offset": seed.source_offset,
                    "target_offset": seed.target_offset,
                    "run_id": seed.run_id,
                    "updated_at": now,
                }
                if current is None:
                    c.execute(insert(checkpoints).values(**key, **values))
                elif current < seed.source_offset:
                    c.execute(update(checkpoints).where(where).values(**values))
        found = self.checkpoints(source_cluster_id, target_cluster_id)
        return {key: found[key] for key in seeds}


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


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _segment_values(
    offset_span: int, copy: TopicOutcome | None, cp_row: Mapping[str, Any] | None, v: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The columns a partition's copy and verification results set on its segment."""
    status = _segment_status(offset_span, copy, cp_row, v)
    values: dict[str, Any] = {"status": status}
    if cp_row:
        values.update(
            copied_records=cp_row.get("records"),
            copied_bytes=cp_row.get("bytes"),
            resumed_records=cp_row.get("resumed_records"),
            copy_seconds=cp_row.get("seconds"),
            error=cp_row.get("error"),
        )
    elif copy is not None and copy.error and offset_span > 0:
        values["error"] = copy.error
    if v:
        values.update(
            target_end=v["target_end"],
            source_records=v["source_records"],
            target_records=v["target_records"],
            source_checksum=v["source_checksum"],
            target_checksum=v["target_checksum"],
            first_difference=v["first_difference"],
            first_source_offset=v["first_source_offset"],
            first_target_offset=v["first_target_offset"],
            verify_seconds=v["seconds"],
        )
    return values


def _segment_status(
    span: int, copy: TopicOutcome | None, copied: Mapping[str, Any] | None, verified: Mapping[str, Any] | None
) -> str:
    if copied is not None and copied.get("error"):
        return "failed"
    if span > 0 and copied is None and copy is not None and copy.status != "ok":
        return "failed"
    if verified is None:
        return "copied" if copied is not None else "planned"
    if verified.get("error"):
        return "unverified"  # the verification could not read a side: no verdict on the records
    return "verified" if verified["match"] else "mismatch"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
