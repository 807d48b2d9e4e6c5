"""What the tests on the standalone cluster check in a run's results: where the executors ran."""

from __future__ import annotations

import sys
from pathlib import Path

from kafka_migration.model.results import StepResults


def executor_pythons(results_files: list[Path]) -> list[dict[str, str]]:
    """The ``executor`` entry of every partition row of the given copy/verify results."""
    rows = [
        p["executor"]
        for path in results_files
        for topic in StepResults.read(path).topics.values()
        for p in topic.partitions
    ]
    assert rows, f"no partition rows in {results_files}"
    return rows


def assert_shipped_python(rows: list[dict[str, str]], work_dirs: list[Path]) -> None:
    """Every task ran ./env/bin/python unpacked from the shipped archive inside an executor's directory of
    a worker (<work dir>/app-*/<executor id>/env), never the driver's virtualenv."""
    driver_prefix = Path(sys.prefix).resolve()
    for row in rows:
        python, prefix = Path(row["python"]), Path(row["prefix"]).resolve()
        assert python == prefix / "bin" / "python", row
        assert prefix.name == "env" and (prefix / "pyvenv.cfg").is_file(), row
        executor_dir = prefix.parent
        assert executor_dir.parent.name.startswith("app-"), row
        assert executor_dir.parent.parent in work_dirs, (row, work_dirs)
        assert not prefix.is_relative_to(driver_prefix) and prefix != driver_prefix, row
