"""A failback's schema rules on plain values (schema_sync/back.py): it treats the ids as the runs before the cutover
did, and its registries are the cutover's swapped. The translation back itself runs on real registries in
tests/integration/test_schema_failback.py."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import SchemaConflictError
from kafka_migration.model.schemas import RegistryConfig, SchemaMode
from kafka_migration.schema_sync.back import refuse_failback_mode, reversed_options
from kafka_migration.schema_sync.sync import SchemaOptions

TRANSLATED = {("orders", "moved.orders"): "run-7"}


def test_a_failback_after_translated_runs_must_translate() -> None:
    with pytest.raises(SchemaConflictError) as caught:
        refuse_failback_mode(TRANSLATED, SchemaMode.OFF)
    message = str(caught.value)
    assert "translated the schema ids of 1 topic (orders -> moved.orders (run run-7))" in message
    assert "Fail back with --schema-ids translate" in message and caught.value.exit_code == 2
    refuse_failback_mode(TRANSLATED, SchemaMode.TRANSLATE)  # as the runs did: nothing said


def test_a_failback_after_untranslated_runs_must_not_translate() -> None:
    refuse_failback_mode({}, SchemaMode.OFF)
    with pytest.raises(SchemaConflictError, match="already name the source registry's ids: fail back without"):
        refuse_failback_mode({}, SchemaMode.TRANSLATE)


@pytest.mark.parametrize("translated", [TRANSLATED, {}])
def test_keep_mode_is_not_taken_by_a_failback(translated: dict[tuple[str, str], str]) -> None:
    with pytest.raises(SchemaConflictError, match="--schema-ids keep is not taken by a failback"):
        refuse_failback_mode(translated, SchemaMode.KEEP)


def test_the_failbacks_registries_are_the_cutovers_swapped() -> None:
    options = SchemaOptions(
        SchemaMode.TRANSLATE,
        RegistryConfig("http://src:8081"),
        RegistryConfig("http://dst:8081", basic_auth="u:p"),
        True,
    )
    back = reversed_options(options)
    assert (back.source, back.target) == (options.target, options.source)
    assert back.mode is SchemaMode.TRANSLATE and back.pass_unknown_ids
