"""``kafka-migrate`` as a user runs it, for the tests that run the CLI whole: its own process, none of this process's
``KAFKA_MIGRATION_*`` settings (the state directory's ledger, its defaults), this tree's package first on the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
REPO = Path(__file__).resolve().parents[1]


def kafka_migrate(*args: str, state_dir: Path, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    """``kafka-migrate ARGS --state-dir STATE_DIR``, its output captured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env["PYTHONPATH"] = str(REPO)  # this tree's package, also where the environment's is installed from another
    return subprocess.run(
        [KAFKA_MIGRATE, *args, "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def kafka_migrate_run(*args: str, state_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``kafka-migrate run ARGS --state-dir STATE_DIR``."""
    return kafka_migrate("run", *args, state_dir=state_dir, timeout=timeout)
