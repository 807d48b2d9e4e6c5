"""Whether a change left every output of the access sync as it was (issue 49: "behaviour unchanged"): two commits of
the package, each run through the same access syncs on a fresh ACL-enforcing pair (``make clusters KIND=acl``'s:
harness/data/access.py seeds the source), and what each wrote and prints compared.

    python -m harness.access_outputs c355c05 HEAD     # prints what differs; exit 0 when nothing does

Two comparisons:

- **The same ledger, read by both commits**, byte for byte: ``access show`` (JSON and text) of every recorded sync,
  each written sync's report (report.json, .md, .html) built again from the ledger, whether that report.json is
  the one whose digest the ledger holds, and the console's API (the list of syncs and each sync's page). Each
  commit's ledger is read by both commits.
- **The syncs themselves**, one commit's against the other's on identically seeded clusters: ``access sync``'s
  JSON and text and exit code, the report files it wrote, every row of the ledger's access tables. A new pair has
  new cluster ids, and a sync its own id, time and report digest: those are replaced by placeholders first,
  nothing else.

The syncs, in order: dry runs without and with the users' passwords; the sync (topics renamed ``dc1.{topic}``,
which a run would have created); the same again (everything present); with a DENY and quotas planted on the target
(a conflict, a decision and a probe answered differently, a quota not this tool's); with a binding and a quota gone
from the source (``--remove-stale``). The checkouts are made with ``git archive`` (only ``kafka_migration/``), so
the working tree may change meanwhile. Heavy: two pairs of brokers one after the other, a few minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RENAME = "dc1.{topic}"
ACCESS_TABLES = ("km_access_syncs", "km_access_users", "km_access_quotas", "km_access_probes", "km_access_checks")

# -- reading a ledger (run with the commit under test first on PYTHONPATH) ----------------------------------------


def _cli(argv: list[str]) -> dict[str, Any]:
    """``kafka-migrate ARGV`` in this process: its exit code and what it printed."""
    from kafka_migration.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return {"exit": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _api(url: str, reports: Path, scratch: Path, sync_ids: list[str]) -> dict[str, Any]:
    """The console's access routes, as a browser gets them (status and body)."""
    from fastapi.testclient import TestClient

    from kafka_migration.airflow.console.clusters import Clusters
    from kafka_migration.airflow.webapp import create_app

    clusters = Clusters(connections=lambda: (), opener=lambda conn_id, role, timeout: None)
    app = create_app(lambda: url, lambda: reports, state_dir=lambda: scratch, clusters=clusters, bundle_dir=scratch)
    client = TestClient(app)
    paths = ["/api/access-syncs?limit=100", "/api/access-syncs/no-such-sync"]
    paths += [f"/api/access-syncs/{sync_id}" for sync_id in sync_ids]
    paths += [f"/api/access-syncs/{sync_id}/report.json" for sync_id in sync_ids]
    found = {}
    for path in paths:
        response = client.get(path)
        found[path] = {"status": response.status_code, "body": response.content.decode()}
    return found


def _copy_sqlite(source: Path, into: Path) -> None:
    """A consistent copy of a SQLite database, what its write-ahead log holds included."""
    with contextlib.closing(sqlite3.connect(source)) as db, contextlib.closing(sqlite3.connect(into)) as copy:
        db.backup(copy)


def dump(ledger_file: Path, reports: Path) -> dict[str, Any]:
    """Every access output of a ledger (a SQLite file, left unchanged), as this interpreter's package gives it."""
    from kafka_migration.ledger import Ledger
    from kafka_migration.reports.security import generate_access_report
    from kafka_migration.reports.signoff import sha256

    with tempfile.TemporaryDirectory(prefix="km-access-outputs-") as scratch_dir:
        scratch = Path(scratch_dir)
        copy = scratch / "ledger.db"
        _copy_sqlite(ledger_file, copy)  # building a report records its digest: never in the ledger compared
        url = f"sqlite:///{copy}"
        ledger = Ledger.open(url)
        _, checks = ledger.access_checks(limit=1000)
        sync_ids = [check.sync_id for check in checks]
        found: dict[str, Any] = {"sync_ids": sync_ids, "show": {}, "reports": {}}
        for sync_id in [*sync_ids, "no-such-sync"]:
            for output in ("json", "text"):
                found["show"][f"{sync_id} {output}"] = _cli(
                    ["access", "show", sync_id, "--ledger", url, "--output", output]
                )
        found["api"] = _api(url, reports, scratch, sync_ids)
        for check in checks:
            if check.dry_run:
                continue
            files = generate_access_report(ledger, check.sync_id, scratch / "reports")
            found["reports"][check.sync_id] = {
                "json": files.json.read_text(),
                "md": files.markdown.read_text(),
                "html": files.html.read_text(),
                "digest_is_the_recorded_one": sha256(files.json.read_bytes()) == check.report_sha256,
            }
    return found


def ledger_rows(ledger_file: Path) -> dict[str, list[dict[str, Any]]]:
    """Every row of the ledger's access tables, in the order written (its own database's view: no package code)."""
    with contextlib.closing(sqlite3.connect(ledger_file)) as db:
        db.row_factory = sqlite3.Row
        return {
            table: [dict(row) for row in db.execute(f"SELECT * FROM {table} ORDER BY rowid")] for table in ACCESS_TABLES
        }


# -- comparing -------------------------------------------------------------------------------------------------


def differences(before: object, after: object, where: str = "") -> list[str]:
    """Each place two JSON-like values differ, with a diff of texts that differ (empty: the same)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = [f"{where}/{key}: only before" for key in before if key not in after]
        found += [f"{where}/{key}: only after" for key in after if key not in before]
        for key in before:
            if key in after:
                found += differences(before[key], after[key], f"{where}/{key}")
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            line
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for line in differences(b, a, f"{where}[{i}]")
        ]
    if before == after and type(before) is type(after):
        return []
    if isinstance(before, str) and isinstance(after, str):
        diff = difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", lineterm="", n=1)
        return [f"{where}:\n" + "\n".join(list(diff)[:40])]
    return [f"{where}: {before!r} before, {after!r} after"]


_SYNC_ID = re.compile(r"access-(?:[a-z]+-)?\d{8}T\d{6}Z-[0-9a-f]+")
_TIMES = (
    re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)?"),
    re.compile(r"\d{8}T\d{6}Z"),
)
_SHA256 = re.compile(r"\b[0-9a-f]{64}\b")


def normalized(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with what differs between two runs of one sequence by nature replaced: ``names`` (cluster ids,
    folders) by their placeholders, then sync ids (numbered in order of appearance), times and digests."""
    text = json.dumps(value, sort_keys=False)
    for real, placeholder in sorted(names.items(), key=lambda item: -len(item[0])):
        text = text.replace(json.dumps(real)[1:-1], placeholder)
    ids: dict[str, str] = {}
    text = _SYNC_ID.sub(lambda m: ids.setdefault(m.group(0), f"<sync-{len(ids) + 1}>"), text)
    for pattern in _TIMES:
        text = pattern.sub("<time>", text)
    return json.loads(_SHA256.sub("<sha256>", text))


# -- running the syncs (this checkout's harness, the commit under test's package) ---------------------------------


def checkout(commit: str, into: Path) -> Path:
    """``kafka_migration/`` of ``commit``, extracted into ``into`` (the folder to put first on PYTHONPATH)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit, "kafka_migration"], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _env(tree: Path, state: Path) -> dict[str, str]:
    """The package of ``tree`` first on the path (each process runs in a folder without one of its own), this
    checkout's harness after it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    return {**env, "PYTHONPATH": f"{tree}{os.pathsep}{REPO}", "KAFKA_MIGRATION_STATE_DIR": str(state)}


def _admin(settings: Mapping[str, Any]) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({**settings, "log_level": 0})


def _binding(principal: str, kind: str, name: str, operation: str, permission: str) -> Any:
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    return AclBinding(
        ResourceType[kind],
        name,
        ResourcePatternType.LITERAL,
        principal,
        "*",
        AclOperation[operation],
        AclPermissionType[permission],
    )


def _until(what: str, done: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not seen within {seconds:.0f} s")
        time.sleep(0.5)


def _quotas(settings: Mapping[str, Any], scratch: Path, *args: str) -> str:
    from harness.kafka.tools import kafka_configs_sasl

    return kafka_configs_sasl(settings, scratch, *args)


class Pair:
    """A fresh ACL-enforcing pair (``python -m harness.kafka up --kind acl``) in ``folder``, stopped on exit; this
    checkout's harness seeds the source with the package of ``tree``."""

    def __init__(self, folder: Path, ports: str, tree: Path) -> None:
        self.folder, self.ports, self.env = folder, ports, _env(tree, folder / "state")

    def __enter__(self) -> Pair:
        up = [sys.executable, "-m", "harness.kafka", "up", "--kind", "acl", "--ports", self.ports]
        up += ["--dir", str(self.folder)]
        done = subprocess.run(up, cwd=self.folder.parent, env=self.env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the clusters did not start:\n{done.stdout}{done.stderr}")
        self.source = json.loads((self.folder / "source.json").read_text())
        self.target = json.loads((self.folder / "target.json").read_text())
        self.passwords = self.folder / "scram-passwords.json"
        return self

    def __exit__(self, *exc: object) -> None:
        down = [sys.executable, "-m", "harness.kafka", "down", "--dir", str(self.folder)]
        subprocess.run(down, cwd=self.folder.parent, env=self.env, capture_output=True, check=False, timeout=180)

    def cluster_id(self, settings: Mapping[str, Any]) -> str:
        admin = _admin(settings)
        return str(admin.describe_cluster(request_timeout=15).result(20).cluster_id)

    def make_target_topics(self) -> None:
        """The renamed topics a run would have created on the target (the probes produce to and consume them)."""
        from confluent_kafka.admin import NewTopic

        from harness.data.access import TOPICS

        topics = [NewTopic(RENAME.format(topic=t), partitions, 1) for t, (partitions, _) in TOPICS.items()]
        admin = _admin(self.target)  # kept until the answers come: a client destroyed cancels them
        for future in admin.create_topics(topics, operation_timeout=15).values():
            future.result(timeout=20)

    def plant_differences(self, scratch: Path) -> None:
        """On the target: bob denied READ on dc1.orders (a conflict, and a decision and a probe answered otherwise),
        a quota of a user the source does not limit, and bob's consumer rate changed (not this tool's value)."""
        deny = _binding("User:bob", "TOPIC", "dc1.orders", "READ", "DENY")
        admin = _admin(self.target)
        for future in admin.create_acls([deny], request_timeout=15).values():
            future.result(timeout=20)
        for entity, config in (("dave", "producer_byte_rate=5000"), ("bob", "consumer_byte_rate=1000")):
            _quotas(
                self.target,
                scratch,
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                entity,
                "--add-config",
                config,
            )
        _until("the planted quotas", lambda: "1000" in self._described(self.target, scratch, "bob"))

    def remove_from_source(self, scratch: Path) -> None:
        """On the source: bob's READ on group billing and carol's quota gone (``--remove-stale`` removes them)."""
        from confluent_kafka.admin import AclBindingFilter

        gone = _binding("User:bob", "GROUP", "billing", "READ", "ALLOW")
        exact = AclBindingFilter(
            gone.restype,
            gone.name,
            gone.resource_pattern_type,
            gone.principal,
            gone.host,
            gone.operation,
            gone.permission_type,
        )
        admin = _admin(self.source)
        for future in admin.delete_acls([exact], request_timeout=15).values():
            future.result(timeout=20)
        args = (
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "carol",
            "--delete-config",
            "controller_mutation_rate",
        )
        _quotas(self.source, scratch, *args)
        _until(
            "carol's quota gone",
            lambda: "controller_mutation_rate" not in self._described(self.source, scratch, "carol"),
        )

    @staticmethod
    def _described(settings: Mapping[str, Any], scratch: Path, user: str) -> str:
        return _quotas(settings, scratch, "--describe", "--entity-type", "users", "--entity-name", user)


def run_syncs(tree: Path, work: Path, ports: str, seeder: Path) -> dict[str, Any]:
    """The syncs of the module's docstring with the package of ``tree``, on a fresh pair (seeded with the package of
    ``seeder``); what each printed, the ledger's rows, the report files they wrote, and the placeholders of what
    differs by nature."""
    state, scratch = work / "state", work / "scratch"
    scratch.mkdir(parents=True)
    outputs: dict[str, Any] = {}
    with Pair(work / "clusters", ports, seeder) as pair:
        pair.make_target_topics()
        base = ["access", "sync", "--source-config", str(pair.folder / "source.json")]
        base += ["--target-config", str(pair.folder / "target.json"), "--super-user", "User:admin", "--rename", RENAME]
        known = ["--credentials", str(pair.passwords)]

        def sync(label: str, *args: str, output: str = "json") -> None:
            command = [sys.executable, "-m", "kafka_migration.cli", *base, *args, "--output", output]
            env = _env(tree, state)
            done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False, timeout=600)
            outputs[label] = {"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

        sync("dry run without passwords", "--dry-run")
        sync("dry run without passwords, text", "--dry-run", output="text")
        sync("dry run", "--dry-run", *known)
        sync("sync, text", *known, output="text")
        sync("again", *known)
        pair.plant_differences(scratch)
        sync("with differences planted", *known)
        sync("with differences planted, text", *known, output="text")
        pair.remove_from_source(scratch)
        sync("with stale bindings and quotas removed", *known, "--remove-stale")
        names = {
            pair.cluster_id(pair.source): "<source-cluster-id>",
            pair.cluster_id(pair.target): "<target-cluster-id>",
            str(work): "<work>",
        }
    reports = {str(path.relative_to(state)): path.read_text() for path in sorted((state / "reports").rglob("report.*"))}
    return {"syncs": outputs, "ledger": ledger_rows(state / "ledger.db"), "reports": reports, "names": names}


def read_ledger(tree: Path, work: Path, into: Path) -> dict[str, Any]:
    """``dump`` of ``work``'s ledger by the package of ``tree``, in a process of its own."""
    command = [sys.executable, "-m", "harness.access_outputs", "dump", str(work / "state"), str(into)]
    env = _env(tree, work / "dump-state")
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"reading {work}'s ledger with {tree} failed:\n{done.stdout}{done.stderr}")
    return json.loads(into.read_text())


def compare(before: str, after: str, work: Path, ports: str) -> list[str]:
    """Run both commits' syncs and reads (see the module); every difference found, described."""
    trees = {name: checkout(commit, work / name / "tree") for name, commit in (("before", before), ("after", after))}
    runs = {name: run_syncs(tree, work / name / "run", ports, trees["after"]) for name, tree in trees.items()}
    (work / "runs.json").write_text(json.dumps(runs, indent=1))
    found = []
    for ledger in trees:  # the same ledger read by both commits: byte for byte
        reads = {
            code: read_ledger(tree, work / ledger / "run", work / ledger / f"read-by-{code}.json")
            for code, tree in trees.items()
        }
        found += [f"{ledger}'s ledger read{line}" for line in differences(reads["before"], reads["after"])]
        unvouched = [
            sync_id for sync_id, files in reads["after"]["reports"].items() if not files["digest_is_the_recorded_one"]
        ]
        found += [
            f"{ledger}'s ledger: the report of {sync_id} built again is not the recorded one" for sync_id in unvouched
        ]
    one, other = (normalized({k: v for k, v in runs[n].items() if k != "names"}, runs[n]["names"]) for n in trees)
    found += [f"the syncs{line}" for line in differences(one, other)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.access_outputs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    both = sub.add_parser("compare", help="run the syncs with two commits and compare every output")
    both.add_argument("before", help="the commit before the change, e.g. c355c05")
    both.add_argument("after", help="the commit after it, e.g. HEAD")
    both.add_argument(
        "--work", help="where to keep the checkouts, ledgers and outputs (default: a new temporary folder)"
    )
    read = sub.add_parser("dump", help="(internal) every access output of STATE's ledger, as JSON into OUT")
    read.add_argument("state", type=Path)
    read.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        args.out.write_text(json.dumps(dump(args.state / "ledger.db", args.state / "reports"), indent=1))
        return 0
    from harness.servers.ports import free_port

    work = Path(args.work or tempfile.mkdtemp(prefix="km-access-outputs-"))
    found = compare(args.before, args.after, work, f"{free_port()},{free_port()}")
    print(f"Checkouts, ledgers and outputs: {work}")
    if found:
        print(f"{len(found)} difference(s):")
        print("\n".join(found))
        return 1
    runs = json.loads((work / "runs.json").read_text())["before"]
    syncs = len(runs["syncs"])
    rows = sum(len(rows) for rows in runs["ledger"].values())
    print(
        f"No difference: {syncs} syncs' output, {rows} ledger rows and {len(runs['reports'])} report files alike; each "
        "ledger read alike by both (access show JSON and text, reports built again, the console's API)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
