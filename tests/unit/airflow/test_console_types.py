"""The console's TypeScript types are generated from the API's models: the checked-in OpenAPI description they
are generated from must be the API's own (``make console`` also regenerates the TypeScript and compares it)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import require_module

require_module("fastapi")
from kafka_migration.airflow.console import openapi  # noqa: E402  (after the module check)

CHECKED_IN = Path(openapi.__file__).parent / "www" / "openapi.json"
FASTAPI_OWN = {"HTTPValidationError", "ValidationError"}


def test_the_checked_in_openapi_description_is_the_apis() -> None:
    assert CHECKED_IN.read_text(encoding="utf-8") == openapi.render(), (
        "the API's models changed: run `make console-types` and commit www/openapi.json and www/src/api/openapi.ts"
    )


def test_every_model_is_a_view_and_every_field_it_sends_is_required() -> None:
    """One naming convention (no clash with the core package's dataclasses), and no optional fields: the
    API sends every field, so the generated types need no ``undefined`` checks."""
    schemas = openapi.describe()["components"]["schemas"]
    views = {name: schema for name, schema in schemas.items() if name not in FASTAPI_OWN}
    assert views and all(name.endswith("View") for name in views), sorted(views)
    for name, schema in views.items():
        assert set(schema.get("required", [])) == set(schema["properties"]), name
    assert schemas["TimingsView"]["properties"]["copy"]["type"] == "number"  # the alias, not copy_


def test_the_description_is_written_where_asked(tmp_path: Path) -> None:
    out = tmp_path / "openapi.json"
    assert openapi.main([str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["info"]["title"] == "Kafka migrations console API"
    assert openapi.main([]) == 2
