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
from kafka_migration.run.progress import Records, TopicDone, parse_line
from kafka_migration.spark import driver, driver_jobs
from tests.unit.factories import CLUSTERS, FakeContext, migration_plan, topic_plan

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
    """format= (and datefmt=, if any) of the logging.basicConfig call in kafka_migration.spark.driver.main."""
    tree = ast.parse(inspect.getsource(driver.main))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "logging.basicConfig":
            return {
                kw.arg: kw.value.value
                for kw in node.keywords
                if kw.arg in ("format", "datefmt") and isinstance(kw.value, ast.Constant)
            }
    raise AssertionError("kafka_migration.spark.driver.main no longer calls logging.basicConfig")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def spark_log_lines() -> Iterator[list[str]]:
    """Lines the Spark job's logger writes, formatted exactly as driver.main configures logging."""
    config = _jobs_logging_config()
    handler = _Lines()
    handler.setFormatter(logging.Formatter(config["format"], config.get("datefmt")))
    logger = logging.getLogger(driver_jobs.log.name)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _progress_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if " done)" in line]


def test_jobs_log_format_is_the_documented_one() -> None:
    assert _jobs_logging_config()["format"] == DOCUMENTED_FORMAT


def test_progress_lines_of_run_step_are_read_back(spark_log_lines: list[str]) -> None:
    topics = [topic_plan("orders", (0,), target_topic="eu.orders"), topic_plan("payments", (0, 0))]
    plan = migration_plan(*topics)
    driver_jobs.run_copy_or_verify(FakeContext(), "copy", plan, topics, CLUSTERS, parallel_topics=1)

    lines = _progress_lines(spark_log_lines)
    assert len(lines) == 2
    events = [parse_line(line) for line in lines]
    # parallel_topics=1 and equal sizes: topics finish in plan order.
    assert events == [
        TopicDone("copy", "orders", "eu.orders", "ok", 0, events[0].seconds, 1, 2),  # type: ignore[union-attr]
        TopicDone("copy", "payments", "payments", "ok", 0, events[1].seconds, 2, 2),  # type: ignore[union-attr]
    ]
    assert "copy orders -> eu.orders: ok, 0 records in " in lines[0] and lines[0].endswith(" s (1 of 2 topics done)")


def test_progress_line_of_a_failed_topic_is_read_back(spark_log_lines: list[str]) -> None:
    topics = [topic_plan("orders", (5,))]
    failing = FakeContext(fail=Exception("Traceback\nkafka_migration.exceptions.CopyError: orders[0]: (1/9) boom"))
    driver_jobs.run_copy_or_verify(failing, "copy", migration_plan(*topics), topics, CLUSTERS)

    (line,) = _progress_lines(spark_log_lines)
    event = parse_line(line)
    assert isinstance(event, TopicDone), line
    assert (event.step, event.source_topic, event.status, event.done, event.topics) == (
        "copy",
        "orders",
        "failed",
        1,
        1,
    )
    assert "(1 of 1 topic done): " in line  # the singular, then the error


def test_progress_line_of_verification_is_read_back(spark_log_lines: list[str]) -> None:
    topics = [topic_plan("orders", ())]  # no partitions: verification runs no task
    driver_jobs.run_copy_or_verify(FakeContext(), "verify", migration_plan(*topics), topics, CLUSTERS)
    (line,) = _progress_lines(spark_log_lines)
    event = parse_line(line)
    assert isinstance(event, TopicDone) and (event.step, event.status, event.done, event.topics) == (
        "verify",
        "ok",
        1,
        1,
    )


def _format(message: str, *args: object, name: str = driver_jobs.log.name) -> str:
    record = logging.LogRecord(name, logging.INFO, __file__, 1, message, args, None)
    return logging.Formatter(DOCUMENTED_FORMAT).format(record)


def test_the_collectors_records_line_is_read_back() -> None:
    line = _format(
        "copy progress: 194,000 of 300,000 records (64.7%), 38,735 records/s, 8.0 MB/s now; 0 of 1 topic done; 5 s "
        "elapsed"
    )
    assert parse_line(line) == Records("copy", 194_000, 300_000, 0, 1)


def test_progress_reading_ignores_other_lines() -> None:
    # driver.main's start and finish lines, another logger, and Spark's own log4j output.
    assert not isinstance(parse_line(_format("%s finished in %.1f s: 3 topics ok", "copy", 1.0)), TopicDone)
    other = _format("copy a -> a: ok, 1 record in 0.1 s (1 of 1 topic done)", name="kafka_migration.run.copy")
    assert parse_line(other) is None
    assert parse_line("26/11/22 21:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library") is None


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
