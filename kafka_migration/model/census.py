"""Which schema ids a run's source records carry: the census, taken before anything is written.

A registry-encoded key or value names its schema by the id in its first five bytes (``schemas.wire``). The census
reads the run's planned source ranges (Spark tasks, or a bounded read in a dry run: ``run.census``) and keeps, per
partition and for keys and values apart, each distinct candidate id with the first offset that carries it and how
many records do: ids and offsets, never record data. The schema sync resolves them on the source registry before
anything is written: subjects of other naming strategies (RecordNameStrategy...) join the sync, and an id the
registry does not know is refused, naming the first record that carries it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_migration.model.schemas import RecordPart
from kafka_migration.model.text import plural

_PART_ORDER = {RecordPart.KEY: 0, RecordPart.VALUE: 1}


@dataclass(frozen=True)
class Sighting:
    """One candidate schema id in the keys (or values) of one partition: the first offset the census read it at,
    and how many of the records it read carry it there."""

    topic: str
    partition: int
    part: RecordPart
    schema_id: int
    offset: int
    records: int = 1

    @property
    def key(self) -> tuple[str, int, RecordPart, int]:
        return (self.topic, self.partition, self.part, self.schema_id)

    @property
    def place(self) -> tuple[str, int, int, int]:
        """Where it stands among the run's records: topic, partition, offset, then the key before the value."""
        return (self.topic, self.partition, self.offset, _PART_ORDER[self.part])

    def where(self) -> str:
        """``the key of orders[0] at offset 5``."""
        return f"the {self.part.value} of {self.topic}[{self.partition}] at offset {self.offset}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "part": self.part.value,
            "schema_id": self.schema_id,
            "offset": self.offset,
            "records": self.records,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sighting:
        return cls(
            str(data["topic"]),
            int(data["partition"]),
            RecordPart(data["part"]),
            int(data["schema_id"]),
            int(data["offset"]),
            int(data["records"]),
        )


def _merged(sightings: Iterable[Sighting]) -> tuple[Sighting, ...]:
    """One sighting per (topic, partition, part, id): the earliest offset, the records added up; in record order."""
    out: dict[tuple[str, int, RecordPart, int], Sighting] = {}
    for s in sightings:
        known = out.get(s.key)
        if known is not None:
            first = min(s.offset, known.offset)
            s = Sighting(s.topic, s.partition, s.part, s.schema_id, first, s.records + known.records)
        out[s.key] = s
    return tuple(sorted(out.values(), key=lambda s: (s.place, s.schema_id)))


@dataclass(frozen=True)
class Census:
    """The candidate schema ids of the records read: ``records`` read of the ``planned`` offsets (fewer where the
    source has gaps), ``complete`` when every planned range was read whole (a dry run reads each one's ends)."""

    sightings: tuple[Sighting, ...] = ()
    records: int = 0
    planned: int = 0
    complete: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "sightings", _merged(self.sightings))

    def merge(self, other: Census) -> Census:
        """Two censuses of different ranges (or of the two ends of one) as one."""
        return Census(
            self.sightings + other.sightings,
            self.records + other.records,
            self.planned + other.planned,
            self.complete and other.complete,
        )

    @classmethod
    def of(cls, parts: Iterable[Census]) -> Census:
        out = cls()
        for part in parts:
            out = out.merge(part)
        return out

    def ids(self) -> frozenset[int]:
        return frozenset(s.schema_id for s in self.sightings)

    def ids_of(self, topic: str) -> frozenset[int]:
        """The ids found in ``topic``'s keys and values."""
        return frozenset(s.schema_id for s in self.sightings if s.topic == topic)

    def first_of(self, ids: Iterable[int]) -> dict[int, Sighting]:
        """Each of ``ids`` that the census found -> its first sighting in record order (topic, partition, offset)."""
        wanted = set(ids)
        first: dict[int, Sighting] = {}
        for s in self.sightings:  # in record order
            if s.schema_id in wanted and s.schema_id not in first:
                first[s.schema_id] = s
        return dict(sorted(first.items(), key=lambda item: item[1].place))

    def records_naming(self, schema_id: int) -> int:
        return sum(s.records for s in self.sightings if s.schema_id == schema_id)

    def describe(self) -> str:
        """``12 records read (every planned record): 3 schema ids`` (a bounded census says how far it read)."""
        how = (
            "every planned record"
            if self.complete
            else f"of {plural(self.planned, 'planned offset')}: the first and last records of each partition"
        )
        return f"{plural(self.records, 'record')} read ({how}): {plural(len(self.ids()), 'schema id')}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "sightings": [s.to_dict() for s in self.sightings],
            "records": self.records,
            "planned": self.planned,
            "complete": self.complete,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Census:
        return cls(
            tuple(Sighting.from_dict(s) for s in data.get("sightings", ())),
            int(data.get("records", 0)),
            int(data.get("planned", 0)),
            bool(data.get("complete", True)),
        )


@dataclass(frozen=True)
class PassedId:
    """A schema id the source registry cannot give, let through unchanged (``--unknown-schema-ids pass``): the keys
    and values of the run that carry it, and the first of them."""

    schema_id: int
    records: int
    first: Sighting

    def to_dict(self) -> dict[str, Any]:
        return {"schema_id": self.schema_id, "records": self.records, "first": self.first.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PassedId:
        return cls(int(data["schema_id"]), int(data["records"]), Sighting.from_dict(data["first"]))


@dataclass(frozen=True)
class CensusNote:
    """What a run's schema listing says of its census: how far it read, the subjects found behind ids outside the
    topics' own subjects, and the unknown ids let through."""

    summary: str
    subjects: tuple[str, ...] = ()
    passed: tuple[PassedId, ...] = ()
    complete: bool = True

    def render(self) -> list[str]:
        lines = [f"  census of the source records: {self.summary}"]
        if self.subjects:
            lines.append(f"  subjects found behind ids in the records: {', '.join(self.subjects)}")
        for p in self.passed:
            lines.append(
                f"  unknown schema id {p.schema_id} passed unchanged (--unknown-schema-ids pass): "
                f"{plural(p.records, 'key or value', 'keys and values')}, first {p.first.where()}"
            )
        if not self.complete:
            lines.append(
                "  NOT COMPLETE: this dry run read each partition's ends only (--dry-run-census ends); the run reads "
                "every record and may find more ids and subjects: a dry run without that option lists them all"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "subjects": list(self.subjects),
            "passed": [p.to_dict() for p in self.passed],
            "complete": self.complete,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CensusNote:
        return cls(
            str(data.get("summary", "")),
            tuple(str(s) for s in data.get("subjects", ())),
            tuple(PassedId.from_dict(p) for p in data.get("passed", ())),
            bool(data.get("complete", True)),
        )
