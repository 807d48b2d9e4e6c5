"""The bad-input matrix: every CLI option of every subcommand and every DAG Param, given values it must refuse.

Each case must be refused before anything is created, written or recorded: exit 2 (CLI) or a
ConfigurationError (the Airflow plan task), ONE line naming the problem and the way out, and
the test's directory (state dir, ledger, reports, config files) byte for byte as before.
No case here needs a broker or Spark: the bootstrap addresses are never contacted. Cases that
need a cluster (same cluster id, names that collide on the target) are in
tests/integration/test_bad_input.py, the DAG path through dag.test() in tests/e2e.

Adding a subcommand: add its entry to ``CLI_CASES`` (one row per refusal). ``test_every_option_has_a_case``
fails until every option of every subcommand has at least one row (or is listed in ``NO_BAD_VALUE``).
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafka_migration.cli import EXIT_BAD_INPUT, _parser, main
from kafka_migration.exceptions import ConfigurationError

S, T = "127.0.0.1:1", "127.0.0.1:2"  # never contacted: every case is refused first
RUN = ("run", "--source", S, "--target", T)


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
        parser, words = _parser(), []
        for word in self.argv:
            subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if not subcommands or word not in subcommands[0].choices:
                break
            parser = subcommands[0].choices[word]
            words.append(word)
        return " ".join(words)


def run(option: str, *args: str, expect: str, without: str | None = None, **files: str | bytes) -> Case:
    base = list(RUN)
    if without is not None:
        i = base.index(without)
        del base[i : i + 2]
    return Case(option, (*base, *args), expect, files)


def cmd(option: str, *argv: str, expect: str, ledger: bool = False, **files: str | bytes) -> Case:
    return Case(option, argv, expect, files, ledger)


NOT_OBJECT = '["bootstrap.servers", "b:9092"]'

CLI_CASES: list[Case] = [
    # -- run: clusters ------------------------------------------------------------------------
    run("--source", expect="source cluster has no 'bootstrap.servers'", without="--source"),
    run("--source", "--source", "", expect="argument --source: must not be empty"),
    run("--source", "--source", "broker one:9092", expect="bootstrap address 'broker one:9092' is not HOST:PORT"),
    run("--source", "--source", "b:99999", expect="bootstrap address 'b:99999' is not HOST:PORT"),
    run("--source", "--source", "b:9092,", expect="bootstrap address '' is not HOST:PORT"),
    run("--target", expect="target cluster has no 'bootstrap.servers'", without="--target"),
    run("--target", "--target", " ", expect="argument --target: must not be empty"),
    run("--target", "--target", "http://b/x", expect="bootstrap address 'http://b/x' is not HOST:PORT"),
    run("--source-config", "--source-config", "{tmp}/none.json", expect="none.json does not exist"),
    run("--source-config", "--source-config", "{tmp}", expect="is a directory"),
    run("--source-config", "--source-config", "", expect="argument --source-config: must not be empty"),
    run("--source-config", "--source-config", "{tmp}/s.json", expect="holds a JSON list", s_json=NOT_OBJECT),
    run("--source-config", "--source-config", "{tmp}/s.json", expect="holds a JSON str", s_json='"b:9092"'),
    run("--source-config", "--source-config", "{tmp}/s.json", expect="not valid JSON (line 1", s_json="{'a': 1}"),
    run("--source-config", "--source-config", "{tmp}/s.json", expect="not valid JSON", s_json=""),
    run("--source-config", "--source-config", "{tmp}/s.json", expect="not UTF-8", s_json=b'{"a": "\xff"}'),
    run(
        "--source-config",
        "--source-config",
        "{tmp}/s.json",
        expect='No such configuration property: "securty.protocol"',
        s_json='{"securty.protocol": "SSL"}',
    ),
    run(
        "--source-config",
        "--source-config",
        "{tmp}/s.json",
        expect="setting 'sasl.jaas.config' must be a string, number or boolean",
        s_json='{"sasl.jaas.config": {"user": "u"}}',
    ),
    run(
        "--source-config",
        "--source-config",
        "{tmp}/s.json",
        expect="No provider for SASL mechanism GSSAPI",
        s_json='{"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}',
    ),
    run("--target-config", "--target-config", "{tmp}/t.json", expect="holds a JSON int", t_json="42"),
    run(
        "--target-config",
        "--target-config",
        "{tmp}/t.json",
        expect="ssl.key.location failed",  # and nothing of librdkafka's own SSL log lines on stderr
        t_json='{"security.protocol": "SSL", "ssl.key.location": "/no/such/key.pem"}',
    ),
    run(
        "--target-config",
        "--target-config",
        "{tmp}/t.json",
        expect='Invalid value for configuration property "request.required.acks"',
        t_json='{"acks": "most"}',
    ),
    run(
        "--target-config",
        "--target-config",
        "{tmp}/t.json",
        expect='Invalid value "big" for configuration property "message.max.bytes"',
        t_json='{"message.max.bytes": "big"}',
    ),
    run("--target-config", "--target-config", "{tmp}/nope/t.json", expect="t.json does not exist"),
    # -- run: what to copy ---------------------------------------------------------------------
    run("--include", "--include", "orders(", expect="include pattern 'orders(' is not a valid regular expression"),
    run("--include", "--include", "", expect="argument --include: must not be empty"),
    run("--include", "--include", "*", expect="include pattern '*' is not a valid regular expression"),
    run("--exclude", "--exclude", "[a-", expect="exclude pattern '[a-' is not a valid regular expression"),
    run("--exclude", "--exclude", "", expect="argument --exclude: must not be empty"),
    run("--rename", "--rename", "copy", expect="must contain the placeholder {topic} exactly once"),
    run("--rename", "--rename", "{topic}.{topic}", expect="must contain the placeholder {topic} exactly once"),
    run("--rename", "--rename", "src.{topic", expect="Rename template 'src.{topic' is malformed"),
    run("--rename", "--rename", "{topic:.3}", expect="without a conversion ('!r') or format spec"),
    run("--rename", "--rename", "{topic!r}", expect="without a conversion ('!r') or format spec"),
    run("--rename", "--rename", "src/{topic}", expect="makes illegal topic names"),
    run("--rename", "--rename", "{0}", expect="must contain the placeholder {topic} exactly once"),
    run("--rename", "--rename", "x" * 249 + "{topic}", expect="makes illegal topic names"),
    run("--rename", "--rename", "", expect="argument --rename: must not be empty"),
    run("--start", "--start", "yesterday", expect="--start 'yesterday' must be 'earliest', 'latest'"),
    run("--start", "--start", "2026-13-45", expect="--start '2026-13-45' must be"),
    run("--start", "--start", "1969-12-31T23:59:59.998Z", expect="is before 1970 or after 9999"),
    run("--start", "--start", "-1", expect="--start '-1' must be"),
    run("--start", "--start", "", expect="argument --start: must not be empty"),
    # -- run: numbers ---------------------------------------------------------------------------
    run("--replication-factor", "--replication-factor", "0", expect="--replication-factor: must be at least 1"),
    run("--replication-factor", "--replication-factor", "-3", expect="--replication-factor: must be at least 1"),
    run("--replication-factor", "--replication-factor", "two", expect="must be a whole number, got 'two'"),
    run("--replication-factor", "--replication-factor", "1.5", expect="must be a whole number, got '1.5'"),
    run("--topics-per-job", "--topics-per-job", "0", expect="--topics-per-job: must be at least 1, got 0"),
    run("--topics-per-job", "--topics-per-job", "", expect="--topics-per-job: must be a whole number"),
    # -- run: where things go -------------------------------------------------------------------
    run("--state-dir", "--state-dir", "{tmp}/file", expect="is not a directory", file="x"),
    run("--state-dir", "--state-dir", "", expect="argument --state-dir: must not be empty"),
    run("--report-dir", "--report-dir", "{tmp}/file/reports", expect="is not a directory", file="x"),
    run("--report-dir", "--report-dir", "", expect="argument --report-dir: must not be empty"),
    run("--ledger", "--ledger", "mysql://u@h/db", expect="has the scheme 'mysql', which the ledger does not support"),
    run("--ledger", "--ledger", "postgres://u:pw@h/db", expect="scheme 'postgres'"),
    run("--ledger", "--ledger", "ledger.db", expect="not a database URL"),
    run("--ledger", "--ledger", "sqlite://", expect="names no database file"),
    run("--ledger", "--ledger", "", expect="argument --ledger: must not be empty"),
    run("--ledger", "--ledger", "postgresql://postgres@127.0.0.1:1/km", expect="Cannot open the ledger at postgresql"),
    run(
        "--ledger",
        "--ledger",
        "sqlite:///{tmp}/file/ledger.db",
        expect="Cannot create the ledger's directory",
        file="x",
    ),
    # -- run: Spark -----------------------------------------------------------------------------
    run("--master", "--master", "local[0]", expect="Spark master 'local[0]'"),
    run("--master", "--master", "mesos://h:5050", expect="is not one spark-submit accepts"),
    run("--master", "--master", "", expect="argument --master: must not be empty"),
    run("--spark-conf", "--spark-conf", "spark.executor.memory", expect="must look like KEY=VALUE"),
    run("--spark-conf", "--spark-conf", "=2g", expect="must look like KEY=VALUE"),
    run("--spark-conf", "--spark-conf", "executor.memory=2g", expect="only reads settings whose key starts with"),
    run("--spark-conf", "--spark-conf", "", expect="argument --spark-conf: must not be empty"),
    # -- run: usage -----------------------------------------------------------------------------
    run("(usage)", "--no-such-option", expect="unrecognized arguments: --no-such-option"),
    run("(usage)", "--dry-run=yes", expect="ignored explicit argument 'yes'"),
    cmd("(usage)", expect="the following arguments are required: command"),
    cmd("(usage)", "migrate", expect="invalid choice: 'migrate'"),
    # -- report ----------------------------------------------------------------------------------
    cmd("what", "report", expect="the following arguments are required: RUN_ID | verify FILE"),
    cmd("what", "report", "", expect="argument RUN_ID | verify FILE: must not be empty"),
    cmd("what", "report", "verify", expect="usage: kafka-migrate report verify FILE"),
    cmd("what", "report", "verify", "{tmp}/none.json", expect="none.json is not a readable file"),
    cmd("what", "report", "verify", "{tmp}", expect="is not a readable file"),
    cmd("what", "report", "a", "b", expect="usage: kafka-migrate report RUN_ID"),
    cmd("what", "report", "run-1", expect="There is no ledger at"),
    cmd("what", "report", "run-1", expect="The ledger has no run 'run-1'", ledger=True),
    cmd("--ledger", "report", "run-1", "--ledger", "oracle://h/db", expect="scheme 'oracle'"),
    cmd("--ledger", "report", "run-1", "--ledger", "", expect="argument --ledger: must not be empty"),
    cmd("--state-dir", "report", "run-1", "--state-dir", "{tmp}/elsewhere", expect="There is no ledger at"),
    cmd("--report-dir", "report", "run-1", "--report-dir", "{tmp}/file", expect="is not a directory", file="x"),
    # -- history ---------------------------------------------------------------------------------
    cmd("--limit", "history", "--limit", "0", expect="argument --limit: must be at least 1, got 0"),
    cmd("--limit", "history", "--limit", "ten", expect="argument --limit: must be a whole number"),
    cmd("--ledger", "history", "--ledger", "mongodb://h/db", expect="scheme 'mongodb'"),
    cmd("--state-dir", "history", "--state-dir", "{tmp}/typo", expect="There is no ledger at"),
    cmd("--state-dir", "history", "--state-dir", "", expect="argument --state-dir: must not be empty"),
    # -- offsets translate -------------------------------------------------------------------------
    cmd("--topic", "offsets", "translate", "--partition", "0", "--offset", "1", expect="required: --topic"),
    cmd("--topic", "offsets", "translate", "--topic", "", "--partition", "0", "--offset", "1", expect="--topic: must"),
    cmd("--partition", "offsets", "translate", "--topic", "a", "--partition", "-1", "--offset", "1", expect="least 0"),
    cmd("--partition", "offsets", "translate", "--topic", "a", "--partition", "x", "--offset", "1", expect="whole"),
    cmd("--offset", "offsets", "translate", "--topic", "a", "--partition", "0", "--offset", "-5", expect="least 0"),
    cmd("--offset", "offsets", "translate", "--topic", "a", "--partition", "0", expect="required: --offset"),
    cmd(
        "--target-topic",
        "offsets",
        "translate",
        "--topic",
        "a",
        "--partition",
        "0",
        "--offset",
        "1",
        "--target-topic",
        "",
        expect="--target-topic: must not be empty",
    ),
    cmd(
        "--source-cluster",
        "offsets",
        "translate",
        "--topic",
        "a",
        "--partition",
        "0",
        "--offset",
        "1",
        "--source-cluster",
        "",
        expect="--source-cluster: must not be empty",
    ),
    cmd(
        "--target-cluster",
        "offsets",
        "translate",
        "--topic",
        "a",
        "--partition",
        "0",
        "--offset",
        "1",
        "--target-cluster",
        "",
        expect="--target-cluster: must not be empty",
    ),
    cmd(
        "--ledger",
        "offsets",
        "translate",
        "--topic",
        "a",
        "--partition",
        "0",
        "--offset",
        "1",
        "--ledger",
        "redis://h",
        expect="scheme 'redis'",
    ),
    cmd(
        "--state-dir",
        "offsets",
        "translate",
        "--topic",
        "a",
        "--partition",
        "0",
        "--offset",
        "1",
        "--state-dir",
        "{tmp}/typo",
        expect="There is no ledger at",
    ),
    cmd(
        "--topic",
        "offsets",
        "translate",
        "--topic",
        "a",
        "--partition",
        "0",
        "--offset",
        "1",
        expect="The ledger has no verified copy of a[0]",
        ledger=True,
    ),
    cmd("(usage)", "offsets", expect="required: offsets_command"),
]

# Options whose every value is valid: flags without a value, and --help / --version.
NO_BAD_VALUE = {"--dry-run", "--allow-gaps", "--verbose", "--help", "--version"}


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file and directory under root with its bytes. SQLite's shared-memory index and an empty
    write-ahead log are left out: opening a ledger to read it makes them, and they hold no data."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
        if not p.name.endswith("-shm") and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's directory is the default state dir; no ledger or master from the environment."""
    monkeypatch.setenv("KAFKA_MIGRATION_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("KAFKA_MIGRATION_LEDGER_URL", raising=False)
    monkeypatch.delenv("KAFKA_MIGRATION_SPARK_MASTER", raising=False)
    monkeypatch.setattr(logging, "basicConfig", lambda **_: None)  # main() must not reconfigure pytest's logging
    yield tmp_path


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{text}"
    return lines[0]


@pytest.mark.parametrize("case", CLI_CASES, ids=[f"{c.command}:{c.option}:{' '.join(c.argv)[-60:]}" for c in CLI_CASES])
def test_cli_refuses_before_writing(case: Case, isolated: Path, capfd: pytest.CaptureFixture[str]) -> None:
    for name, content in case.files.items():
        path = isolated / name.replace("_json", ".json")
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if case.ledger:
        from kafka_migration.ledger import Ledger

        Ledger.open(f"sqlite:///{isolated / 'state' / 'ledger.db'}").engine.dispose()
    before = _tree(isolated)
    argv = [a.replace("{tmp}", str(isolated)) for a in case.argv]

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


def test_no_secret_in_a_refusal(isolated: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """librdkafka quotes the values it refuses; a secret's value is masked in the one line."""
    (isolated / "s.json").write_text(json.dumps({"sasl.password": "hunter2", "security.protocol": "hunter2"}))
    assert main([*RUN, "--source-config", str(isolated / "s.json")]) == EXIT_BAD_INPUT
    out, err = capfd.readouterr()
    assert 'Invalid value "***" for configuration property "security.protocol"' in _one_line(err)
    assert "hunter2" not in out + err


def _options(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """(subcommand, option) for every option and positional of every subcommand, at any depth."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*words, name))
        elif words and not isinstance(action, argparse._HelpAction):
            yield " ".join(words), (max(action.option_strings, key=len) if action.option_strings else action.dest)


def test_every_option_has_a_case() -> None:
    covered = {(c.command, c.option) for c in CLI_CASES}
    missing = [
        f"{command} {option}"
        for command, option in _options(_parser())
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
    ParamCase("(undeclared)", "x", "Unknown Param(s) '(undeclared)'", False),
]

CONNECTIONS = {  # Airflow connections from the environment (AIRFLOW_CONN_<ID>), as a deployment defines them
    "kafka_source": {"conn_type": "kafka", "extra": {"bootstrap.servers": S}},
    "kafka_target": {"conn_type": "kafka", "extra": {"bootstrap.servers": T}},
    "km_list_extra": {"conn_type": "kafka", "extra": json.dumps(["bootstrap.servers", S])},
    "km_bad_json": {"conn_type": "kafka", "extra": "{bootstrap.servers: b:9092}"},
    "km_unknown_key": {"conn_type": "kafka", "extra": {"bootstrap.servers": S, "fetch.max.wait.ms": 10}},
    "km_bad_bootstrap": {"conn_type": "kafka", "extra": {"bootstrap.servers": "b 1:9092"}},
    "km_no_bootstrap": {"conn_type": "kafka", "extra": {"security.protocol": "SSL"}},
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
    from kafka_migration.airflow.tasks import plan_run

    declared = _params()
    params = {name: param.value for name, param in declared.items()} | {case.param: case.value}
    before = _tree(airflow_env)
    with pytest.raises(ConfigurationError) as refused:
        plan_run(params, "manual__2026-11-23", declared=declared)
    assert case.expect in _one_line(str(refused.value))
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


def test_every_param_has_a_case() -> None:
    assert set(_params()) <= {c.param for c in PARAM_CASES}


def test_invalid_nightly_defaults_are_an_import_error_that_names_the_value() -> None:
    from kafka_migration.airflow.dag_factory import migration_params

    with pytest.raises(ConfigurationError, match=r"include pattern 'a\(' .* nightly_include"):
        migration_params(include="a(")
