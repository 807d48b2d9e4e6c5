"""access/inputs.py: what a sync is given besides the clusters, checked whole before anything is read or written:
the principal map (a file or a Param) and the operator's SCRAM passwords (a file or a connection's extra), each
refusal naming the file and the entry, never a password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_migration.access.inputs import load_credentials, load_passwords, load_principal_map, principal_map
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import Password


def test_a_principal_map_file_is_one_object_of_principals(tmp_path: Path) -> None:
    assert load_principal_map(None) == {}
    good = tmp_path / "map.json"
    good.write_text('{"User:app": "User:app-dc2"}')
    assert load_principal_map(good) == {"User:app": "User:app-dc2"}
    for text, refusal in (
        ('["User:app"]', f"The principal map {tmp_path}/map.json holds a JSON list; give an object such as "),
        ('{"app": "User:x"}', f"The principal map {tmp_path}/map.json maps 'app': 'User:x', not a principal"),
        ('{"User:a": 7}', "maps 'User:a': 7, not a principal TYPE:NAME to another (User:app to User:app-dc2)."),
        ('{"User:a": "b"}', "maps 'User:a': 'b', not a principal"),
        ("{", f"The principal map {tmp_path}/map.json is not valid JSON (line 1): give an object such as "),
    ):
        good.write_text(text)
        with pytest.raises(ConfigurationError) as refused:
            load_principal_map(good)
        assert refusal in str(refused.value)
    with pytest.raises(ConfigurationError, match="cannot be read"):
        load_principal_map(tmp_path / "missing.json")
    assert principal_map({}, "Param principal_map") == {}


def test_a_credentials_file_gives_passwords_and_is_never_quoted(tmp_path: Path) -> None:
    assert load_credentials(None) == {}
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"alice": "s3cret-value"}))
    assert load_credentials(path) == {"alice": Password("alice", "s3cret-value")}
    path.write_text('{"alice": "s3cret-value"')
    with pytest.raises(ConfigurationError) as refused:
        load_credentials(path)
    assert str(refused.value) == (
        f'The credentials file {path} is not valid JSON (line 1): give an object such as {{"alice": "..."}}.'
    )
    assert "s3cret" not in str(refused.value)


def test_a_bad_credentials_file_or_principal_map_is_named_in_full(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text('["alice"]')
    with pytest.raises(ConfigurationError, match=f"^The credentials file {path} holds a JSON list"):
        load_credentials(path)
    mapping = tmp_path / "map.json"
    mapping.write_text("{")
    with pytest.raises(ConfigurationError) as refused:
        load_principal_map(mapping)
    assert str(refused.value) == (
        f"The principal map {mapping} is not valid JSON (line 1): give an object such as "
        '{"User:app": "User:app-dc2"}.'
    )
    with pytest.raises(ConfigurationError) as refused:
        principal_map({f"u{n}": "User:x" for n in range(4)}, "Param principal_map")
    assert str(refused.value).startswith(
        "Param principal_map maps 'u0': 'User:x', 'u1': 'User:x', 'u2': 'User:x', and 1 more, not a principal"
    )


def test_the_credentials_file_forms_and_refusals() -> None:
    found = load_passwords({"alice": "s3cret", "bob": {"password": "pw", "salt": "00ff"}}, "p.json")
    assert found["alice"] == Password("alice", "s3cret") and found["bob"].salt == b"\x00\xff"
    assert "s3cret" not in repr(found["alice"])
    for data, expect in (
        ([], "holds a JSON list"),
        ({"alice": ""}, "user 'alice' needs a non-empty password"),
        ({"alice": {"pass": "x"}}, "user 'alice' needs a non-empty password"),
        ({"alice": {"password": "x", "salt": "zz"}}, "the salt of user 'alice' is not hex"),
    ):
        with pytest.raises(ConfigurationError, match=expect):
            load_passwords(data, "p.json")
