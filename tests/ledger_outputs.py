"""What readers of the ledger print, for one ledger, from two builds of the package: are they byte-identical?

A change to how the ledger is read (typed rows, aware UTC times...) must not change what users get from it: the
sign-off, cutover and security reports (report.json, .md, .html), the CLI's ``--output json`` documents and the
console API's responses. This script writes a ledger with the package of one build and dumps everything read from
it with the package of each build, then compares the dumps file by file.

    # the check: ledger written by BASE, read by BASE and by this tree, on SQLite and on PostgreSQL
    python -m tests.ledger_outputs compare --base /path/to/worktree-at-base [--postgresql] [--allow-report-offsets]

    # its two halves, each run by ``compare`` with the build's PYTHONPATH (this file read by runpy)
    python -m tests.ledger_outputs build --ledger URL
    python -m tests.ledger_outputs dump --ledger URL --out DIR

The dump runs at a fixed path and a fixed "now" (the console's ages), so that two dumps of one ledger can differ
only by what the builds do. Only the package and the unit tests' plan helpers are imported by ``build`` and
``dump``, both present in the older builds this is meant to compare with.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RUNS = {  # run id: (first offset, end, status)
    "kafka_migration__manual_1": (0, 100, "verified"),
    "kafka_nightly_sync__scheduled_2": (100, 120, "mismatch"),
    "cli-20261127T100000Z-failed": (120, 125, "failed"),
    "kafka_migration__manual_3": (120, 130, None),  # still running
}
FIRST_RUN = "kafka_migration__manual_1"
SYNC_ID = "sync-1"
CUTOVERS = ("done-cutover", "refused-cutover")
ACCESS_SYNCS = ("dry", "wrote")
NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)  # the console's "now" while dumping (ages of checkpoints)


# -- build: a ledger with every kind of row whose times or shape a reader shows -------------------------------


def build(url: str) -> None:
    from kafka_migration.groups.rules import GroupSync, GroupSyncResult, PartitionSync
    from kafka_migration.ledger import Ledger
    from kafka_migration.ledger.leases import Holder, LeaseKey
    from kafka_migration.model.timings import RunTimings
    from tests.unit.ledger.test_ledger import outcomes, plan

    ledger = Ledger.open(url)
    for run_id, (start, end, status) in RUNS.items():
        p = plan(run_id, start, end, start)
        dag = run_id.split("__")
        airflow = len(dag) == 2
        ledger.start_run(
            p, trigger="airflow" if airflow else "cli", **({"dag_id": dag[0], "dag_run_id": dag[1]} if airflow else {})
        )
        if status is None:
            continue
        match = {0: True, 1: status != "mismatch"}
        ledger.record_topic(p, p.topics[0], *outcomes(p, match))
        timings = RunTimings(wall=12.5, plan=1.25, startup=3.0, copy=4.5, verify=3.5, overlap=2.0, bookkeeping=0.75)
        message = "the target stopped answering" if status == "failed" else None
        ledger.finish_run(run_id, status, end - start, message, timings=timings if status == "verified" else None)
    parts = tuple(
        PartitionSync(
            "app", "orders", p, 10, None, 25, "copy.orders", 9, None, "within", FIRST_RUN, "write", o, None, proof
        )
        for p, (o, proof) in enumerate([("synced", "same_record"), ("not_proven", "different")])
    )
    group = GroupSync("app", "EMPTY", False, "NONE", False, parts)
    ledger.record_group_sync(GroupSyncResult(SYNC_ID, FIRST_RUN, "src-cluster", "tgt-cluster", False, False, (group,)))
    _cutovers(ledger)
    _access(ledger)
    key = LeaseKey("src-cluster", "orders", "tgt-cluster", "copy.orders")
    ledger.leases.acquire(Holder("kafka_migration__manual_3", "airflow", "DAG kafka_migration"), [key], ttl=10**8)


def _cutovers(ledger: Any) -> None:
    values = {
        "trigger": "airflow",
        "dag_id": "kafka_cutover",
        "dag_run_id": "manual_9",
        "params": {"quiet_seconds": 5},
        "source_cluster_id": "src-cluster",
        "source_bootstrap": "s:9092",
        "target_cluster_id": "tgt-cluster",
        "target_bootstrap": "t:9092",
    }
    done, refused = CUTOVERS
    ledger.start_cutover(done, values)
    topics = [
        {
            "source_topic": "orders",
            "target_topic": "copy.orders",
            "partitions": [{"partition": 0, "source_end": 100, "target_end": 100}],
        }
    ]
    ledger.update_cutover(done, finished=True, status="completed", run_id=FIRST_RUN, groups=["app"], topics=topics)
    ledger.start_cutover(refused, values)
    ledger.update_cutover(refused, finished=True, status="refused", message="orders is still written to")


def _access(ledger: Any) -> None:
    from kafka_migration.ledger.schema import utc_now
    from kafka_migration.model.access import (
        AccessAction,
        AccessCheck,
        AclBinding,
        PatternType,
        PermissionType,
        Quota,
        QuotaEntity,
        ResourceType,
        ScramCredential,
    )

    TOPIC, LITERAL = ResourceType.TOPIC, PatternType.LITERAL
    ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY
    ADDED, CONFLICT, DIFFERENT = AccessAction.ADDED, AccessAction.CONFLICT, AccessAction.DIFFERENT
    NEEDS_PASSWORD, WOULD_ADD = AccessAction.NEEDS_PASSWORD, AccessAction.WOULD_ADD

    write = AclBinding(TOPIC, "orders", LITERAL, "User:app", "*", "WRITE", ALLOW)
    planted = AclBinding(TOPIC, "orders", LITERAL, "User:intern", "*", "WRITE", DENY)

    def check(sync_id: str, dry_run: bool, verdict: str) -> AccessCheck:
        return AccessCheck(
            sync_id=sync_id,
            run_id=None,
            synced_at=utc_now(),
            source_cluster_id="src-cluster",
            target_cluster_id="tgt-cluster",
            source_bootstrap="s:9092",
            target_bootstrap="t:9092",
            dry_run=dry_run,
            verdict=verdict,
            actions_checked=12,
            differences=() if verdict == "proven" else ("User:intern WRITE on TOPIC orders: differs",),
            unreadable=(0, 0),
            report_sha256=None,
        )

    dry, wrote = ACCESS_SYNCS
    ledger.record_access_sync(dry, None, "src-cluster", "tgt-cluster", [(write, WOULD_ADD, None)], dry_run=True)
    ledger.record_access_check(check(dry, True, "proven"))
    rows = [(write, ADDED, None), (planted, CONFLICT, "a DENY on the target that the source lacks")]
    ledger.record_access_sync(wrote, None, "src-cluster", "tgt-cluster", rows)
    users = [
        (ScramCredential("carol", "SCRAM-SHA-512", 4096), ADDED, "proven", None),
        (ScramCredential("erin", "SCRAM-SHA-512", 4096), NEEDS_PASSWORD, None, "no password given for it"),
    ]
    ledger.record_access_users(wrote, users)
    quota = Quota(QuotaEntity.of(user="app"), "producer_byte_rate", 1024.0)
    ledger.record_access_quotas(wrote, None, "src-cluster", "tgt-cluster", [(quota, 2048.0, DIFFERENT, "not ours")])
    ledger.record_access_check(check(wrote, False, "different"))


# -- dump: everything the readers print of that ledger ----------------------------------------------------------


def dump(url: str, out: Path) -> None:
    """Reports (written from the ledger, as ``kafka-migrate report`` writes them), the CLI's JSON documents and the
    console API's responses, one file each under ``out``."""
    from kafka_migration.cli import main as cli

    out.mkdir(parents=True, exist_ok=True)
    reports = out / "reports"
    ledger = ["--ledger", url, "--state-dir", str(out / "state")]
    commands = {
        **{f"cli-report-{r}": ["report", r, "--report-dir", str(reports), *ledger] for r in RUNS},
        "cli-history": ["history", *ledger],
        "cli-history-cutovers": ["history", "--cutovers", *ledger],
        "cli-groups-show": ["groups", "show", SYNC_ID, *ledger],
        **{f"cli-access-show-{s}": ["access", "show", s, *ledger] for s in ACCESS_SYNCS},
    }
    for name, args in commands.items():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = cli([*args, "--output", "json"])
        (out / f"{name}.json").write_text(f"exit {code}\n{printed.getvalue()}")
    _other_reports(url, reports)
    _console(url, out)


def _other_reports(url: str, reports: Path) -> None:
    from kafka_migration.cutover.report import generate_cutover_report
    from kafka_migration.ledger import Ledger
    from kafka_migration.reports.security import generate_access_report

    ledger = Ledger.open(url)
    for cutover_id in CUTOVERS:
        generate_cutover_report(ledger, cutover_id, reports)
    for sync_id in ACCESS_SYNCS:
        generate_access_report(ledger, sync_id, reports)


def _console(url: str, out: Path) -> None:
    from fastapi.testclient import TestClient

    from kafka_migration.airflow.console import api
    from kafka_migration.airflow.console.clusters import Clusters
    from kafka_migration.airflow.webapp import create_app

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:  # type: ignore[override]
            return cls.fromtimestamp(NOW.timestamp(), tz)

    class Info:
        def __init__(self, cluster_id: str) -> None:
            self.cluster_id = cluster_id
            self.bootstrap = f"{cluster_id}:9092"

    class Cluster:
        """What GroupCluster answers for the overview, without a broker."""

        def __init__(self, conn_id: str) -> None:
            self.conn_id = conn_id

        def describe(self) -> Info:
            return Info({"kafka_source": "src-cluster", "kafka_target": "tgt-cluster"}[self.conn_id])

        def log_ends(self, names: list[str]) -> dict[tuple[str, int], tuple[int, int]]:
            return {(n, p): (130, 130) for n in names for p in (0, 1)}

        def log_starts(self, names: list[str]) -> dict[tuple[str, int], int]:
            return {(n, p): 0 for n in names for p in (0, 1)}

    api.datetime = Frozen  # type: ignore[misc]
    clusters = Clusters(
        connections=lambda: ("kafka_source", "kafka_target"), opener=lambda conn_id, role, timeout: Cluster(conn_id)
    )
    app = create_app(
        lambda: url,
        lambda: out / "reports",
        state_dir=lambda: out / "state",
        clusters=clusters,
        bundle_dir=out / "dist",
    )
    client = TestClient(app)
    paths = [
        "/api/runs",
        "/api/runs?status=verified",
        "/api/runs?since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z",
        "/api/runs/facets",
        *(f"/api/runs/{r}" for r in RUNS),
        "/api/runs/by-dag-run?dag_id=kafka_migration&dag_run_id=manual_1",
        "/api/group-syncs",
        "/api/cutovers",
        "/api/overview",
        "/api/lag-history",
        "/api/clusters",
        "/api/access-syncs",
        *(f"/api/access-syncs/{s}" for s in ACCESS_SYNCS),
    ]
    for path in paths:
        response = client.get(path)
        name = "console" + path.replace("/", "-").replace("?", "-").replace("&", "-").replace(":", "")
        (out / f"{name}.json").write_bytes(f"{response.status_code}\n".encode() + response.content)


# -- compare: build with BASE, dump with BASE and with this tree, diff ------------------------------------------


def _run(tree: Path, *args: str) -> None:
    """This script's ``args`` with ``tree``'s package. Run from ``tree`` through runpy, so that no folder of this
    one comes first on the path, and the build's own tests/ are the ones imported."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    script = f"import runpy, sys; sys.argv = {[__file__, *args]!r}; runpy.run_path({__file__!r}, run_name='__main__')"
    subprocess.run([sys.executable, "-c", script], cwd=tree, env=env, check=True)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# A report time written with its UTC offset, and a report digest: what aware UTC times in the reports change.
_OFFSET = re.compile(rb"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\+00:00")


def _digest(data: bytes) -> bytes:
    return b"sha256:" + hashlib.sha256(data).hexdigest().encode()


def _explained(base: dict[str, bytes], head: dict[str, bytes]) -> dict[str, bytes]:
    """``head`` with what aware report times explain undone: in the reports, a time's ``+00:00`` where the base's
    report has none; elsewhere, each head report's digest replaced by its base report's digest."""
    undone = dict(head)
    digests = {}
    for name in base.keys() & head.keys():
        if name.startswith("reports/") and base[name] != head[name]:
            naive = _OFFSET.sub(rb"\1", head[name])
            if _OFFSET.sub(rb"\1", base[name]) == naive and not _OFFSET.search(base[name]):
                undone[name] = naive
                digests[_digest(head[name])] = _digest(base[name])
    for name, data in undone.items():
        if not name.startswith("reports/"):
            for theirs, ours in digests.items():
                data = data.replace(theirs, ours)
            undone[name] = data
    return undone


def _differences(ours: dict[str, bytes], theirs: dict[str, bytes]) -> list[str]:
    found = [f"only in the base dump: {name}" for name in sorted(ours.keys() - theirs.keys())]
    found += [f"only in the head dump: {name}" for name in sorted(theirs.keys() - ours.keys())]
    for name in sorted(ours.keys() & theirs.keys()):
        if ours[name] != theirs[name]:
            lines = difflib.unified_diff(
                ours[name].decode(errors="replace").splitlines(),
                theirs[name].decode(errors="replace").splitlines(),
                f"base/{name}",
                f"head/{name}",
                lineterm="",
                n=0,
            )
            found.append("\n".join(list(lines)[:40]))
    return found


def _compare_on(kind: str, base: Path, head: Path, work: Path, ledger: tuple[str, Any]) -> tuple[list[str], list[str]]:
    """Build once with ``base``; dump a fresh copy of that ledger with each build at the same path. The
    differences, and those left once aware report times are accounted for (``_explained``)."""
    url, fresh = ledger
    _run(base, "build", "--ledger", url)
    fresh("keep")
    dumps = {}
    for side, tree in (("base", base), ("head", head)):
        fresh("restore")
        scratch = work / "dump"
        shutil.rmtree(scratch, ignore_errors=True)
        _run(tree, "dump", "--ledger", url, "--out", str(scratch))
        dumps[side] = _files(scratch)
        shutil.rmtree(scratch)
    ours, theirs = dumps["base"], dumps["head"]
    problems = _differences(ours, theirs)
    unexplained = _differences(ours, _explained(ours, theirs))
    print(
        f"{kind}: {len(ours)} files dumped by each build, {len(problems)} differing, {len(unexplained)} of them "
        "by more than the reports' times gaining their UTC offset (and those reports' digests)",
        flush=True,
    )
    return problems, unexplained


def _sqlite(work: Path) -> tuple[str, Any]:
    path = work / "ledger.db"
    kept = work / "ledger.built.db"

    def fresh(what: str) -> None:
        shutil.copyfile(path, kept) if what == "keep" else shutil.copyfile(kept, path)

    return f"sqlite:///{path}", fresh


@contextlib.contextmanager
def _postgresql() -> Any:
    from harness.servers.postgres import admin_connect, database_url, temporary_databases

    with temporary_databases("km_outputs_built", "km_outputs") as (built, used):

        def fresh(what: str) -> None:
            source, copy = (used, built) if what == "keep" else (built, used)
            with contextlib.closing(admin_connect()) as conn:
                conn.autocommit = True
                conn.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{source}"')

        yield database_url(used), fresh


def compare(base: Path, postgresql: bool, offsets: bool) -> int:
    """0 when every dump is byte-identical (with ``offsets``: identical but for aware report times)."""
    head = Path(__file__).resolve().parents[1]
    problems: list[str] = []
    unexplained: list[str] = []
    with tempfile.TemporaryDirectory(prefix="km-ledger-outputs-") as scratch:
        work = Path(scratch)
        sides = [("sqlite", contextlib.nullcontext(_sqlite(work)))]
        if postgresql:
            sides.append(("postgresql", _postgresql()))
        for kind, opened in sides:
            with opened as ledger:
                found, left = _compare_on(kind, base, head, work, ledger)
            problems += found
            unexplained += left
    for problem in unexplained if offsets else problems:
        print(problem)
    if not problems:
        print("byte-identical")
        return 0
    if offsets and not unexplained:
        print(f"{len(problems)} difference(s), every one the reports' times gaining their UTC offset")
        return 0
    print(f"{len(unexplained if offsets else problems)} difference(s)")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build").add_argument("--ledger", required=True)
    dumping = sub.add_parser("dump")
    dumping.add_argument("--ledger", required=True)
    dumping.add_argument("--out", type=Path, required=True)
    comparing = sub.add_parser("compare")
    comparing.add_argument("--base", type=Path, required=True, help="a worktree of the build to compare with")
    comparing.add_argument("--postgresql", action="store_true", help="also on PostgreSQL (harness/servers/postgres)")
    comparing.add_argument(
        "--allow-report-offsets",
        action="store_true",
        help="accept report times that gain their +00:00 (a base whose SQLite reports wrote naive times)",
    )
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.ledger)
        return 0
    if args.command == "dump":
        dump(args.ledger, args.out)
        return 0
    return compare(args.base.resolve(), args.postgresql, args.allow_report_offsets)


if __name__ == "__main__":
    sys.exit(main())
