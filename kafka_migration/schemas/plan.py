"""Which subject versions a selection of topics needs on the target registry, in the order to register them: pure.

Given the selected source topics, the ``--rename`` template and what was read from both registries (each a
mapping of ``(subject, version)`` to its ``RegisteredSchema``), ``plan_subjects`` lists the TopicNameStrategy
subjects (``<topic>-key``, ``<topic>-value``, renamed for the target) and the subjects found behind the ids of the
records (RecordNameStrategy and others, under their own names) with every version, each reference before
the version that uses it (a cycle is refused), and for each: already on the target with the same canonical form,
to register, or a conflict (the same subject and version holds another schema on the target).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from kafka_migration.exceptions import SchemaError
from kafka_migration.model.naming import target_topic_name
from kafka_migration.model.schemas import RegisteredSchema
from kafka_migration.schemas.canonical import schema_fingerprint

Key = tuple[str, int]  # (subject, version)
Catalog = Mapping[Key, RegisteredSchema]
PARTS = ("key", "value")


class Action(StrEnum):
    PRESENT = "present"  # the target holds the same canonical schema under the same subject and version
    REGISTER = "register"
    CONFLICT = "conflict"  # the target's subject version holds another schema


@dataclass(frozen=True)
class PlannedVersion:
    source_subject: str
    target_subject: str
    version: int
    schema: RegisteredSchema  # as the source holds it
    action: Action
    target_id: int | None = None  # the target's id where it holds that subject version


def subject_names(topics: Iterable[str], template: str) -> dict[str, str]:
    """Source subject -> target subject, by TopicNameStrategy, for every selected topic's key and value."""
    return {f"{t}-{p}": f"{target_topic_name(template, t)}-{p}" for t in topics for p in PARTS}


def plan_subjects(
    topics: Iterable[str], template: str, source: Catalog, target: Catalog, others: Iterable[str] = ()
) -> list[PlannedVersion]:
    """``others``: subjects of other naming strategies found behind the ids in the records (the census), moved
    under their own names with every version."""
    renamed = subject_names(topics, template)
    kept = set(others) - set(renamed)
    wanted = sorted(k for k in source if k[0] in renamed or k[0] in kept)
    order = _ordered(wanted, source)
    plans = []
    for subject, version in order:
        schema = source[(subject, version)]
        to_subject = renamed.get(subject, subject)
        held = target.get((to_subject, version))
        if held is None:
            plans.append(PlannedVersion(subject, to_subject, version, schema, Action.REGISTER))
            continue
        same = _fingerprint(schema, source) == _fingerprint(held, target)
        action = Action.PRESENT if same else Action.CONFLICT
        plans.append(PlannedVersion(subject, to_subject, version, schema, action, held.schema_id))
    return plans


def _ordered(wanted: list[Key], source: Catalog) -> list[Key]:
    """Depth-first from each wanted version: references first; a version met again on its own path is a cycle."""
    done: dict[Key, None] = {}
    path: list[Key] = []

    def visit(key: Key) -> None:
        if key in done:
            return
        if key in path:
            cycle = " -> ".join(f"{s} v{v}" for s, v in [*path[path.index(key) :], key])
            raise SchemaError(f"Schema references form a cycle ({cycle}): such schemas cannot be registered.")
        if key not in source:
            raise SchemaError(f"Subject {key[0]!r} version {key[1]} is referenced but the source registry lacks it.")
        path.append(key)
        for ref in source[key].references:
            visit((ref.subject, ref.version))
        path.pop()
        done[key] = None

    for key in wanted:
        visit(key)
    return list(done)


def _fingerprint(schema: RegisteredSchema, catalog: Catalog) -> str:
    """The fingerprint with every reference's text reachable from ``schema``, from ``catalog``."""
    return fingerprint_with_references(schema, lambda subject, version: catalog.get((subject, version)))


def fingerprint_with_references(schema: RegisteredSchema, lookup: Callable[[str, int], RegisteredSchema | None]) -> str:
    """``schema``'s fingerprint with the text of every reference reachable from it, by reference name, each
    subject version found through ``lookup`` (a catalog read before, or a registry asked now)."""
    texts: dict[str, str] = {}
    pending = list(schema.references)
    while pending:
        ref = pending.pop()
        if ref.name in texts:
            continue
        held = lookup(ref.subject, ref.version)
        if held is None:
            raise SchemaError(f"Subject {ref.subject!r} version {ref.version} is referenced but not registered.")
        texts[ref.name] = held.canonical_text
        pending.extend(held.references)
    return schema_fingerprint(schema, texts)


def render(plan: list[PlannedVersion]) -> str:
    """The plan as a dry run prints it: one line per subject version, in registration order, then the counts."""
    lines = [
        f"  {p.action.value:<8} {p.target_subject} v{p.version} "
        f"({p.schema.format.value}, source id {p.schema.schema_id}"
        + (f", target id {p.target_id})" if p.target_id is not None else ")")
        + (f" <- {p.source_subject}" if p.source_subject != p.target_subject else "")
        for p in plan
    ]
    counts = ", ".join(f"{sum(p.action is a for p in plan)} {a.value}" for a in Action)
    return "\n".join([f"Schemas: {len(plan)} subject version{'s' if len(plan) != 1 else ''} ({counts})", *lines])
