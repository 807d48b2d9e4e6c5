"""kafka_migration.cli: --spark-conf parsing, argument defaults, and the Spark progress-line regex."""

from __future__ import annotations

import ast
import inspect
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_migration.cli import EXIT_BAD_INPUT, main
from kafka_migration.cli.options import spark_conf
from kafka_migration.cli.parser import build_parser
from kafka_migration.exceptions import MigrationError
from kafka_migration.run.progress import TOPIC_DONE_LINE
from kafka_migration.spark import jobs
from tests.unit.factories import FakeContext, migration_plan, topic_plan

DOCUMENTED_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class TestSparkConf:
    def test_pairs(self) -> None:
        assert spark_conf(["spark.executor.memory=2g", "spark.driver.cores=2"]) == {
            "spark.executor.memory": "2g",
            "spark.driver.cores": "2",
        }

    def test_value_may_contain_equals_and_be_empty(self) -> None:
        assert spark_conf(["spark.driver.extraJavaOptions=-Da=b -Dc=d", "spark.x="]) == {
            "spark.driver.extraJavaOptions": "-Da=b -Dc=d",
            "spark.x": "",
        }

    def test_later_setting_wins(self) -> None:
        assert spark_conf(["a=1", "a=2"]) == {"a": "2"}

    def test_none(self) -> None:
        assert spark_conf([]) == {}

    @pytest.mark.parametrize("pair", ["spark.executor.memory", "=2g", ""])
    def test_malformed_names_the_pair(self, pair: str) -> None:
        with pytest.raises(MigrationError, match=rf"--spark-conf '{pair}' must look like KEY=VALUE"):
            spark_conf([pair])


class TestParser:
    def test_run_defaults(self) -> None:
        args = build_parser().parse_args(["run", "--source", "s:9092", "--target", "t:9092"])
        assert (args.include, args.exclude, args.rename) == (".*", None, "{topic}")
        assert args.topics_per_job == 25 and args.replication_factor is None
        assert not args.dry_run and args.spark_conf == []

    def test_run_options(self) -> None:
        args = build_parser().parse_args(
            [
                "run",
                "--include",
                "orders.*",
                "--rename",
                "eu.{topic}",
                "--replication-factor",
                "2",
                "--topics-per-job",
                "5",
                "--spark-conf",
                "a=1",
                "--spark-conf",
                "b=2",
                "--dry-run",
                "--source-config",
                "src.json",
            ]
        )
        assert args.replication_factor == 2 and args.topics_per_job == 5
        assert args.spark_conf == ["a=1", "b=2"]
        assert args.dry_run and args.source_config == Path("src.json")

    def test_command_required(self) -> None:
        with pytest.raises(SystemExit):
            build_parser().parse_args([])


class TestBadInputExitCode:
    """Rejected before any cluster is contacted: exit 2 and a one-line error."""

    @pytest.fixture(autouse=True)
    def _keep_root_logging(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(logging, "basicConfig", lambda **_: None)

    def test_missing_bootstrap(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        assert main(["run", "--target", "t:9092", "--state-dir", str(tmp_path)]) == EXIT_BAD_INPUT
        assert "error: The source cluster has no 'bootstrap.servers'" in capsys.readouterr().err

    def test_invalid_include(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        code = main(["run", "--source", "s:1", "--target", "t:1", "--include", "a(", "--state-dir", str(tmp_path)])
        assert code == EXIT_BAD_INPUT
        assert "include pattern 'a(' is not a valid regular expression" in capsys.readouterr().err

    def test_rename_without_topic(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        code = main(["run", "--source", "s:1", "--target", "t:1", "--rename", "copy", "--state-dir", str(tmp_path)])
        assert code == EXIT_BAD_INPUT
        assert "Rename template 'copy' must contain the placeholder {topic}" in capsys.readouterr().err


# --- The progress regex against what the Spark job really logs.


def _jobs_logging_config() -> dict[str, str]:
    """format= (and datefmt=, if any) of the logging.basicConfig call in kafka_migration.spark.jobs.main."""
    tree = ast.parse(inspect.getsource(jobs.main))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "logging.basicConfig":
            return {
                kw.arg: kw.value.value
                for kw in node.keywords
                if kw.arg in ("format", "datefmt") and isinstance(kw.value, ast.Constant)
            }
    raise AssertionError("kafka_migration.spark.jobs.main no longer calls logging.basicConfig")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def spark_log_lines() -> Iterator[list[str]]:
    """Lines the Spark job's logger writes, formatted exactly as jobs.main configures logging."""
    config = _jobs_logging_config()
    handler = _Lines()
    handler.setFormatter(logging.Formatter(config["format"], config.get("datefmt")))
    logger = logging.getLogger(jobs.log.name)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _progress_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "topics done" in line]


def test_jobs_log_format_is_the_documented_one() -> None:
    assert _jobs_logging_config()["format"] == DOCUMENTED_FORMAT


def test_progress_regex_matches_run_step_lines(spark_log_lines: list[str]) -> None:
    topics = [topic_plan("orders", (0,), target_topic="eu.orders"), topic_plan("payments", (0, 0))]
    plan = migration_plan(*topics)
    jobs.run_step(FakeContext(), "copy", plan, topics, {}, {}, parallel_topics=1)

    lines = _progress_lines(spark_log_lines)
    assert len(lines) == 2
    matches = [TOPIC_DONE_LINE.match(line) for line in lines]
    assert all(matches), lines
    # parallel_topics=1 and equal sizes: topics finish in plan order.
    assert [m.groups() for m in matches if m] == [
        ("copy", "orders -> eu.orders", "ok", "1", "2"),
        ("copy", "payments -> payments", "ok", "2", "2"),
    ]


def test_progress_regex_matches_failed_topic_line_with_error(spark_log_lines: list[str]) -> None:
    topics = [topic_plan("orders", (5,))]
    failing = FakeContext(fail=Exception("Traceback\nkafka_migration.exceptions.CopyError: orders[0]: (1/9) boom"))
    jobs.run_step(failing, "copy", migration_plan(*topics), topics, {}, {})

    (line,) = _progress_lines(spark_log_lines)
    match = TOPIC_DONE_LINE.match(line)
    assert match is not None, line
    assert match.group(1, 2, 3, 4, 5) == ("copy", "orders -> orders", "failed", "1", "1")


def test_progress_regex_matches_verify_lines(spark_log_lines: list[str]) -> None:
    topics = [topic_plan("orders", ())]  # no partitions: verification runs no task
    jobs.run_step(FakeContext(), "verify", migration_plan(*topics), topics, {}, {})
    (line,) = _progress_lines(spark_log_lines)
    match = TOPIC_DONE_LINE.match(line)
    assert match is not None and match.group(1, 3, 4, 5) == ("verify", "ok", "1", "1")


def _format(message: str, *args: object, name: str = jobs.log.name) -> str:
    record = logging.LogRecord(name, logging.INFO, __file__, 1, message, args, None)
    return logging.Formatter(DOCUMENTED_FORMAT).format(record)


def test_progress_regex_ignores_other_lines() -> None:
    # jobs.main's start and finish lines, another logger, and Spark's own log4j output.
    assert not TOPIC_DONE_LINE.match(_format("%s: %d topics, %d partitions, jobs %s of run %s", "copy", 3, 9, [0], "r"))
    assert not TOPIC_DONE_LINE.match(_format("%s finished in %.1fs: %d topics ok", "copy", 1.0, 3))
    other = _format("copy a -> a: ok, 1 records in 0.1s (1/1 topics done)", name="kafka_migration.run.copy")
    assert not TOPIC_DONE_LINE.match(other)
    assert not TOPIC_DONE_LINE.match("26/11/22 21:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library")


def test_console_entry_returns_mains_code_and_skips_the_last_collection(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`kafka-migrate` (console_main) exits with main's code; the heap is frozen so the interpreter's final
    garbage collection has nothing to walk (exit handlers still run)."""
    import gc

    from kafka_migration import cli

    monkeypatch.setattr(cli, "main", lambda: 3)
    try:
        assert cli.console_main() == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
