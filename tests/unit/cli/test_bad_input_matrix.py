"""The bad-input matrix: every CLI option of every subcommand and every DAG Param, given values it must refuse.

Each case must be refused before anything is created, written or recorded: exit 2 (CLI) or a
ConfigurationError (the Airflow plan task), ONE line naming the problem and the way out, and
the test's directory (state dir, ledger, reports, config files) byte for byte as before.
No case here needs a broker or Spark: the bootstrap addresses are never contacted. Cases that
need a cluster (same cluster id, names that collide on the target) are in
tests/integration/test_bad_input.py, the DAG path through dag.test() in tests/e2e.

Adding a subcommand: give a valid command line for it in ``BASE``; every option it shares with
others (``--source``, ``--ledger``, ``--master``...) then gets the rows of ``SHARED``. Put the
refusals particular to it in ``SPECIFIC``. ``test_every_option_has_a_case`` fails until every option
of every subcommand has at least one row (or is listed in ``NO_BAD_VALUE``).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafka_migration.cli import EXIT_BAD_INPUT, main
from kafka_migration.cli.parser import build_parser
from kafka_migration.exceptions import ConfigurationError
from tests.leaks import leaked

S, T = "127.0.0.1:1", "127.0.0.1:2"  # no broker: every case is refused before any Kafka request
ANSWERING = "{answering}"  # a port that accepts connections (a listener of the test's, not Kafka): reach passes
PARSER = functools.cache(build_parser)

# A valid command line per subcommand, for the shared rows below. A subcommand that is not on this
# branch yet is skipped until it is; one without an entry gets no shared rows (the coverage test says so).
BASE: dict[str, tuple[str, ...]] = {
    "run": ("run", "--source", S, "--target", T),
    "report": ("report", "run-1"),
    "history": ("history",),
    "offsets translate": ("offsets", "translate", "--topic", "a", "--partition", "0", "--offset", "1"),
    "groups sync": ("groups", "sync", "--source", S, "--target", T),
    "groups show": ("groups", "show", "sync-1"),
    "access sync": ("access", "sync", "--source", S, "--target", T),
    "access show": ("access", "show", "sync-1"),
    "checkpoints forget": ("checkpoints", "forget", "--topic", "a"),
    "cutover": ("cutover", "--source", S, "--target", T),
    "failback": ("failback", "--cutover", "c-1", "--source", S, "--target", T),
}


@dataclass(frozen=True)
class Case:
    """One refusal: ``argv`` ({tmp} is the test's directory), the option it exercises, and a fragment
    of the one line that must explain it. ``files``: files to create first (name -> text or bytes)."""

    option: str
    argv: tuple[str, ...]
    expect: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    ledger: bool = False  # an empty ledger exists in the state dir first

    @property
    def command(self) -> str:
        """The subcommand path the case exercises ('run', 'offsets translate', ...), read off the parser."""
        parser, words = PARSER(), []
        for word in self.argv:
            subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if not subcommands or word not in subcommands[0].choices:
                break
            parser = subcommands[0].choices[word]
            words.append(word)
        return " ".join(words)


@dataclass(frozen=True)
class Bad:
    """A bad value for an option, refused the same way by every subcommand that has the option."""

    args: tuple[str, ...]
    expect: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)


def bad(*args: str, expect: str, **files: str | bytes) -> Bad:
    return Bad(args, expect, {k.replace("_json", ".json"): v for k, v in files.items()})


def empty(option: str) -> Bad:
    return bad(option, "", expect=f"argument {option}: must not be empty")


def config_file(option: str) -> list[Bad]:
    return [
        bad(option, "{tmp}/none.json", expect="none.json does not exist"),
        bad(option, "{tmp}", expect="is a directory"),
        empty(option),
        bad(option, "{tmp}/c.json", expect="holds a JSON list", c_json='["bootstrap.servers", "b:9092"]'),
        bad(option, "{tmp}/c.json", expect="holds a JSON str", c_json='"b:9092"'),
        bad(option, "{tmp}/c.json", expect="holds a JSON int", c_json="42"),
        bad(option, "{tmp}/c.json", expect="not valid JSON (line 1", c_json="{'a': 1}"),
        bad(option, "{tmp}/c.json", expect="not valid JSON", c_json=""),
        bad(option, "{tmp}/c.json", expect="not UTF-8", c_json=b'{"a": "\xff"}'),
        bad(
            option,
            "{tmp}/c.json",
            expect='No such configuration property: "securty.protocol"',
            c_json='{"securty.protocol": "SSL"}',
        ),
        bad(
            option,
            "{tmp}/c.json",
            expect='Invalid value for configuration property "socket.timeout.ms"',
            c_json='{"socket.timeout.ms": "soon"}',
        ),
        # The promises under "nothing doubled" (kafka/settings.py PRODUCER_PROMISES): refused by name, never replaced.
        bad(
            option,
            "{tmp}/c.json",
            expect="setting acks='most' (allowed: all or -1;",
            c_json='{"acks": "most"}',
        ),
        bad(
            option,
            "{tmp}/c.json",
            expect="setting enable.idempotence=False (allowed: true; without idempotence",
            c_json='{"enable.idempotence": false}',
        ),
        bad(
            option,
            "{tmp}/c.json",
            expect="setting max.in.flight=6 (allowed: 1 to 5;",
            c_json='{"max.in.flight": 6}',
        ),
        bad(
            option,
            "{tmp}/c.json",
            expect='Invalid value "big" for configuration property "message.max.bytes"',
            c_json='{"message.max.bytes": "big"}',
        ),
        bad(
            option,
            "{tmp}/c.json",
            expect="setting 'sasl.jaas.config' must be a string, number or boolean",
            c_json='{"sasl.jaas.config": {"user": "u"}}',
        ),
        bad(
            option,
            "{tmp}/c.json",
            expect="No provider for SASL mechanism GSSAPI",
            c_json='{"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}',
        ),
        # ... and none of librdkafka's own SSL log lines on stderr:
        bad(
            option,
            "{tmp}/c.json",
            expect="ssl.key.location failed",
            c_json='{"security.protocol": "SSL", "ssl.key.location": "/no/such/key.pem"}',
        ),
    ]


def bootstrap(option: str) -> list[Bad]:
    return [
        empty(option),
        bad(option, "broker one:9092", expect="bootstrap address 'broker one:9092' is not HOST:PORT"),
        bad(option, "b:99999", expect="bootstrap address 'b:99999' is not HOST:PORT"),
        bad(option, "b:9092,", expect="bootstrap address '' is not HOST:PORT"),
        bad(option, "http://b/x", expect="bootstrap address 'http://b/x' is not HOST:PORT"),
    ]


def pattern(option: str, kind: str) -> list[Bad]:
    return [
        empty(option),
        bad(option, "orders(", expect=f"{kind} pattern 'orders(' is not a valid regular expression"),
        bad(option, "*", expect=f"{kind} pattern '*' is not a valid regular expression"),
        # A shell glob, the usual slip: the regular expression meant is named.
        bad(option, "*orders", expect="nothing to repeat at position 0. Did you mean '.*orders'?"),
    ]


def at_least_one(option: str) -> list[Bad]:
    return [
        bad(option, "0", expect=f"argument {option}: must be at least 1, got 0"),
        bad(option, "-3", expect=f"argument {option}: must be at least 1, got -3"),
        bad(option, "two", expect=f"argument {option}: must be a whole number, got 'two'"),
        bad(option, "1.5", expect=f"argument {option}: must be a whole number, got '1.5'"),
        bad(option, "", expect=f"argument {option}: must be a whole number, got ''"),
    ]


# Refusals that mean the same on every subcommand with the option: rows for a new subcommand come free.
SHARED: dict[str, list[Bad]] = {
    "--source": bootstrap("--source"),
    "--target": bootstrap("--target"),
    "--source-config": config_file("--source-config"),
    "--target-config": config_file("--target-config"),
    "--include": pattern("--include", "include"),
    "--exclude": pattern("--exclude", "exclude"),
    "--rename": [
        empty("--rename"),
        bad("--rename", "copy", expect="must contain the placeholder {topic} exactly once"),
        bad("--rename", "{topic}.{topic}", expect="must contain the placeholder {topic} exactly once"),
        bad("--rename", "{0}", expect="must contain the placeholder {topic} exactly once"),
        bad("--rename", "src.{topic", expect="Rename template 'src.{topic' is malformed"),
        bad("--rename", "{topic:.3}", expect="without a conversion ('!r') or format spec"),
        bad("--rename", "{topic!r}", expect="without a conversion ('!r') or format spec"),
        bad("--rename", "src/{topic}", expect="makes illegal topic names"),
        bad("--rename", "x" * 249 + "{topic}", expect="makes illegal topic names"),
    ],
    "--replication-factor": at_least_one("--replication-factor"),
    "--topics-per-job": at_least_one("--topics-per-job"),
    "--ledger": [
        empty("--ledger"),
        bad("--ledger", "mysql://u@h/db", expect="has the scheme 'mysql', which the ledger does not support"),
        bad("--ledger", "postgres://u:pw@h/db", expect="scheme 'postgres'; did you mean postgresql://?"),
        bad("--ledger", "ledger.db", expect="not a database URL"),
        bad("--ledger", "sqlite://", expect="names no database file"),
    ],
    "--state-dir": [empty("--state-dir")],
    "--output": [
        bad("--output", "yaml", expect="argument --output: invalid choice: 'yaml' (choose from 'text', 'json')"),
        bad("--output", "", expect="argument --output: invalid choice: ''"),
    ],
    "--report-dir": [empty("--report-dir"), bad("--report-dir", "{tmp}/file", expect="is not a directory", file="x")],
    "--master": [
        empty("--master"),
        bad("--master", "local[0]", expect="Spark master 'local[0]'"),
        bad("--master", "mesos://h:5050", expect="is not one spark-submit accepts"),
    ],
    "--spark-conf": [
        empty("--spark-conf"),
        bad("--spark-conf", "spark.executor.memory", expect="must look like KEY=VALUE"),
        bad("--spark-conf", "=2g", expect="must look like KEY=VALUE"),
        bad("--spark-conf", "executor.memory=2g", expect="only reads settings whose key starts with"),
    ],
    "--start": [
        empty("--start"),
        bad("--start", "yesterday", expect="--start 'yesterday' must be 'earliest', 'latest'"),
        bad("--start", "2026-13-45", expect="--start '2026-13-45' must be"),
        bad("--start", "1969-12-31T23:59:59.998Z", expect="is before 1970 or after 9999"),
        bad("--start", "-1", expect="--start '-1' must be"),
    ],
    "--limit": at_least_one("--limit"),
    "--topic": [empty("--topic")],
    "--target-topic": [empty("--target-topic")],
    "--source-cluster": [empty("--source-cluster")],
    "--target-cluster": [empty("--target-cluster")],
}


def run(
    option: str, *args: str, expect: str, without: str | None = None, answering: bool = False, **files: str | bytes
) -> Case:
    """A ``run`` case; ``answering``: both clusters accept connections, so a refusal found after the clusters'
    reach check (kafka/reach.py) is the one shown."""
    base = [ANSWERING if answering and a in (S, T) else a for a in BASE["run"]]
    if without is not None:
        i = base.index(without)
        del base[i : i + 2]
    return Case(option, (*base, *args), expect, files)


def cmd(option: str, *argv: str, expect: str, ledger: bool = False, **files: str | bytes) -> Case:
    return Case(option, argv, expect, files, ledger)


TRANSLATE = BASE["offsets translate"]
GROUPS = BASE["groups sync"]
ACCESS = BASE["access sync"]


def schema_cases(command: str) -> list[Case]:
    """The schema options of ``cutover`` and ``failback`` (as ``run``'s, below): refused before the ledger is read."""
    base = BASE[command]
    translate = ("--schema-ids", "translate", "--source-registry", "http://127.0.0.1:1")
    return [
        cmd("--schema-ids", *base, "--schema-ids", "keeps", expect="argument --schema-ids: invalid choice: 'keeps'"),
        cmd(
            "--unknown-schema-ids",
            *base,
            "--unknown-schema-ids",
            "pass",
            expect="--unknown-schema-ids pass applies to --schema-ids translate or keep, not off",
        ),
        cmd(
            "--source-registry",
            *base,
            "--source-registry",
            "http://127.0.0.1:1",
            expect="--source-registry given, but --schema-ids is off (the default)",
        ),
        cmd(
            "--target-registry",
            *base,
            *translate,
            "--target-registry",
            "ftp://127.0.0.1:2",
            expect="is not an http(s) URL with a host",
        ),
        cmd(
            "--source-registry-config",
            *base,
            "--schema-ids",
            "translate",
            "--source-registry-config",
            "{tmp}/r.json",
            "--target-registry",
            "http://127.0.0.1:2",
            expect="unknown settings ['password']",
            r_json='{"url": "http://127.0.0.1:1", "password": "x"}',
        ),
        cmd(
            "--target-registry-config",
            *base,
            *translate,
            "--target-registry-config",
            "{tmp}/r.json",
            expect="basic auth must be 'user:password'",
            r_json='{"url": "http://127.0.0.1:2", "basic.auth.user.info": "alice"}',
        ),
    ]


# Refusals particular to one subcommand.
SPECIFIC: list[Case] = [
    # --schema-ids and the registries (issue 48): refused before any cluster, registry or ledger is asked.
    run("--schema-ids", "--schema-ids", "rename", expect="argument --schema-ids: invalid choice: 'rename'"),
    run(
        "--unknown-schema-ids",
        "--unknown-schema-ids",
        "pass",
        expect="--unknown-schema-ids pass applies to --schema-ids translate or keep, not off",
    ),
    run("--unknown-schema-ids", "--unknown-schema-ids", "skip", expect="invalid choice: 'skip'"),
    run("--dry-run-census", "--dry-run-census", "half", expect="invalid choice: 'half'"),
    run(
        "--dry-run-census",
        "--dry-run",
        "--dry-run-census",
        "ends",
        expect="--dry-run-census ends applies to --schema-ids translate or keep, not off",
    ),
    run(
        "--dry-run-census",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1",
        "--target-registry",
        "http://127.0.0.1:2",
        "--dry-run-census",
        "full",
        expect="--dry-run-census full applies to a dry run: a run reads every planned record",
    ),
    run("--schema-ids", "--schema-ids", "translate", expect="needs the source schema registry: give --source-registry"),
    run(
        "--schema-ids",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1/apis/ccompat/v7",
        expect="needs the target schema registry: give --target-registry",
    ),
    run(
        "--source-registry",
        "--source-registry",
        "http://127.0.0.1:1",
        expect="--source-registry given, but --schema-ids is off (the default)",
    ),
    run("--source-registry", "--schema-ids", "keep", "--source-registry", "", expect="must not be empty"),
    run(
        "--source-registry",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://alice:pw@127.0.0.1:1",
        "--target-registry",
        "http://127.0.0.1:2",
        expect="--source-registry holds a password, which process arguments show",
    ),
    run(
        "--target-registry",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1",
        "--target-registry",
        "ftp://127.0.0.1:2",
        expect="is not an http(s) URL with a host",
    ),
    run(
        "--target-registry",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1/",
        "--target-registry",
        "http://127.0.0.1:1",
        expect="are both http://127.0.0.1:1/: with one registry for both clusters the ids are already right",
    ),
    run(
        "--target-registry",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1",
        "--target-registry",
        "http://127.0.0.1:9",
        expect="Schema registry http://127.0.0.1:1: list subjects: the registry did not answer",
        answering=True,
    ),
    run(
        "--source-registry-config",
        "--schema-ids",
        "translate",
        "--source-registry-config",
        "{tmp}/r.json",
        "--target-registry",
        "http://127.0.0.1:2",
        expect="unknown settings ['password']",
        r_json='{"url": "http://127.0.0.1:1", "password": "x"}',
    ),
    run(
        "--source-registry-config",
        "--schema-ids",
        "translate",
        "--source-registry-config",
        "{tmp}/missing.json",
        "--target-registry",
        "http://127.0.0.1:2",
        expect="cannot be read",
    ),
    run(
        "--target-registry-config",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1",
        "--target-registry-config",
        "{tmp}/r.json",
        expect="basic auth must be 'user:password'",
        r_json='{"url": "http://127.0.0.1:2", "basic.auth.user.info": "alice"}',
    ),
    run(
        "--target-registry-config",
        "--schema-ids",
        "translate",
        "--source-registry",
        "http://127.0.0.1:1",
        "--target-registry-config",
        "{tmp}/r.json",
        expect="holds a JSON list; it must hold one JSON object",
        r_json="[]",
    ),
    run("--source", expect="source cluster has no 'bootstrap.servers'", without="--source"),
    run("--target", expect="target cluster has no 'bootstrap.servers'", without="--target"),
    run("--state-dir", "--state-dir", "{tmp}/file", expect="is not a directory", file="x"),
    run(
        "--ledger",
        "--ledger",
        "sqlite:///{tmp}/file/ledger.db",
        expect="Cannot create the ledger's directory",
        answering=True,
        file="x",
    ),
    # A typo in the ledger's path: a new empty ledger there would take the run's own records on the target for
    # someone else's, and its refusal advise deleting them (issue 50).
    run(
        "--ledger",
        "--ledger",
        "sqlite:///{tmp}/nonexistent/dir/ledger.db",
        expect="given by --ledger is in a folder that does not exist",
        answering=True,
    ),
    run(
        "--ledger",
        "--ledger",
        "postgresql://postgres@127.0.0.1:1/km",
        expect="Cannot open the ledger at postgresql",
        answering=True,
    ),
    # Reached before Spark starts: a host that does not resolve, a port nothing listens on.
    run("--source", "--source", "no-such-host.invalid:9092", expect="bootstrap address no-such-host.invalid:9092 does"),
    run("--target", expect="No bootstrap broker of the source cluster answers at 127.0.0.1:1 (Connection refused)"),
    run(
        "--target",
        "--target",
        "PLAINTEXT://no-such-host.invalid",
        expect="target cluster's bootstrap address no-such-host.invalid:9092 does not resolve",
        answering=True,
    ),
    run("(usage)", "--no-such-option", expect="unrecognized arguments: --no-such-option"),
    run(
        "(usage)",
        "--inclde",
        "orders",
        expect="unrecognized arguments: --inclde orders; did you mean --include? (see 'kafka-migrate run --help')",
    ),
    cmd(
        "(usage)",
        *GROUPS,
        "--grop",
        "app",
        expect="--grop app; did you mean --group? (see 'kafka-migrate groups sync --help')",
    ),
    run("(usage)", "--dry-run=yes", expect="ignored explicit argument 'yes'"),
    # Every command that talks to clusters asks whether they answer first, in run's words (issue 50): no wait on
    # librdkafka's timeouts, no cutover id minted, nothing recorded.
    *(
        cmd(
            "--source",
            *BASE[command],
            expect="No bootstrap broker of the source cluster answers at 127.0.0.1:1 (Connection refused)",
            ledger=True,
        )
        for command in ("groups sync", "cutover", "access sync")
    ),
    cmd("(usage)", expect="the following arguments are required: command"),
    cmd("(usage)", "migrate", expect="invalid choice: 'migrate'"),
    cmd("(usage)", "rnu", expect="invalid choice: 'rnu' (choose from 'run', "),
    cmd("(usage)", "rnu", expect="; did you mean 'run'? (see 'kafka-migrate --help')"),
    cmd("(usage)", "groups", "snyc", expect="did you mean 'sync'?"),
    cmd("what", "report", expect="the following arguments are required: RUN_ID | verify FILE"),
    cmd("what", "report", "", expect="argument RUN_ID | verify FILE: must not be empty"),
    cmd("what", "report", "verify", expect="usage: kafka-migrate report verify FILE"),
    cmd("what", "report", "verify", "{tmp}/none.json", expect="none.json is not a readable file"),
    cmd("what", "report", "verify", "{tmp}", expect="is not a readable file"),
    cmd("what", "report", "a", "b", expect="usage: kafka-migrate report RUN_ID"),
    cmd("what", "report", "run-1", expect="There is no ledger at"),
    cmd("what", "report", "run-1", expect="The ledger has no run 'run-1'", ledger=True),
    cmd("--state-dir", "report", "run-1", "--state-dir", "{tmp}/elsewhere", expect="There is no ledger at"),
    cmd("--state-dir", "history", "--state-dir", "{tmp}/typo", expect="There is no ledger at"),
    cmd("--topic", "offsets", "translate", "--partition", "0", "--offset", "1", expect="required: --topic"),
    cmd("--topic", *TRANSLATE, expect="The ledger has no verified copy of a[0]", ledger=True),
    cmd("--partition", *TRANSLATE, "--partition", "-1", expect="argument --partition: must be at least 0"),
    cmd("--partition", *TRANSLATE, "--partition", "x", expect="argument --partition: must be a whole number"),
    cmd("--offset", *TRANSLATE, "--offset", "-5", expect="argument --offset: must be at least 0"),
    cmd("--offset", "offsets", "translate", "--topic", "a", "--partition", "0", expect="required: --offset"),
    cmd("--state-dir", *TRANSLATE, "--state-dir", "{tmp}/typo", expect="There is no ledger at"),
    cmd("(usage)", "offsets", expect="required: COMMAND (see 'kafka-migrate offsets --help')"),
    cmd("--group", *GROUPS, "--group", "", expect="argument --group: must not be empty"),
    cmd("--group", *GROUPS, "--group", "app-(", expect="pattern 'app-(' is not a valid regular expression"),
    cmd("--exclude-group", *GROUPS, "--exclude-group", "[a-", expect="pattern '[a-' is not a valid regular"),
    cmd("--exclude-group", *GROUPS, "--exclude-group", "", expect="argument --exclude-group: must not be empty"),
    cmd("--ledger", *GROUPS, expect="There is no ledger at"),
    cmd(
        "--principal-map",
        *ACCESS,
        "--principal-map",
        "{tmp}/none.json",
        expect="none.json cannot be read ([Errno 2] No such file or directory",
    ),
    cmd("--principal-map", *ACCESS, "--principal-map", "", expect="argument --principal-map: must not be empty"),
    cmd("--principal-map", *ACCESS, "--principal-map", "{tmp}/c.json", expect="is not valid JSON (line 1)", c_json="{"),
    cmd("--principal-map", *ACCESS, "--principal-map", "{tmp}/c.json", expect="holds a JSON list", c_json="[]"),
    cmd(
        "--principal-map",
        *ACCESS,
        "--principal-map",
        "{tmp}/c.json",
        expect="maps 'app': 'User:b', not a principal TYPE:NAME to another",
        c_json='{"app": "User:b"}',
    ),
    cmd("--super-user", *ACCESS, "--super-user", "admin", expect="--super-user 'admin' is not a principal TYPE:NAME"),
    cmd("--probe-users", *ACCESS, "--probe-users", "-1", expect="argument --probe-users: must be at least 0"),
    cmd(
        "--target-config",
        *ACCESS,
        "--target-config",
        "{tmp}/c.json",
        expect="The target cluster's setting sasl.oauthbearer.scope cannot be used for client quotas",
        c_json='{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u", '
        '"sasl.password": "p", "sasl.oauthbearer.scope": "x"}',
    ),
    cmd("--credentials", *ACCESS, "--credentials", "", expect="argument --credentials: must not be empty"),
    cmd("--credentials", *ACCESS, "--credentials", "{tmp}/c.json", expect="is not valid JSON (line 1)", c_json="{"),
    cmd(
        "--credentials",
        *ACCESS,
        "--credentials",
        "{tmp}/c.json",
        expect="user 'alice' needs a non-empty password",
        c_json='{"alice": 7}',
    ),
    cmd("sync_id", "access", "show", "", expect="argument SYNC_ID: must not be empty"),
    cmd("sync_id", "access", "show", "sync-1", expect="The ledger has no access sync 'sync-1'", ledger=True),
    cmd("sync_id", "groups", "show", "", expect="argument SYNC_ID: must not be empty"),
    cmd("sync_id", "groups", "show", "sync-1", expect="The ledger has no group sync 'sync-1'", ledger=True),
    cmd("(usage)", "groups", expect="required: COMMAND (see 'kafka-migrate groups --help')"),
    cmd("--quiet-seconds", *BASE["cutover"], "--quiet-seconds", "-1", expect="must be 0 or more seconds"),
    cmd("--quiet-seconds", *BASE["cutover"], "--quiet-seconds", "soon", expect="must be a number of seconds"),
    cmd("--quiet-seconds", *BASE["failback"], "--quiet-seconds", "nan", expect="must be 0 or more seconds"),
    cmd("--group", *BASE["cutover"], "--group", "app-(", expect="pattern 'app-(' is not a valid regular"),
    cmd("--exclude-group", *BASE["cutover"], "--exclude-group", "[", expect="pattern '[' is not a valid regular"),
    cmd("--cutover", "failback", "--cutover", "", expect="argument --cutover: must not be empty"),
    cmd("--cutover", "failback", expect="the following arguments are required: --cutover"),
    cmd("--cutover", *BASE["failback"], expect="There is no ledger at"),
    cmd("--cutover", "failback", "--cutover", "c-1", expect="no cutover 'c-1'", ledger=True),
    run("--lease-ttl", "--lease-ttl", "0", expect="--lease-ttl='0' must be at least 1 seconds"),
    run("--lease-ttl", "--lease-ttl", "ten", expect="--lease-ttl='ten' is not a number of seconds"),
    run("--lease-ttl", "--lease-ttl", "", expect="argument --lease-ttl: must not be empty"),
    cmd("--topic", *BASE["checkpoints forget"], expect="There is no ledger at"),
    cmd("--topic", *BASE["checkpoints forget"], expect="The ledger has no copy of source topic a", ledger=True),
    run("--executor-env", "--executor-env", "", expect="argument --executor-env: must not be empty"),
    run("--executor-env", "--executor-env", "{tmp}/none.tar.gz", expect="none.tar.gz does not exist"),
    run("--executor-env", "--executor-env", "{tmp}/env.txt", expect="env.txt", env_txt="x"),
    cmd("--output", "package-env", "--output", "", expect="argument --output: must not be empty"),
    # --output json changes nothing for bad input: exit 2, the one line on stderr, nothing on stdout.
    run("--include", "--include", "orders(", "--output", "json", expect="include pattern 'orders(' is not a valid"),
    cmd("--group", *GROUPS, "--group", "app-(", "--output", "json", expect="pattern 'app-(' is not a valid regular"),
    cmd("sync_id", "groups", "show", "s-2", "--output", "json", expect="no group sync 's-2'", ledger=True),
    cmd("--cutover", "failback", "--cutover", "c-2", "--output", "json", expect="no cutover 'c-2'", ledger=True),
    cmd("--quiet-seconds", *BASE["cutover"], "--quiet-seconds", "-2", "--output", "json", expect="0 or more seconds"),
    cmd("--output", "package-env", "--output", "{tmp}/env.rar", expect="must end with .tar.gz, .tgz or .zip"),
    cmd("--python", "package-env", "--python", "{tmp}/no-python", expect="no such interpreter"),
    cmd("--project", "package-env", "--project", "{tmp}", expect="is neither a wheel nor a source tree"),
    *schema_cases("cutover"),
    *schema_cases("failback"),
]


def _shared_cases() -> list[Case]:
    present = set(_options(PARSER()))
    return [
        Case(option, (*base, *row.args), row.expect, row.files)
        for command, base in BASE.items()
        for option, rows in SHARED.items()
        if (command, option) in present
        for row in rows
    ]


def _options(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """(subcommand, option) for every option and positional of every subcommand, at any depth."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*words, name))
        elif words and not isinstance(action, argparse._HelpAction):
            yield " ".join(words), (max(action.option_strings, key=len) if action.option_strings else action.dest)


CLI_CASES: list[Case] = _shared_cases() + SPECIFIC

# Options whose every value is valid: flags without a value, and --help / --version.
NO_BAD_VALUE = {
    "--dry-run",
    "--remove-stale",
    "--show-plan",
    "--allow-gaps",
    "--accept-target-retention",
    "--accept-target-loss",
    "--allow-rewind",
    "--cutovers",
    "--verbose",
    "--help",
    "--version",
}


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file and directory under root with its bytes. SQLite's shared-memory index and an empty
    write-ahead log are left out: opening a ledger to read it makes them, and they hold no data; a
    file that vanishes while being listed (SQLite removing its log on close) is left out too."""
    tree: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        try:
            if p.name.endswith("-shm") or (p.name.endswith("-wal") and p.stat().st_size == 0):
                continue
            tree[str(p.relative_to(root))] = p.read_bytes() if p.is_file() else None
        except FileNotFoundError:
            continue
    return tree


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's directory is the default state dir; no ledger or master from the environment."""
    monkeypatch.setenv("KAFKA_MIGRATION_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("KAFKA_MIGRATION_LEDGER_URL", raising=False)
    monkeypatch.delenv("KAFKA_MIGRATION_SPARK_MASTER", raising=False)
    monkeypatch.setattr(logging, "basicConfig", lambda **_: None)  # main() must not reconfigure pytest's logging
    yield tmp_path


@pytest.fixture(scope="module")
def answering() -> Iterator[str]:
    """host:port of a listening socket: it accepts TCP connections (what kafka/reach.py checks) and never answers."""
    with socket.create_server(("127.0.0.1", 0), backlog=64) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{text}"
    return lines[0]


@pytest.mark.parametrize("case", CLI_CASES, ids=[f"{c.command}:{c.option}:{' '.join(c.argv)[-60:]}" for c in CLI_CASES])
def test_cli_refuses_before_writing(
    case: Case, isolated: Path, answering: str, capfd: pytest.CaptureFixture[str]
) -> None:
    for name, content in case.files.items():
        path = isolated / name.replace("_json", ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if case.ledger:
        from kafka_migration.ledger import Ledger

        Ledger.open(f"sqlite:///{isolated / 'state' / 'ledger.db'}").engine.dispose()
    before = _tree(isolated)
    argv = [a.replace("{tmp}", str(isolated)).replace(ANSWERING, answering) for a in case.argv]

    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse usage errors leave main() through SystemExit
        code = exit_.code  # type: ignore[assignment]

    out, err = capfd.readouterr()  # file-descriptor level: librdkafka writes to stderr itself
    assert code == EXIT_BAD_INPUT, f"exit {code}\nstdout: {out}\nstderr: {err}"
    line = _one_line(err)
    assert line.startswith("error: ") and case.expect in line, line
    assert "Traceback" not in err and out == ""
    assert _tree(isolated) == before, "something was written"


def test_a_bad_census_budget_is_refused_before_writing(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """$KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS, read by a dry run that takes a census (not by one that takes none)."""
    monkeypatch.setenv("KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS", "lots")
    registries = ("--source-registry", "http://127.0.0.1:1", "--target-registry", "http://127.0.0.1:2")
    before = _tree(isolated)
    assert main([*BASE["run"], "--dry-run", "--schema-ids", "translate", *registries]) == EXIT_BAD_INPUT
    out, err = capfd.readouterr()
    assert "$KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS must be a whole number of offsets" in _one_line(err) and out == ""
    assert _tree(isolated) == before, "something was written"


def test_no_secret_in_a_refusal(isolated: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """librdkafka quotes the values it refuses; a secret's value is masked in the one line."""
    (isolated / "s.json").write_text(json.dumps({"sasl.password": "hunter2", "security.protocol": "hunter2"}))
    assert main([*BASE["run"], "--source-config", str(isolated / "s.json")]) == EXIT_BAD_INPUT
    out, err = capfd.readouterr()
    assert 'Invalid value "***" for configuration property "security.protocol"' in _one_line(err)
    assert leaked("hunter2", out, err) == []


def test_every_option_has_a_case() -> None:
    covered = {(c.command, c.option) for c in CLI_CASES}
    missing = [
        f"{command} {option}"
        for command, option in _options(PARSER())
        if option not in NO_BAD_VALUE and (command, option) not in covered
    ]
    assert not missing, f"options without a bad-input case in CLI_CASES: {missing}"


# -- DAG Params ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamCase:
    """A run configuration the plan task must refuse; ``schema``: the trigger form refuses it too."""

    param: str
    value: Any
    expect: str
    schema: bool


PARAM_CASES: list[ParamCase] = [
    ParamCase("include", "orders(", "include pattern 'orders(' is not a valid regular expression", True),
    ParamCase("include", "", "include pattern is empty", True),
    ParamCase("include", "   ", "include pattern is empty", False),
    ParamCase("include", ["a"], "Param 'include' must be a string, got list", True),
    ParamCase("exclude", "[a-", "exclude pattern '[a-' is not a valid regular expression", True),
    ParamCase("exclude", 5, "Param 'exclude' must be a string, got int", True),
    ParamCase("rename", "copy", "must contain the placeholder {topic}", True),
    ParamCase("rename", "a/{topic}", "makes illegal topic names", True),
    ParamCase("rename", "{topic}-{topic}", "must contain the placeholder {topic} exactly once", True),
    ParamCase("rename", "x" * 249 + "{topic}", "makes illegal topic names", False),
    ParamCase("dry_run", "false", "Param 'dry_run' must be true or false", True),
    ParamCase("dry_run", 0, "Param 'dry_run' must be true or false", True),
    ParamCase("allow_gaps", "no", "Param 'allow_gaps' must be true or false", True),
    ParamCase("accept_target_retention", "yes", "Param 'accept_target_retention' must be true or false", True),
    ParamCase("accept_target_loss", 1, "Param 'accept_target_loss' must be true or false", True),
    ParamCase("start", "soon", "--start 'soon' must be", True),
    ParamCase("start", "2026-02-30", "--start '2026-02-30' must be", False),
    ParamCase("start", "1960-01-01", "is before 1970 or after 9999", False),
    ParamCase("start", 17, "Param 'start' must be a string", True),
    ParamCase("replication_factor", 0, "replication factor must be at least 1, got 0", True),
    ParamCase("replication_factor", -1, "replication factor must be at least 1, got -1", True),
    ParamCase("replication_factor", "three", "Param 'replication_factor' must be a whole number", True),
    ParamCase("replication_factor", True, "Param 'replication_factor' must be a whole number", True),
    ParamCase("replication_factor", 1.5, "Param 'replication_factor' must be a whole number", True),
    ParamCase("topics_per_job", 0, "topics per job must be at least 1, got 0", True),
    ParamCase("topics_per_job", "many", "Param 'topics_per_job' must be a whole number", True),
    ParamCase(
        "source_conn_id", "no_such_conn", "connection 'no_such_conn' for the source cluster does not exist", False
    ),
    ParamCase("source_conn_id", "", "Param 'source_conn_id' must name an Airflow connection", True),
    ParamCase("source_conn_id", "km_list_extra", "holds a JSON list", False),
    ParamCase("source_conn_id", "km_bad_json", "is not valid JSON", False),
    ParamCase("source_conn_id", "km_unknown_key", 'No such configuration property: "fetch.max.wait.ms"', False),
    ParamCase("source_conn_id", "km_bad_bootstrap", "bootstrap address 'b 1:9092' is not HOST:PORT", False),
    ParamCase(
        "target_conn_id", "no_such_conn", "connection 'no_such_conn' for the target cluster does not exist", False
    ),
    ParamCase("target_conn_id", 7, "Param 'target_conn_id' must name an Airflow connection", True),
    ParamCase("target_conn_id", "km_no_bootstrap", "target cluster has no 'bootstrap.servers'", False),
    ParamCase("(undeclared)", "x", "Unknown Param '(undeclared)'", False),
    ParamCase("sync_groups", "true", "Param 'sync_groups' must be true or false", True),
    ParamCase("groups", "app-(", "pattern 'app-(' is not a valid regular expression", True),
    ParamCase("groups", 3, "Param 'groups' must be a string, got int", True),
    ParamCase("exclude_groups", "[a-", "pattern '[a-' is not a valid regular expression", True),
    ParamCase("schema_ids", "sometimes", "must be one of off, keep, translate, got 'sometimes'", True),
    ParamCase("schema_ids", 1, "Param 'schema_ids' must be one of off, keep, translate, got 1", True),
    ParamCase("unknown_schema_ids", "maybe", "Param 'unknown_schema_ids' must be refuse or pass, got 'maybe'", True),
    ParamCase(
        "unknown_schema_ids",
        "pass",
        "unknown_schema_ids is pass, which applies to schema_ids translate, not off",
        False,
    ),
    ParamCase("source_registry_conn_id", "", "Param 'source_registry_conn_id' must name an Airflow connection", True),
    ParamCase("target_registry_conn_id", 7, "Param 'target_registry_conn_id' must name an Airflow connection", True),
]

CONNECTIONS = {  # Airflow connections from the environment (AIRFLOW_CONN_<ID>), as a deployment defines them
    "kafka_source": {"conn_type": "kafka", "extra": {"bootstrap.servers": S}},
    "kafka_target": {"conn_type": "kafka", "extra": {"bootstrap.servers": T}},
    "km_list_extra": {"conn_type": "kafka", "extra": json.dumps(["bootstrap.servers", S])},
    "km_bad_json": {"conn_type": "kafka", "extra": "{bootstrap.servers: b:9092}"},
    "km_unknown_key": {"conn_type": "kafka", "extra": {"bootstrap.servers": S, "fetch.max.wait.ms": 10}},
    "km_bad_bootstrap": {"conn_type": "kafka", "extra": {"bootstrap.servers": "b 1:9092"}},
    "km_no_bootstrap": {"conn_type": "kafka", "extra": {"security.protocol": "SSL"}},
    "schema_registry_source": {"conn_type": "http", "host": "http://127.0.0.1:1/apis/ccompat/v7"},
    "schema_registry_target": {"conn_type": "http", "host": "http://127.0.0.1:2/apis/ccompat/v7"},
    "km_reg_no_host": {"conn_type": "http"},
    "km_reg_no_scheme": {"conn_type": "generic", "host": "registry"},
    "km_reg_password_only": {"conn_type": "http", "host": "http://r:8081", "password": "planted-pw"},
    "km_reg_unknown_extra": {"conn_type": "http", "host": "http://r:8081", "extra": {"basic.auth.password": "x"}},
    "km_reg_bad_json": {"conn_type": "http", "host": "http://r:8081", "extra": "{url: r}"},
    "km_reg_two_urls": {"conn_type": "http", "host": "http://r:8081", "extra": {"url": "http://q:8081"}},
    "km_reg_two_users": {
        "conn_type": "http",
        "host": "http://r:8081",
        "login": "u",
        "password": "planted-pw",
        "extra": {"basic.auth.user.info": "u:planted-pw"},
    },
    "km_reg_half_tls": {"conn_type": "http", "host": "https://r:8081", "extra": {"ssl.certificate.location": "/c"}},
    "km_reg_same": {"conn_type": "http", "host": "127.0.0.1", "port": 1, "schema": "apis/ccompat/v7"},
}


@pytest.fixture
def airflow_env(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for conn_id, conn in CONNECTIONS.items():
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))
    monkeypatch.setenv("KAFKA_MIGRATION_LEDGER_URL", f"sqlite:///{isolated / 'state' / 'ledger.db'}")
    return isolated


def _params() -> dict[str, Any]:
    from kafka_migration.airflow.dag_factory import migration_params

    return migration_params()


@pytest.mark.parametrize("case", PARAM_CASES, ids=[f"{c.param}={c.value!r}"[:60] for c in PARAM_CASES])
def test_plan_task_refuses_before_writing(case: ParamCase, airflow_env: Path) -> None:
    from kafka_migration.airflow.run_tasks import plan_run

    declared = _params()
    params = {name: param.value for name, param in declared.items()} | {case.param: case.value}
    before = _tree(airflow_env)
    with pytest.raises(ConfigurationError) as refused:
        plan_run(params, "manual__2026-11-23", declared=declared)
    assert case.expect in _one_line(str(refused.value))
    assert _tree(airflow_env) == before, "something was written"


@pytest.mark.parametrize(
    ("variable", "value", "expect"),
    [
        ("KAFKA_MIGRATION_LEDGER_URL", "mysql://u@h/db", "has the scheme 'mysql', which the ledger does not support"),
        ("KAFKA_MIGRATION_LEDGER_URL", "sqlite://", "names no database file"),
        ("AIRFLOW_CONN_KAFKA_MIGRATION_LEDGER", '{"conn_type": "sqlite"}', "(type sqlite) names no database file"),
        ("AIRFLOW_CONN_KAFKA_MIGRATION_LEDGER", '{"conn_type": "mysql", "host": "h"}', "the scheme 'mysql'"),
        ("KAFKA_MIGRATION_STATE_DIR", "{tmp}/file/state", "is not a directory"),
        ("KAFKA_MIGRATION_REPORTS_DIR", "{tmp}/file", "The report directory ([kafka_migration] reports_dir)"),
    ],
)
def test_plan_task_refuses_bad_deployment_settings(
    variable: str, value: str, expect: str, airflow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the ledger, run files and reports go comes from the deployment, not the Params: checked too."""
    from kafka_migration.airflow.run_tasks import plan_run

    (airflow_env / "file").write_text("x")
    monkeypatch.setenv(variable, value.replace("{tmp}", str(airflow_env)))
    if variable == "AIRFLOW_CONN_KAFKA_MIGRATION_LEDGER":
        monkeypatch.delenv("KAFKA_MIGRATION_LEDGER_URL")
    declared = _params()
    before = _tree(airflow_env)
    with pytest.raises(ConfigurationError) as refused:
        plan_run({name: param.value for name, param in declared.items()}, "manual__1", declared=declared)
    assert expect in _one_line(str(refused.value))
    assert _tree(airflow_env) == before, "something was written"


def test_plan_task_refuses_a_bad_census_budget_when_it_takes_a_census(
    airflow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[kafka_migration] census_local_records`` is read with schema_ids keep or translate, before any cluster or
    registry is asked."""
    from kafka_migration.airflow.run_tasks import plan_run

    monkeypatch.setenv("AIRFLOW__KAFKA_MIGRATION__CENSUS_LOCAL_RECORDS", "-5")
    declared = _params()
    params = {name: param.value for name, param in declared.items()} | {"schema_ids": "translate"}
    before = _tree(airflow_env)
    with pytest.raises(ConfigurationError) as refused:
        plan_run(params, "manual__1", declared=declared)
    assert "[kafka_migration] census_local_records must be a whole number of offsets" in _one_line(str(refused.value))
    assert _tree(airflow_env) == before, "something was written"


@pytest.mark.parametrize("case", PARAM_CASES, ids=[f"{c.param}={c.value!r}"[:60] for c in PARAM_CASES])
def test_param_schema(case: ParamCase) -> None:
    """The trigger form (JSON Schema of each Param) refuses what it can; the plan task refuses the rest."""
    from airflow.sdk.definitions.param import ParamValidationError

    params = _params()
    if case.param not in params:
        return  # undeclared: only the plan task can refuse it
    if case.schema:
        with pytest.raises(ParamValidationError):
            params[case.param].resolve(case.value)
    else:
        assert params[case.param].resolve(case.value) == case.value


# Param schema_ids translate (or keep) with a registry connection the plan task must refuse: (Params, fragment).
REGISTRY_CASES: list[tuple[dict[str, Any], str]] = [
    ({"source_registry_conn_id": "no_such_registry"}, "connection 'no_such_registry' for the source schema registry"),
    ({"target_registry_conn_id": "km_reg_no_host"}, "of the target schema registry has no host"),
    ({"source_registry_conn_id": "km_reg_no_scheme"}, "host 'registry' has no scheme"),
    ({"source_registry_conn_id": "km_reg_password_only"}, "has a password but no login"),
    ({"source_registry_conn_id": "km_reg_unknown_extra"}, "unknown settings ['basic.auth.password']"),
    ({"source_registry_conn_id": "km_reg_bad_json"}, "its extra field is not valid JSON"),
    ({"source_registry_conn_id": "km_reg_two_urls"}, "as host or as url in the extra, not both"),
    ({"source_registry_conn_id": "km_reg_two_users"}, "as login and password or as basic.auth.user.info"),
    ({"target_registry_conn_id": "km_reg_half_tls"}, "needs both its cert and key files"),
    ({"target_registry_conn_id": "km_reg_same"}, "both name the schema registry http://127.0.0.1:1/apis/ccompat/v7"),
    ({"schema_ids": "keep", "unknown_schema_ids": "pass"}, "applies to schema_ids translate, not keep"),
]


@pytest.mark.parametrize(("params", "expect"), REGISTRY_CASES, ids=[e[:40] for _, e in REGISTRY_CASES])
def test_plan_task_refuses_a_bad_registry_connection_before_writing(
    params: dict[str, Any], expect: str, airflow_env: Path
) -> None:
    """Param schema_ids translate reads both registries' connections (SchemaRegistryHook) before anything is
    reached or written: a missing or malformed one is one line naming the connection and the way out, without its
    password."""
    from kafka_migration.airflow.run_tasks import plan_run

    declared = _params()
    params = {name: param.value for name, param in declared.items()} | {"schema_ids": "translate"} | params
    before = _tree(airflow_env)
    with pytest.raises(ConfigurationError) as refused:
        plan_run(params, "manual__2026-11-23", declared=declared)
    line = _one_line(str(refused.value))
    assert expect in line and leaked("planted-pw", line) == []
    assert _tree(airflow_env) == before, "something was written"


def test_every_param_has_a_case() -> None:
    assert set(_params()) <= {c.param for c in PARAM_CASES}


def test_invalid_nightly_defaults_are_an_import_error_that_names_the_value() -> None:
    from kafka_migration.airflow.dag_factory import migration_params

    with pytest.raises(ConfigurationError, match=r"include pattern 'a\(' .* nightly_include"):
        migration_params(include="a(")
