"""Each subject's compatibility on both registries, as a run's listing, plan file and report show it (on values;
read from real registries in tests/integration/test_schema_ids.py)."""

from __future__ import annotations

import dataclasses
import json

from kafka_migration.model.schema_runs import SchemaRun, SubjectCompatibility, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import SchemaFormat, SchemaMode
from kafka_migration.reports.schemas import schemas_html, schemas_markdown, schemas_section

VALUE = SyncedVersion("dst.a-value", 1, "a-value", SchemaFormat.AVRO, 2, 12, VersionAction.REGISTERED, 1, "sha256:x")
LEVELS = (
    SubjectCompatibility("dst.a-value", "a-value", "FULL", "BACKWARD", target_global=True),
    SubjectCompatibility("shop.Address", "shop.Address", "BACKWARD", "BACKWARD", True, False),
    SubjectCompatibility("dst.a-key", "a-key", None, "NONE"),
)
RUN = SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", (VALUE,), id_map_of((VALUE,)), compatibility=LEVELS)


def test_the_listing_ends_with_each_subjects_levels_and_says_where_they_differ() -> None:
    lines = RUN.render().splitlines()
    assert lines[2:] == [
        "Compatibility of each subject:",
        "  dst.a-value   source FULL, target BACKWARD (global): they differ, the target may refuse a version the "
        "source took",
        "  shop.Address  source BACKWARD (global), target BACKWARD",
        "  dst.a-key     source unknown, target NONE",
    ]
    assert "Compatibility" not in dataclasses.replace(RUN, compatibility=()).render()


def test_the_levels_survive_the_plan_file_but_take_no_part_in_comparing_runs() -> None:
    again = SchemaRun.from_dict(json.loads(json.dumps(RUN.to_dict())))
    assert again.compatibility == LEVELS
    assert dataclasses.replace(RUN, compatibility=()) == RUN  # the ledger's table keeps the versions, not the levels
    assert "compatibility" not in dataclasses.replace(RUN, compatibility=()).to_dict()  # older plan files unchanged
    assert SchemaRun.from_dict({k: v for k, v in RUN.to_dict().items() if k != "compatibility"}).compatibility == ()


def test_the_report_lists_each_subjects_levels() -> None:
    section = schemas_section({"schemas": RUN.to_dict()}, [])
    assert section is not None and section["compatibility"] == [c.to_dict() for c in LEVELS]
    markdown = schemas_markdown(section)
    assert "| `dst.a-value` | FULL | BACKWARD (global) |" in markdown
    assert "| `shop.Address` | BACKWARD (global) | BACKWARD |" in markdown
    assert "| `dst.a-key` | unknown | NONE |" in markdown
    assert "<td>BACKWARD (global)</td>" in schemas_html(section)
