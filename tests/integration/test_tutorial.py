"""docs/tutorial.md, run as written: its bash blocks, in order, in one shell from the repository's root, against
the clusters its own ``make clusters`` starts (127.0.0.1:19092 and :29092), and the schema registries its ``make
clusters REGISTRY=1`` starts beside them (127.0.0.1:18081 and :28081). The ledger and reports go to a state
directory of the tutorial's own (``.tutorial/``, which it sets); the clusters and registries are stopped whatever
happens."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.data.read import read_partition
from kafka_migration.ledger import Ledger, default_ledger_url

pytestmark = [pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"


def blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", TUTORIAL.read_text(), flags=re.S)


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    script = "set -euo pipefail\n" + "\n".join(f"echo '>>> block {i}'\n{b}" for i, b in enumerate(blocks()))
    # A home of its own with a default ledger in it, as a user who has made real runs has: the tutorial must not
    # touch it (it keeps its state in .tutorial/ and names its cutover by the id the cutover printed).
    home = tmp_path / "home"
    shared = Ledger.open(default_ledger_url(home / ".kafka-migration"))
    shared.engine.dispose()
    before = (home / ".kafka-migration" / "ledger.db").read_bytes()
    env = {**os.environ, "HOME": str(home)}
    for name in ("KAFKA_MIGRATION_STATE_DIR", "KAFKA_MIGRATION_LEDGER_URL"):
        env.pop(name, None)
    shutil.rmtree(REPO / ".tutorial", ignore_errors=True)
    ended = None
    try:
        ended = subprocess.run(
            [
                "bash",
                "-c",
                script.replace("make clusters-stop", ": stopped after the checks").replace(
                    "rm -rf .tutorial", ": kept for the checks"
                ),
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert ended.returncode == 0, ended.stdout[-6000:] + ended.stderr[-4000:]
        out = ended.stdout
        assert "Dry run: nothing was created or copied." in out
        assert out.count("verified: every partition matches on count and checksum") == 3  # the three runs
        assert re.search(r"^Cutover \S+ COMPLETED: ", out, flags=re.M), out[-3000:]
        assert "group billing read 800 records of orders" in out  # resumed on the target where it stopped
        # The registry-encoded payments: each registry gave its first schema id 1 (the target's to audit), the run
        # registered payments-value on the target under another id, translated every value and verified, and a
        # consumer on the target decoded all 500 through the target's registry.
        listed = re.search(r"registered\s+payments-value v1 \(AVRO, source id 1, target id (\d+)\)", out)
        assert listed and listed[1] != "1", out[-6000:]
        assert "group ledger read 500 records of payments, every value decoded through the registry" in out
        reports = [json.loads(r.read_text()) for r in (REPO / ".tutorial" / "reports").glob("*/report.json")]
        assert [r["schemas"]["totals"]["values"]["translated"] for r in reports if r.get("schemas")] == [500]
        assert re.search(r"^Failback of cutover \S+ COMPLETED: ", out, flags=re.M), out[-3000:]
        # the failback brought the target's 100 new orders back: 2,000 seeded + 300 + 100, on the source
        assert sum(len(read_partition("127.0.0.1:19092", "orders", p)) for p in range(6)) == 2400
        # Everything went to the tutorial's own state directory; the home's ledger is as it was.
        assert (REPO / ".tutorial" / "ledger.db").is_file() and (REPO / ".tutorial" / "cutover.txt").is_file()
        assert (home / ".kafka-migration" / "ledger.db").read_bytes() == before
    finally:
        shutil.rmtree(REPO / ".tutorial", ignore_errors=True)
        subprocess.run([sys.executable, "-m", "harness.registry", "down"], cwd=REPO, check=False, timeout=120)
        subprocess.run([sys.executable, "-m", "harness.kafka", "down"], cwd=REPO, check=False, timeout=120)
        if ended is not None and ended.returncode != 0:
            print(ended.stdout[-6000:], ended.stderr[-4000:])
