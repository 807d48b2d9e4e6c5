"""harness/bench/common.py Target: a stopped target of many partitions is removed at the session's end, not before
the next run (a fake broker: only its directory and stop() matter here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.bench import common


@dataclass
class FakeBroker:
    directory: Path
    stopped: bool = False
    started_seconds: float = 1.0
    bootstrap: str = "127.0.0.1:9092"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    def stop(self) -> None:
        self.stopped = True


def _broker(root: Path, name: str, partitions: int) -> FakeBroker:
    broker = FakeBroker(root / name)
    broker.data_dir.mkdir(parents=True)
    for i in range(partitions):
        (broker.data_dir / f"topic.{i:05d}-0").mkdir()
    (broker.data_dir / "meta.properties").write_text("node.id=1\n")  # a file, not a partition
    return broker


def test_many_partitions_stay_until_close_and_few_go_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "DEFER_REMOVAL_PARTITIONS", 5)
    started = iter([_broker(tmp_path, "big", 5), _broker(tmp_path, "small", 4)])
    monkeypatch.setattr(common, "start_broker", lambda name, directory: next(started))
    target = common.Target(tmp_path)

    target.fresh()
    big = target.cluster
    target.fresh()  # stops the big one: left in place for now
    assert isinstance(big, FakeBroker) and big.stopped and big.directory.is_dir()
    small = target.cluster
    target.stop()  # the small one goes at once
    assert isinstance(small, FakeBroker) and small.stopped and not small.directory.exists()
    assert big.directory.is_dir()

    target.close()
    assert not big.directory.exists() and target.left == []


def test_partition_count_of_a_missing_directory_is_zero(tmp_path: Path) -> None:
    assert common.partition_count(tmp_path / "none") == 0
