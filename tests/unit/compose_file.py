"""Reading docker-compose.yaml the way Compose does, for the tests (no Docker engine needed).

Compose loads ``.env`` from the project directory, substitutes ``${VAR}`` forms in the
file's values, and resolves YAML anchors and merge keys; the tests then check the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yaml"
ENV_FILE = REPO / ".env"
DOCKERFILE = REPO / "Dockerfile"

# $$, ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME?message}, $NAME
_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


def read_env_file(path: Path = ENV_FILE) -> dict[str, str]:
    """``KEY=VALUE`` lines; ``#`` starts a comment line. Values are taken as written."""
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, value = text.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ValueError(f"{path.name} line {number} is not KEY=VALUE: {line!r}")
        values[key] = value
    return values


@dataclass
class Interpolation:
    env: dict[str, str]
    referenced: set[str] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)

    def text(self, value: str) -> str:
        def one(match: re.Match[str]) -> str:
            if match.group("escaped"):
                return "$"
            name = match.group("braced") or match.group("bare")
            op, arg = match.group("op"), match.group("arg")
            self.referenced.add(name)
            current = self.env.get(name)
            unset = current is None or (current == "" and op is not None and op.startswith(":"))
            if op in ("-", ":-"):
                return arg if unset else current  # type: ignore[return-value]
            if unset and op in ("?", ":?"):
                self.missing.append(f"{name} ({arg})")
                return ""
            if current is None:
                self.missing.append(name)
                return ""
            return current

        return _VARIABLE.sub(one, value)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value


@dataclass(frozen=True)
class ComposeProject:
    raw: dict[str, Any]
    model: dict[str, Any]
    env: dict[str, str]
    referenced: frozenset[str]
    missing: tuple[str, ...]

    @property
    def services(self) -> dict[str, dict[str, Any]]:
        return self.model["services"]

    def environment(self, service: str) -> dict[str, str]:
        env = self.services[service].get("environment") or {}
        if isinstance(env, list):
            env = dict(item.partition("=")[::2] for item in env)
        return {k: "" if v is None else str(v) for k, v in env.items()}

    def mounts(self, service: str) -> dict[str, str]:
        """Container path -> source (a named volume, or a bind-mounted host path)."""
        result = {}
        for volume in self.services[service].get("volumes") or []:
            if isinstance(volume, dict):
                source, target = volume.get("source", ""), volume["target"]
            else:
                source, target = volume.split(":")[:2]
            result[target] = source
        return result


def load(path: Path = COMPOSE_FILE, env_file: Path = ENV_FILE) -> ComposeProject:
    raw = yaml.safe_load(path.read_text())
    env = read_env_file(env_file)
    interpolation = Interpolation(env)
    model = interpolation.value(raw)
    return ComposeProject(
        raw=raw,
        model=model,
        env=env,
        referenced=frozenset(interpolation.referenced),
        missing=tuple(interpolation.missing),
    )


def dockerfile_instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines: list[str] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    result = []
    for line in lines:
        instruction, _, arguments = line.partition(" ")
        result.append((instruction.upper(), arguments.strip()))
    return result
