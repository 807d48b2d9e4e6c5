"""The DAGs' schema ids (airflow/schema_tasks.py) and the registries' connections (hooks.SchemaRegistryHook), on
connections as a deployment defines them (AIRFLOW_CONN_<ID>); the refusals of whole plan tasks are in the bad-input
matrix (tests/unit/cli/test_bad_input_matrix.py), a DAG run with a real registry in tests/e2e/test_schema_dag.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_migration.airflow.hooks import SchemaRegistryHook
from kafka_migration.airflow.schema_tasks import check_values, registry_conn_ids, schema_options, schema_params
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.schemas import RegistryConfig, SchemaMode


def _connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, conn: dict[str, object] | str) -> None:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", conn if isinstance(conn, str) else json.dumps(conn))


def _config(monkeypatch: pytest.MonkeyPatch, conn: dict[str, object] | str) -> RegistryConfig:
    _connection(monkeypatch, "km_registry", conn)
    return SchemaRegistryHook("km_registry", "source").get_registry_config()


def test_a_whole_url_as_host_with_login_and_password_is_basic_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(
        monkeypatch,
        {"conn_type": "http", "host": "http://reg:8080/apis/ccompat/v7", "login": "u", "password": "pw-1x"},
    )
    assert config == RegistryConfig("http://reg:8080/apis/ccompat/v7", basic_auth="u:pw-1x")
    assert "pw-1x" not in repr(config)


def test_the_port_field_is_added_to_a_url_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch, {"conn_type": "generic", "host": "https://reg", "port": 8081})
    assert config.url == "https://reg:8081"
    kept = _config(monkeypatch, {"conn_type": "generic", "host": "https://reg:9000/x", "port": 8081})
    assert kept.url == "https://reg:9000/x"  # the URL's own port wins


def test_a_connection_uri_is_read_as_airflow_splits_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """AIRFLOW_CONN_X=http://user:password@host:port/path: type http, host, port, the path in the schema field."""
    config = _config(monkeypatch, "https://migrator:p%40ss-9@reg:8443/apis/ccompat/v7")
    assert config.url == "https://reg:8443/apis/ccompat/v7" and config.basic_auth == "migrator:p@ss-9"


def test_a_bearer_token_and_tls_files_come_from_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {
        "bearer.auth.token": "tok-3q9",
        "ssl.ca.location": "/etc/ca.pem",
        "ssl.certificate.location": "/etc/c.pem",
        "ssl.key.location": "/etc/k.pem",
    }
    config = _config(monkeypatch, {"conn_type": "http", "host": "https://reg:8081", "extra": extra})
    assert config == RegistryConfig(
        "https://reg:8081",
        bearer_token="tok-3q9",
        ca_location="/etc/ca.pem",
        cert_location="/etc/c.pem",
        key_location="/etc/k.pem",
    )
    assert config.auth_kind == "bearer"


def test_the_url_may_be_in_the_extra_instead_of_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch, {"conn_type": "generic", "extra": {"url": "http://reg:8081"}})
    assert config.url == "http://reg:8081"


def test_the_secrets_are_masked_in_task_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.sdk.log import _secrets_masker

    _config(
        monkeypatch,
        {
            "conn_type": "http",
            "host": "http://reg:8081",
            "login": "u",
            "password": "basic-pw-7c1",
            "extra": {"ssl.ca.location": "/ca.pem"},
        },
    )
    _config(monkeypatch, {"conn_type": "http", "host": "http://reg:8081", "extra": {"bearer.auth.token": "bt-55k2q"}})
    _config(monkeypatch, {"conn_type": "http", "extra": {"url": "http://u:url-pw-8d3@reg:8081"}})
    redacted = _secrets_masker().redact("basic-pw-7c1 bt-55k2q url-pw-8d3 /ca.pem")
    assert redacted == "*** *** *** /ca.pem"


def test_the_params_default_to_off_and_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    params = {name: param.value for name, param in schema_params().items()}
    assert params == {
        "schema_ids": "off",
        "unknown_schema_ids": "refuse",
        "source_registry_conn_id": "schema_registry_source",
        "target_registry_conn_id": "schema_registry_target",
    }
    monkeypatch.setenv("AIRFLOW_CONN_SCHEMA_REGISTRY_SOURCE", "not a connection")  # off: never read
    assert schema_options(params) is None
    assert check_values({}) == (SchemaMode.OFF, False)
    assert registry_conn_ids({}) == {"source": "schema_registry_source", "target": "schema_registry_target"}


def test_bad_defaults_are_refused_when_the_params_are_built() -> None:
    with pytest.raises(ConfigurationError, match="Param 'schema_ids' must be one of off, keep, translate, got 'on'"):
        schema_params("on")
    with pytest.raises(ConfigurationError, match="applies to schema_ids translate, not keep"):
        schema_params("keep", "pass")


def test_translate_reads_both_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    _connection(monkeypatch, "schema_registry_source", {"conn_type": "http", "host": "http://src:8081"})
    _connection(monkeypatch, "reg_t", {"conn_type": "http", "host": "http://tgt:8081", "login": "u", "password": "p-9"})
    params = {"schema_ids": "translate", "unknown_schema_ids": "pass", "target_registry_conn_id": "reg_t"}
    options = schema_options(params)
    assert options is not None and options.mode is SchemaMode.TRANSLATE and options.pass_unknown_ids
    assert (options.source.url, options.target.url, options.target.basic_auth) == (
        "http://src:8081",
        "http://tgt:8081",
        "u:p-9",
    )


def test_a_connection_reaches_a_secured_registry_through_the_door(
    monkeypatch: pytest.MonkeyPatch,
    registry_guard,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    """A connection's login, password and CA file, as the plan task reads them, against a guard that speaks HTTPS and
    checks basic auth (harness/registry/guard.py, in front of an address where nothing answers: what it lets through
    gets its 502). A wrong password is refused naming the connection as where to fix it; the right one gets through."""
    from harness.kafka.certs import make_pki
    from harness.registry.guard import Role, User
    from kafka_migration.exceptions import RegistryAuthorizationError, RegistryRequestError
    from kafka_migration.registry import RegistryClient

    pki = make_pki(tmp_path / "pki")
    guard = registry_guard(
        "http://127.0.0.1:9/apis/ccompat/v7", users=[User("u", "pw-6t2v", Role.READ)], tls=pki.server
    )
    extra = {"ssl.ca.location": str(pki.ca)}
    messages = []
    for password, refused in (("wrong-pw-3d8", RegistryAuthorizationError), ("pw-6t2v", RegistryRequestError)):
        config = _config(
            monkeypatch, {"conn_type": "http", "host": guard.url, "login": "u", "password": password, "extra": extra}
        )
        with RegistryClient(config, timeout=5) as door, pytest.raises(refused) as caught:
            door.subjects()
        assert password not in str(caught.value)
        messages.append(str(caught.value))
    assert "the credentials were not accepted" in messages[0] and "in Airflow connection 'km_registry'" in messages[0]
    assert "behind the guard" in messages[1]  # through TLS and the guard's check
    assert [(a.who, a.status) for a in guard.requests] == [(None, 401), ("u", 502)]
