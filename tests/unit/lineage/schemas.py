"""Validate OpenLineage events against the specification's JSON schemas (vendored in ``spec/``, see its README)
and kafka-migration's own facet schemas (kafka_migration/lineage/schemas/): every event, and every run, job and
dataset facet by its ``_schemaURL``. A facet whose schema is not known here fails, so nothing goes unchecked."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from kafka_migration.lineage.facets import SCHEMA_DIR

SPEC = Path(__file__).parent / "spec"
EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _documents() -> Iterator[dict[str, Any]]:
    for path in [
        SPEC / "OpenLineage.json",
        *sorted((SPEC / "facets").glob("*.json")),
        *sorted(SCHEMA_DIR.glob("*.json")),
    ]:
        yield json.loads(path.read_text())


_DOCS = list(_documents())
REGISTRY: Registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in _DOCS)
_BY_FILE = {d["$id"].rsplit("/", 1)[1]: d["$id"] for d in _DOCS}


def _resolve(url: str) -> str:
    """The schema a ``_schemaURL`` names, by its file when the version here differs (1-0-1 vs 1-0-2)."""
    base, _, fragment = url.partition("#")
    if base not in REGISTRY:
        name = base.rsplit("/", 1)[1]
        assert name in _BY_FILE, f"no schema known for {url}"
        base = _BY_FILE[name]
    return f"{base}#{fragment}"


def _check(instance: Any, ref: str) -> None:
    validator = Draft202012Validator({"$ref": ref}, registry=REGISTRY)
    errors = sorted(validator.iter_errors(instance), key=str)
    assert not errors, f"{ref}: " + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def _facets(event: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield from (event.get("run", {}).get("facets") or {}).items()
    yield from (event.get("job", {}).get("facets") or {}).items()
    for dataset in [*(event.get("inputs") or []), *(event.get("outputs") or [])]:
        for key in ("facets", "inputFacets", "outputFacets"):
            yield from (dataset.get(key) or {}).items()


def validate_event(event: Mapping[str, Any]) -> None:
    """The event against RunEvent, then each facet against the schema its ``_schemaURL`` names."""
    _check(event, EVENT)
    for name, facet in _facets(event):
        assert "_schemaURL" in facet and "_producer" in facet, f"facet {name} lacks _schemaURL or _producer"
        _check(facet, _resolve(facet["_schemaURL"]))
