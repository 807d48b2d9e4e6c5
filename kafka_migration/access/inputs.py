"""What an access sync is given besides the clusters: the principal map (a file, or the DAG's Param) and the
operator's SCRAM passwords (a credentials file, or an Airflow connection's extra). Each is checked whole before
anything is read or written, and a refusal (exit 2) names the file and the entry, never a password."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import Password
from kafka_migration.model.text import some


def _json_file(path: Path, what: str, example: str) -> object:
    """A JSON file's content; a refusal names the file and the line, never its content (it may hold secrets)."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"The {what} {path} cannot be read ({exc}); give a readable JSON file such as {example}."
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"The {what} {path} is not valid JSON (line {exc.lineno}): give an object such as {example}."
        ) from None


def load_principal_map(path: str | Path | None) -> dict[str, str]:
    """The optional principal mapping file: one JSON object, ``{"User:old": "User:new", ...}``."""
    if path is None:
        return {}
    where = Path(path)
    return principal_map(_json_file(where, "principal map", PRINCIPAL_MAP_EXAMPLE), f"The principal map {where}")


PRINCIPAL_MAP_EXAMPLE = '{"User:app": "User:app-dc2"}'


def principal_map(data: object, where: str) -> dict[str, str]:
    """A principal map's content (a file's, or a DAG's Param), checked: ``where`` begins the refusal."""
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"{where} holds a JSON {type(data).__name__}; give an object such as {PRINCIPAL_MAP_EXAMPLE}."
        )
    bad = [f"{k!r}: {v!r}" for k, v in data.items() if not isinstance(v, str) or ":" not in k or ":" not in v]
    if bad:
        raise ConfigurationError(
            f"{where} maps {some(bad, most=3)}, not a principal TYPE:NAME to another (User:app to User:app-dc2)."
        )
    return dict(data)


def load_credentials(path: str | Path | None) -> dict[str, Password]:
    """The operator's SCRAM passwords, from a JSON file (``load_passwords``); none without one."""
    if path is None:
        return {}
    where = Path(path)
    return load_passwords(_json_file(where, "credentials file", '{"alice": "..."}'), str(where))


def load_passwords(data: object, where: str) -> dict[str, Password]:
    """The credentials file's content: ``{"user": "password"}`` or ``{"user": {"password": ..., "salt": ...}}``
    (salt as hex). Messages name users and the file, never a value."""
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"The credentials file {where} holds a JSON {type(data).__name__}; give an object of user names to "
            'passwords, e.g. {"alice": "..."}.'
        )
    found = {}
    for user, value in data.items():
        entry = value if isinstance(value, dict) else {"password": value}
        password, salt = entry.get("password"), entry.get("salt")
        if not isinstance(password, str) or not password or set(entry) - {"password", "salt"}:
            raise ConfigurationError(
                f"The credentials file {where}: user {user!r} needs a non-empty password (a string, or an object "
                'with "password" and optionally "salt" as hex).'
            )
        try:
            salt_bytes = bytes.fromhex(salt) if salt is not None else None
        except (TypeError, ValueError):
            raise ConfigurationError(f"The credentials file {where}: the salt of user {user!r} is not hex.") from None
        found[str(user)] = Password(str(user), password, salt_bytes)
    return found
