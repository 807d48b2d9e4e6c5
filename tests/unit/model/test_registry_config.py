"""RegistryConfig: where a schema registry is and how to reach it, its secrets never shown."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.schemas import RegistryConfig


def test_secrets_stay_out_of_repr_and_display_url() -> None:
    in_url = RegistryConfig("https://bob:pw-in-url@registry:8081/apis/ccompat/v7")
    assert in_url.display_url == "https://bob:***@registry:8081/apis/ccompat/v7"
    assert "pw-in-url" not in repr(in_url) and in_url.auth_kind == "basic"
    basic = RegistryConfig("https://registry:8081", basic_auth="bob:pw-basic")
    token = RegistryConfig("https://registry:8081", bearer_token="tok-123456")
    assert "pw-basic" not in repr(basic) and "tok-123456" not in repr(token)
    assert basic.scrub("failed for bob:pw-basic") == "failed for bob:***"
    assert token.scrub("Bearer tok-123456") == "Bearer ***"


@pytest.mark.parametrize(
    "settings",
    [
        {"url": "registry:8081"},
        {"url": "ftp://registry"},
        {"url": "https://registry", "basic_auth": "no-colon"},
        {"url": "https://registry", "basic_auth": "a:b", "bearer_token": "t"},
        {"url": "https://a:b@registry", "basic_auth": "a:b"},
        {"url": "https://registry", "cert_location": "c.pem"},
    ],
)
def test_bad_settings_are_refused_without_quoting_a_secret(settings: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError) as caught:
        RegistryConfig(**settings)
    assert "a:b" not in str(caught.value) and "https://a:b@" not in str(caught.value)
