"""The door's refusals of credentials, rights and TLS files, and a register refused for want of rights, in seconds.

The registry here is a guard (harness/registry/guard.py) in front of an address where nothing listens: what it
refuses (401, 403) never reaches a registry, so none is needed, and what it lets through gets its 502. The
same refusals through ``kafka-migrate run`` and the real registries: tests/integration/test_registry_auth.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.registry.guard import Role, User
from kafka_migration.exceptions import ConfigurationError, RegistryAuthorizationError, RegistryRequestError
from kafka_migration.model.schemas import RegisteredSchema, RegistryConfig, SchemaFormat
from kafka_migration.registry import RegistryClient
from kafka_migration.schema_sync.sync import KEEP_WAY_OUT, register_or_refuse

NOWHERE = "http://127.0.0.1:9/apis/ccompat/v7"  # the discard port: nothing answers
PASSWORD = "reader-pw-5k2j"
SCHEMA = RegisteredSchema(1, SchemaFormat.AVRO, json.dumps({"type": "record", "name": "A", "fields": []}))


def _door(guard, basic: str, origin: str = "--target-registry-config") -> RegistryClient:  # type: ignore[no-untyped-def]
    return RegistryClient(RegistryConfig(guard.url, basic_auth=basic, origin=origin), timeout=2)


def test_a_register_the_user_may_not_write_names_the_subject_and_the_way_out(registry_guard) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(NOWHERE, users=[User("reader", PASSWORD, Role.READ)])
    what = "Subject 'moved.orders-value' version 2 (source subject 'orders-value' version 2, id 7)"
    with _door(guard, f"reader:{PASSWORD}") as door:
        with pytest.raises(RegistryAuthorizationError) as first:
            register_or_refuse(door, "moved.orders-value", SCHEMA, what, 0, "the target registry", KEEP_WAY_OUT)
        with pytest.raises(RegistryAuthorizationError) as later:
            register_or_refuse(door, "moved.orders-value", SCHEMA, what, 2, "the target registry", KEEP_WAY_OUT)
    message = str(first.value)
    assert message.startswith(
        f"{what} could not be registered on the target registry {guard.url}: it forbids this user"
    )
    assert "(HTTP 403, error 40301: User is denied operation Write on Subject: moved.orders-value)" in message
    assert "; nothing was written. Grant this user write rights" in message
    assert "--target-registry-config" in message and "--schema-ids keep" in message
    assert first.value.exit_code == 2 and first.value.status == 403
    assert isinstance(first.value.__cause__, RegistryAuthorizationError)  # the door's refusal behind it
    assert "the 2 versions registered before it stay (found present when run again); no topic was created" in str(
        later.value
    )
    assert "nothing was written" not in str(later.value)
    assert [(a.method, a.status, a.forwarded) for a in guard.requests] == [("POST", 403, False)] * 2


def test_wrong_credentials_are_told_from_missing_rights(registry_guard) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(NOWHERE, users=[User("reader", PASSWORD, Role.READ)])
    with _door(guard, "reader:wrong-pw-8h3d") as door, pytest.raises(RegistryAuthorizationError) as caught:
        door.subjects()
    message = str(caught.value)
    assert message.startswith(f"Schema registry {guard.url}: list subjects was refused: the credentials were not")
    assert (
        "basic.auth.user.info" in message and "bearer.auth.token" in message and "--target-registry-config" in message
    )
    assert "wrong-pw-8h3d" not in message and caught.value.status == 401 and caught.value.__cause__ is None
    with _door(guard, f"reader:{PASSWORD}") as door, pytest.raises(RegistryRequestError, match="behind the guard"):
        door.subjects()  # let through, to the address where nothing answers (the guard answers 502)


def test_tls_files_missing_or_not_pem_are_refused_before_any_request(tmp_path: Path) -> None:
    missing = tmp_path / "ca.pem"
    with pytest.raises(ConfigurationError, match=f"ssl.ca.location {missing} does not exist; nothing was written"):
        RegistryClient(
            RegistryConfig("https://127.0.0.1:9", ca_location=str(missing), origin="--source-registry-config")
        )
    missing.write_text("not a certificate")
    with pytest.raises(ConfigurationError) as caught:
        RegistryClient(
            RegistryConfig("https://127.0.0.1:9", ca_location=str(missing), origin="--source-registry-config")
        )
    assert "its TLS files cannot be loaded" in str(caught.value) and f"ssl.ca.location {missing}" in str(caught.value)
    assert "--source-registry-config" in str(caught.value) and caught.value.exit_code == 2
