"""The trigger form's defaults are a valid run configuration, as the form sends them.

Airflow's trigger form sends a text field that holds an empty string as null, and keeps its
Trigger button disabled while any field fails its Param's JSON Schema. A Param that defaults to
"" with type string therefore makes a DAG untriggerable with its defaults. The browser test
(tests/e2e) clicks the button; this test checks every Param of every DAG without a browser.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DAG_IDS = ("kafka_migration", "kafka_nightly_sync", "kafka_cutover", "kafka_failback", "kafka_migration_access")
NEEDS_INPUT = {("kafka_failback", "cutover_id")}  # no default can name the cutover to reverse


def _as_the_form_sends(value: object) -> object:
    return None if value == "" else value


@pytest.fixture(scope="module")
def dags() -> dict:  # type: ignore[type-arg]
    """The DAG objects as the DAG files build them (no metadata database needed)."""
    import runpy

    return {dag_id: runpy.run_path(str(REPO / "dags" / f"{dag_id}_dag.py"))["dag"] for dag_id in DAG_IDS}


@pytest.mark.parametrize("dag_id", DAG_IDS)
def test_the_defaults_pass_the_form(dags: dict, dag_id: str) -> None:  # type: ignore[type-arg]
    import jsonschema

    refused = []
    for name, param in dags[dag_id].params.items():
        if (dag_id, name) in NEEDS_INPUT:
            continue
        param = dags[dag_id].params.get_param(name)
        try:
            jsonschema.validate(_as_the_form_sends(param.value), param.schema)
        except jsonschema.ValidationError as exc:
            refused.append(f"{name}: {exc.message}")
    assert not refused, f"{dag_id}'s trigger form refuses its own defaults: {refused}"


def test_an_emptied_exclude_means_none() -> None:
    """What the form sends for an emptied field is read as "no exclusion", not as a bad value."""
    from kafka_migration.model.config import MigrationOptions

    options = MigrationOptions.from_mapping({"include": ".*", "exclude": None, "rename": "{topic}"})
    assert options.exclude is None
