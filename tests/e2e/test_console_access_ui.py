"""The console's access view in a real browser: Debian's Chromium (driven by Playwright) against a real Airflow
(``airflow standalone``), reading the ledger a real ``kafka-migrate access sync`` wrote from a pair of Apache Kafka
clusters that enforce ACLs (SASL_SSL/SCRAM).

A pair of its own (an access sync copies every binding of the source, which the session's pair must not get): the
source holds two bindings and two SCRAM users, the operator gives the password of one; the sync adds both
bindings and that user and records the other as needing a password. A person signs in, clicks Access, clicks the
sync and reads its verdict (the one the CLI printed), each binding's action and the user needing a password.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.kafka import ClusterSpec, SaslSsl
from harness.servers.airflow_server import airflow_standalone
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.model.access import (
    AclBinding,
    Password,
    PatternType,
    PermissionType,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig
from tests.conftest import missing
from tests.e2e.ui_harness import find_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
UI_TIMEOUT = 180_000  # milliseconds for a page or an element on a loaded 2-core machine
CAROL = ScramCredential("carol", "SCRAM-SHA-512", 4096)  # the operator knows her password
ERIN = ScramCredential("erin", "SCRAM-SHA-512", 4096)  # nobody gave hers
BINDINGS = [
    AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:carol", "*", "WRITE", PermissionType.ALLOW),
    AclBinding(ResourceType.TOPIC, "pay.", PatternType.PREFIXED, "User:erin", "*", "READ", PermissionType.ALLOW),
]


def _access_sync(tmp_path: Path, state: Path, source: Any, target: Any) -> dict[str, Any]:
    """``kafka-migrate access sync`` as an operator runs it; its JSON answer."""
    configs = []
    for name, cluster in (("src", source), ("dst", target)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(cluster.client_config()), encoding="utf-8")
        configs.append(str(path))
    credentials = tmp_path / "passwords.json"
    credentials.write_text(json.dumps({"carol": "carol-s3cret"}), encoding="utf-8")
    args = ["--source-config", configs[0], "--target-config", configs[1], "--credentials", str(credentials)]
    args += ["--super-user", "User:admin", "--super-user", "User:ANONYMOUS", "--output", "json"]
    done = subprocess.run(
        [sys.executable, "-m", "kafka_migration.cli", "access", "sync", *args, "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    # exit 1: erin needs a password (the sync is recorded all the same)
    assert done.returncode == 1 and "erin" in done.stdout, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_person_reads_an_access_sync_in_the_console(  # type: ignore[no-untyped-def]
    kafka_factory, test_pki, tmp_path: Path
) -> None:
    binary = find_chromium()
    if binary is None:
        missing("Debian's chromium is needed for the console's browser tests: make system-deps (as root)")
    security = SaslSsl(test_pki, acls=True)
    source, target = kafka_factory(ClusterSpec("ui-access-src", security), ClusterSpec("ui-access-dst", security))
    source_admin = AccessCluster(ClusterConfig("source", source.client_config()))
    passwords = {"carol": Password("carol", "carol-s3cret"), "erin": Password("erin", "erin-s3cret")}
    source_admin.upsert_scram([CAROL, ERIN], passwords)
    source_admin.create(BINDINGS)
    state = tmp_path / "state"
    answer = _access_sync(tmp_path, state, source, target)
    sync_id = str(answer["sync_id"])
    verdict = {"proven": "PROVEN", "different": "NOT PROVEN"}[answer["verdict"]]  # as the sync's report words it

    home = tmp_path / "airflow-home"
    env = {"KAFKA_MIGRATION_STATE_DIR": str(state), "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False"}
    from playwright.sync_api import sync_playwright

    with airflow_standalone(home, env, timeout=600) as airflow, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=binary,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(UI_TIMEOUT)
        page = context.new_page()
        try:
            page.goto(f"{airflow.base_url}/plugin/kafka-migrations")
            page.get_by_label("Username").fill(airflow.username)
            page.get_by_label("Password").fill(airflow.password)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_test_id("kafka-console").wait_for()

            page.get_by_role("navigation", name="Console views").get_by_role("link", name="Access", exact=True).click()
            row = page.locator(f'table[aria-label="Access syncs"] tr[data-sync-id="{sync_id}"]')
            row.wait_for()
            assert row.locator("[data-status]").first.inner_text() == verdict and "erin" in row.inner_text()
            shot(page, "console-access-syncs.png")

            row.get_by_role("link", name=sync_id).click()
            page.get_by_test_id("access-sync-view").wait_for()
            assert page.get_by_test_id("access-verdict").inner_text().startswith(verdict)
            banner = page.get_by_test_id("access-verdict").inner_text()
            assert f"Decision check: {answer['totals']['actions_checked']} actions" in banner, banner
            assert "1 user needs a password" in banner, banner
            bindings = page.locator('table[aria-label="Bindings"] tbody tr')
            actions = {
                cells[1]: cells[0]
                for cells in ([c.strip() for c in r.locator("td").all_inner_texts()] for r in bindings.all())
            }
            assert actions[BINDINGS[0].describe()] == "ADDED", actions
            assert actions[BINDINGS[1].describe()] == "ADDED", actions
            needs = page.get_by_test_id("needs-password").inner_text()
            assert "a password: erin" in needs and "carol" not in needs
            users = page.locator('table[aria-label="Users"] tr[data-user="carol"]').inner_text()
            assert "ADDED" in users and "proven" in users
            if answer.get("report"):
                page.get_by_test_id("access-report").get_by_role("link", name="report.html").wait_for()
            shot(page, "console-access-sync.png")
        except Exception:
            shot(page, "failed-console-access.png")
            raise
        finally:
            browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
