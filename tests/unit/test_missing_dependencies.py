"""The suite's rule for what a test needs and does not find: a failure under CI, a skip elsewhere.

``.ci/run`` sets CI itself (a CI system may not), and every skip goes through ``missing`` or
``require_module`` of tests/conftest.py (ruff's TID251 refuses pytest's own skips).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import conftest
from tests.conftest import missing, require_module

REPO = Path(__file__).resolve().parents[2]


def test_ci_run_sets_ci_itself(tmp_path: Path) -> None:
    """A stand-in ``make`` first on the PATH records what .ci/run hands it (the real one would run the whole
    suite inside this test)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    make = bin_dir / "make"
    make.write_text('#!/bin/sh\nprintf "%s|%s|%s" "${CI-unset}" "$*" "$PWD" > "$MAKE_SAW"\n')
    make.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", MAKE_SAW=str(tmp_path / "saw"))
    ci_run = [str(REPO / ".ci" / "run")]
    run = subprocess.run(
        ["bash", *ci_run], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "saw").read_text() == f"1|test|{REPO}"


@pytest.mark.parametrize("ci", [True, False], ids=["CI", "elsewhere"])
def test_a_missing_dependency_fails_under_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch, ci: bool) -> None:
    monkeypatch.setattr(conftest, "IN_CI", ci)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception  # noqa: TID251 (the outcome, not a skip)
    # Any outcome is caught and its kind checked: a skip escaping here would skip this test instead of failing it.
    with pytest.raises(BaseException, match="chromium is missing") as raised:
        missing("chromium is missing")
    assert raised.type is outcome
    with pytest.raises(BaseException, match="cannot import kafka_migration_no_such_module") as raised:
        require_module("kafka_migration_no_such_module")
    assert raised.type is outcome
    assert require_module("json") is json
