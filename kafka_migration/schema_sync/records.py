"""The schema ids the census found in a run's source records, resolved on the source registry before anything is
written: the subjects behind ids that the selected topics' own subjects do not hold (RecordNameStrategy,
TopicRecordNameStrategy, any other) join the sync, and an id the registry cannot give is refused, naming the first
record that carries it, unless the run lets such records pass unchanged (``--unknown-schema-ids pass``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_migration.exceptions import RegistryNotFoundError, UnknownRecordIdsError
from kafka_migration.model.census import Census, CensusNote, PassedId
from kafka_migration.model.schemas import SubjectVersion
from kafka_migration.model.text import plural
from kafka_migration.registry import RegistryClient

UNKNOWN = "unknown to the source registry"
NO_SUBJECT = "the source registry holds no subject version of it (deleted?)"
MOST_LISTED = 20


@dataclass(frozen=True)
class ResolvedIds:
    """The census's ids that the topics' own subjects do not hold: the subject versions holding each, and the ids
    the source registry cannot give with why (``UNKNOWN`` or ``NO_SUBJECT``)."""

    holders: Mapping[int, tuple[SubjectVersion, ...]] = field(default_factory=dict)
    unknown: Mapping[int, str] = field(default_factory=dict)

    @property
    def subjects(self) -> tuple[str, ...]:
        """The subjects to sync besides the topics' own, sorted."""
        return tuple(sorted({v.subject for held in self.holders.values() for v in held}))

    @property
    def ids(self) -> frozenset[int]:
        return frozenset(self.holders)


def resolve_ids(census: Census, covered: Iterable[int], door: RegistryClient) -> ResolvedIds:
    """Ask the source registry for the subject versions of each id the census found outside ``covered`` (the ids of
    the topics' own subjects and their references), once per id."""
    known = set(covered)
    holders: dict[int, tuple[SubjectVersion, ...]] = {}
    unknown: dict[int, str] = {}
    for schema_id in sorted(census.ids() - known):
        try:
            held = tuple(door.subject_versions_of(schema_id))
        except RegistryNotFoundError:
            unknown[schema_id] = UNKNOWN
            continue
        if held:
            holders[schema_id] = held
        else:
            unknown[schema_id] = NO_SUBJECT
    return ResolvedIds(holders, unknown)


def refuse_unknown(census: Census, unknown: Mapping[int, str], registry_url: str) -> None:
    """Refuse a run whose records name ids the source registry cannot give: the first record that names one, then
    each id with why, how many keys and values carry it and the first of them, and the ways out."""
    if not unknown:
        return
    first = census.first_of(unknown)
    ordered = list(first.values())
    head = ordered[0]
    lines = "\n".join(
        f"  - id {s.schema_id}: {unknown[s.schema_id]}; "
        f"{plural(census.records_naming(s.schema_id), 'key or value', 'keys and values')}, the first {s.where()}"
        for s in ordered[:MOST_LISTED]
    )
    more = f"\n  ... and {len(ordered) - MOST_LISTED} more" if len(ordered) > MOST_LISTED else ""
    count = len(ordered)
    raise UnknownRecordIdsError(
        f"Source {head.topic}[{head.partition}] offset {head.offset}: its {head.part.value} names schema id "
        f"{head.schema_id}, which the source registry {registry_url} cannot give; nothing was written. "
        f"{count} schema id{'s' if count != 1 else ''} in the run's source records cannot be moved:\n{lines}{more}\n"
        "Let such records pass unchanged (--unknown-schema-ids pass: copied byte for byte, and counted), or, if "
        "these topics hold raw bytes that happen to start with a zero byte, copy them with --schema-ids off."
    )


def census_note(census: Census, resolved: ResolvedIds) -> CensusNote:
    """What the listing says of the census: how far it read, the subjects it added, the unknown ids let through."""
    passed = tuple(
        PassedId(schema_id, census.records_naming(schema_id), s)
        for schema_id, s in census.first_of(resolved.unknown).items()
    )
    return CensusNote(census.describe(), resolved.subjects, passed, census.complete)
