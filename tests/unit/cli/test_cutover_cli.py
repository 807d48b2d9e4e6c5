"""``kafka-migrate cutover`` / ``failback``: bad input is refused with exit 2 before anything is opened or written."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_migration.cli import EXIT_BAD_INPUT, main


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--group", "billing("], "group pattern 'billing(' is not a valid regular expression"),
        (["--exclude-group", "["], "exclude-group pattern '[' is not a valid regular expression"),
        (["--include", "("], "include pattern '(' is not a valid regular expression"),
    ],
)
def test_cutover_bad_input_exits_2_and_writes_nothing(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["cutover", "--source", "127.0.0.1:1", "--target", "127.0.0.1:1", "--state-dir", str(tmp_path), *extra]
    assert main(args) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err
    assert not (tmp_path / "ledger.db").exists()  # not even the ledger was opened


def test_cutover_needs_both_clusters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cutover", "--source", "127.0.0.1:1", "--state-dir", str(tmp_path)]) == EXIT_BAD_INPUT
    assert "needs --source and --target" in capsys.readouterr().err


def test_failback_of_an_unknown_cutover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kafka_migration.ledger import Ledger

    Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}").engine.dispose()  # a ledger without that cutover
    assert main(["failback", "--cutover", "cutover-nope", "--state-dir", str(tmp_path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "no cutover 'cutover-nope'" in err and "kafka-migrate history --cutovers" in err
