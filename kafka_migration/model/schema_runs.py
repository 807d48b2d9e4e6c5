"""What a run did with the schemas of its topics, as the plan file, the ledger and the report keep it.

The sync (``schema_sync``) plans the subject versions the selected topics need on the target registry, registers
the missing ones (translate mode) or proves the target already holds them under the same ids (keep mode), and
proves every source id and its target id name the same schema by their canonical fingerprints. The result is a
``SchemaRun``: the registries (URLs without secrets), every subject version with what became of it, and the id
map the copy rewrites by and the verification proves by. Plain values: the ledger and the reports read them
without importing the capability.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kafka_migration.model.census import CensusNote
from kafka_migration.model.schemas import IdMap, IdPair, SchemaFormat, SchemaMode


class VersionAction(StrEnum):
    """What the sync did with one subject version."""

    PRESENT = "present"  # the target held the same canonical schema under that subject and version
    REGISTERED = "registered"  # registered on the target by this run
    TO_REGISTER = "to_register"  # a dry run: would be registered


@dataclass(frozen=True, order=True)
class SyncedVersion:
    """One subject version a run's topics need: where it is on both registries and the proof that it is the same
    schema there (``fingerprint``: of the source's canonical form, equal to the target's when proven; None in a
    dry run, which reads but proves nothing it did not register)."""

    target_subject: str
    version: int
    source_subject: str
    format: SchemaFormat
    source_id: int
    target_id: int | None  # None: a dry run's version to register
    action: VersionAction
    target_version: int | None = None  # where the target put it (its own numbering), None in a dry run
    fingerprint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_subject": self.source_subject,
            "target_subject": self.target_subject,
            "version": self.version,
            "target_version": self.target_version,
            "format": self.format.value,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "action": self.action.value,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SyncedVersion:
        return cls(
            target_subject=str(data["target_subject"]),
            version=int(data["version"]),
            source_subject=str(data["source_subject"]),
            format=SchemaFormat(data["format"]),
            source_id=int(data["source_id"]),
            target_id=None if data.get("target_id") is None else int(data["target_id"]),
            action=VersionAction(data["action"]),
            target_version=None if data.get("target_version") is None else int(data["target_version"]),
            fingerprint=data.get("fingerprint"),
        )


@dataclass(frozen=True, order=True)
class SubjectCompatibility:
    """A subject's compatibility level on both registries, as registering a version meets it: its own level, or
    the registry's global one when it has none (``*_global``). None: not read (a registry without the config API)."""

    target_subject: str
    source_subject: str
    source: str | None
    target: str | None
    source_global: bool = False
    target_global: bool = False

    @property
    def differs(self) -> bool:
        return self.source is not None and self.target is not None and self.source != self.target

    def describe(self) -> str:
        def level(value: str | None, is_global: bool) -> str:
            return "unknown" if value is None else f"{value}{' (global)' if is_global else ''}"

        return f"source {level(self.source, self.source_global)}, target {level(self.target, self.target_global)}" + (
            ": they differ, the target may refuse a version the source took" if self.differs else ""
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_subject": self.target_subject,
            "source_subject": self.source_subject,
            "source": self.source,
            "target": self.target,
            "source_global": self.source_global,
            "target_global": self.target_global,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SubjectCompatibility:
        return cls(
            str(data["target_subject"]),
            str(data["source_subject"]),
            data.get("source"),
            data.get("target"),
            bool(data.get("source_global", False)),
            bool(data.get("target_global", False)),
        )


@dataclass(frozen=True)
class SchemaRun:
    """A run's schemas: the mode, both registries (display URLs: never a secret), every subject version in the
    order they were registered, and the id map (keep mode: the identity over the proven ids)."""

    mode: SchemaMode
    source_registry: str
    target_registry: str
    versions: tuple[SyncedVersion, ...] = ()
    id_map: IdMap = field(default_factory=IdMap)
    dry_run: bool = False
    # Each subject's compatibility on both registries, as read when the run planned (the plan file and the report
    # keep it; the ledger's schema ids table does not, so it takes no part in comparing two runs' schemas).
    compatibility: tuple[SubjectCompatibility, ...] = field(default=(), compare=False)
    # What the census of the records found (subjects of other strategies, unknown ids let through): in the plan
    # file; the ledger keeps the versions and the map, so a run read back from it has none, and compares equal.
    census: CensusNote | None = field(default=None, compare=False)

    def counts(self) -> dict[str, int]:
        """Versions by action, every action named (0 where none)."""
        return {a.value: sum(v.action is a for v in self.versions) for a in VersionAction}

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "source_registry": self.source_registry,
            "target_registry": self.target_registry,
            "versions": [v.to_dict() for v in self.versions],
            "id_map": self.id_map.to_dict(),
            "dry_run": self.dry_run,
            **({"compatibility": [c.to_dict() for c in self.compatibility]} if self.compatibility else {}),
            **({"census": self.census.to_dict()} if self.census is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SchemaRun:
        return cls(
            mode=SchemaMode(data["mode"]),
            source_registry=str(data["source_registry"]),
            target_registry=str(data["target_registry"]),
            versions=tuple(SyncedVersion.from_dict(v) for v in data.get("versions", ())),
            id_map=IdMap.from_dict(data.get("id_map", {})),
            dry_run=bool(data.get("dry_run", False)),
            compatibility=tuple(SubjectCompatibility.from_dict(c) for c in data.get("compatibility", ())),
            census=CensusNote.from_dict(data["census"]) if data.get("census") else None,
        )

    def render(self) -> str:
        """The listing a dry run (and a run) prints: one line per subject version in registration order."""
        counts = ", ".join(f"{n} {action.replace('_', ' ')}" for action, n in self.counts().items() if n)
        head = (
            f"Schemas ({self.mode.value} ids, {self.source_registry} -> {self.target_registry}): "
            f"{len(self.versions)} subject version{'s' if len(self.versions) != 1 else ''}"
            + (f" ({counts})" if counts else "")
        )
        lines = [head]
        found = set(self.census.subjects) if self.census is not None else set()
        for v in self.versions:
            target = f"target id {v.target_id}" if v.target_id is not None else "target id assigned on register"
            renamed = f" <- {v.source_subject}" if v.source_subject != v.target_subject else ""
            lines.append(
                f"  {v.action.value.replace('_', ' '):<12} {v.target_subject} v{v.version}{renamed} "
                f"({v.format.value}, source id {v.source_id}, {target})"
                + (" found in the records" if v.source_subject in found else "")
            )
        if self.compatibility:
            lines.append("Compatibility of each subject:")
            width = max(len(c.target_subject) for c in self.compatibility)
            lines += [f"  {c.target_subject:<{width}}  {c.describe()}" for c in self.compatibility]
        if self.census is not None:
            lines += self.census.render()
        return "\n".join(lines)


def id_map_of(versions: Iterable[SyncedVersion]) -> IdMap:
    """Source id -> target id of the versions that have a target id. A source id held by two subjects whose target
    ids differ keeps the first: the sync proved both name the same schema."""
    pairs: dict[int, IdPair] = {}
    for v in versions:
        if v.target_id is not None:
            pairs.setdefault(v.source_id, IdPair(v.source_id, v.target_id, v.format))
    return IdMap(tuple(pairs.values()))
