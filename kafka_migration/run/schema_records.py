"""Records whose schema ids are translated (``--schema-ids translate``): as the copy writes them, and their proof.

A slice with an id map (``PartitionSlice.id_map``) is copied with each key's and value's schema header rewritten
through it (``schemas.wire.translate``); everything else of a record (the payload, Protobuf's message indexes,
the headers, the timestamp) is written as read. A key or value whose header names an id the map lacks is
refused, naming topic, partition and offset: its schema was not registered on the target, and a consumer there
would fail on it or, worse, decode it with whatever schema the target gave that id.

The verification compares each target record with its source record as the copy must have written it, so the
counts and the order-sensitive checksum cover every byte of both sides, the ids included: the source side's
checksum is over the source records with their ids mapped (what the target must hold, byte for byte), the
target's over what it holds. A wrong id on the target changes its checksum. Then ``RecordProof`` proves each
pair again from the raw source bytes as ``schemas.wire.check`` decides (which does not use the rewrite): equal
but for the id, and the id the one the map gives. It counts the keys and values translated per partition.

Both run per record, so their common cases are inline (``translator``, ``RecordProof.outcome``) and anything
else goes to ``schemas.wire``; tests/unit/run/test_schema_records.py checks that they answer as ``wire`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kafka_migration.exceptions import SchemaError, UnknownSchemaIdError
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.model.schemas import (
    IdMap,
    Outcome,
    PartCounts,
    RecordMismatch,
    RecordPart,
    SchemaCounts,
    SchemaFormat,
)
from kafka_migration.schemas.wire import ID_END, check, translate

TRANSLATED, UNCHANGED, WITHOUT_HEADER = Outcome.TRANSLATED, Outcome.UNCHANGED, Outcome.WITHOUT_HEADER


class Translated(tuple):  # type: ignore[type-arg]
    """A source record as the target gets it: its key and value translated, the rest of the message as read;
    ``source_key`` and ``source_value`` keep the bytes read from the source, for the proof. Built from the tuple
    (message, key, value, source key, source value): a tuple's constructor, not an ``__init__`` per record."""

    __slots__ = ()

    def key(self) -> bytes | None:
        return self[1]  # type: ignore[no-any-return]

    def value(self) -> bytes | None:
        return self[2]  # type: ignore[no-any-return]

    @property
    def source_key(self) -> bytes | None:
        return self[3]  # type: ignore[no-any-return]

    @property
    def source_value(self) -> bytes | None:
        return self[4]  # type: ignore[no-any-return]

    def headers(self) -> Any:
        return self[0].headers()

    def timestamp(self) -> tuple[int, int]:
        return self[0].timestamp()  # type: ignore[no-any-return]

    def offset(self) -> int:
        return self[0].offset()  # type: ignore[no-any-return]

    def partition(self) -> int:
        return self[0].partition()  # type: ignore[no-any-return]

    def topic(self) -> str:
        return self[0].topic()  # type: ignore[no-any-return]


def translator(id_map: IdMap, strict: bool) -> Callable[[bytes | None], bytes | None]:
    """``wire.translate``'s result for a key or value, fast: each distinct 5-byte header of Avro and JSON Schema
    ids is looked up once and its bytes reused; Protobuf ids (message indexes to read) go through ``wire``."""
    prefixes: dict[bytes, bytes | None] = {}

    def one(data: bytes | None) -> bytes | None:
        if data is None or len(data) < ID_END or data[0] != 0:
            return data
        prefix = data[:ID_END]
        new = prefixes.get(prefix, _UNSEEN)
        if new is _UNSEEN:
            schema_id = int.from_bytes(prefix[1:], "big")
            fmt = id_map.format(schema_id)
            if fmt is None:
                new = None
            elif fmt is SchemaFormat.PROTOBUF:
                new = _PROTOBUF
            else:
                new = b"\x00" + id_map.target(schema_id).to_bytes(4, "big")
            prefixes[prefix] = new
        if new is None:
            if strict:
                id_map.target(int.from_bytes(prefix[1:], "big"))  # raises UnknownSchemaIdError, naming the id
            return data
        if new is _PROTOBUF:
            return translate(data, id_map, strict)[0]
        return new + data[ID_END:]

    return one


_UNSEEN = b"unseen"
_PROTOBUF = b"protobuf"


def translated_column(
    column: list[bytes | None], id_map: IdMap, one: Callable[[bytes | None], bytes | None]
) -> list[bytes | None]:
    """``one`` (``translator``) over a batch's keys, or values: in one pass where every one is an Avro or JSON Schema
    key or value of an id the map has (the common batch), else one by one."""
    heads = [c[:ID_END] for c in column if c is not None and len(c) >= ID_END and c[0] == 0]
    if not heads:
        return column  # nothing framed: nothing to rewrite (``one`` would give each back as it is)
    if len(heads) == len(column):
        news: dict[bytes, bytes] = {}
        for head in set(heads):
            schema_id = int.from_bytes(head[1:], "big")
            fmt = id_map.format(schema_id)
            if fmt is None or fmt is SchemaFormat.PROTOBUF:
                break
            news[head] = b"\x00" + id_map.target(schema_id).to_bytes(4, "big")
        else:
            return [news[c[:ID_END]] + c[ID_END:] for c in column]  # type: ignore[index]
    return list(map(one, column))


def translate_batch(batch: list[Any], id_map: IdMap, topic: str, partition: int, strict: bool) -> list[Translated]:
    """The records of one source batch as the target gets them. ``strict`` (the copy): a header whose id the map
    lacks is refused, naming the topic, partition and offset; else (the verification) it passes as it is."""
    one = translator(id_map, strict)
    keys = [m.key() for m in batch]
    values = [m.value() for m in batch]
    try:
        new_keys, new_values = translated_column(keys, id_map, one), translated_column(values, id_map, one)
        return list(map(Translated, zip(batch, new_keys, new_values, keys, values, strict=True)))
    except UnknownSchemaIdError as exc:
        message = next(m for m in batch if _names(one, m))
        raise SchemaError(
            f"Source {topic}[{partition}] offset {message.offset()}: a key or value names schema id "
            f"{exc.schema_id}, which is not among the {len(id_map)} ids of the topic's subjects registered on "
            "the target; nothing from this record on was copied. Its schema is under a subject this run does "
            "not move (e.g. RecordNameStrategy): register it on the target, or let such records pass unchanged "
            "(--unknown-schema-ids pass; they are counted), or copy the topic with --schema-ids off if its "
            "records are raw bytes that start with a zero byte."
        ) from exc


def _names(one: Callable[[bytes | None], bytes | None], message: Any) -> bool:
    """Whether ``message``'s key or value names an id ``one`` refuses (the first such is the one reported)."""
    try:
        one(message.key())
        one(message.value())
    except UnknownSchemaIdError:
        return True
    return False


def translated_batches(
    batches: Iterable[list[Any]], id_map: IdMap | None, topic: str = "", partition: int = 0, strict: bool = False
) -> Iterable[list[Any]]:
    """``batches`` translated batch by batch; as they are without an id map. ``strict`` (the copy, which names its
    ``topic`` and ``partition``): an id the map lacks is refused; else (the verification) passed on as it is."""
    if id_map is None:
        return batches
    return (translate_batch(batch, id_map, topic, partition, strict) for batch in batches)


def translated_window(
    reads: Iterator[tuple[int, list[Any], bool]], maps: list[IdMap | None], slices: list[PartitionSlice]
) -> Iterator[tuple[int, list[Any], bool]]:
    """``read_ranges``' batches (range index, records, done), each translated by its own slice's id map."""
    for i, batch, done in reads:
        id_map = maps[i]
        if id_map is not None:
            piece = slices[i]
            batch = translate_batch(
                batch, id_map, piece.source_topic, piece.partition, strict=not piece.pass_unknown_ids
            )
        yield i, batch, done


class RecordProof:
    """The per-record proof of one partition: each target record's key and value against its source's, as
    ``wire.check`` decides (the id compared as a number with the map's, the rest byte for byte; anything but the
    plain cases asks ``wire.check`` itself, which names the mismatch). Called with each pair of equally long chunks
    (source records as ``Translated``, target messages); counts each key's and value's outcome, and gives the first
    mismatch."""

    def __init__(self, id_map: IdMap, topic: str, partition: int) -> None:
        self.id_map = id_map
        self.topic = topic
        self.partition = partition
        self.seen: dict[tuple[RecordPart, Outcome], int] = {}
        self._expected: dict[int, int | None] = {}  # source id -> the map's target id; None: not in the map

    def outcome(self, mine: bytes | None, theirs: bytes | None) -> Outcome | RecordMismatch:
        """``wire.check(mine, theirs, id_map)``: the same answer, the common cases without its general path."""
        if mine is None or len(mine) < ID_END or mine[0] != 0:
            return Outcome.WITHOUT_HEADER if mine == theirs else check(mine, theirs, self.id_map)
        expected = self._expected_id(int.from_bytes(mine[1:ID_END], "big"))
        if (
            expected is not None
            and expected >= 0
            and theirs is not None
            and len(theirs) == len(mine)
            and theirs[0] == 0
            and int.from_bytes(theirs[1:ID_END], "big") == expected
            and theirs[ID_END:] == mine[ID_END:]
        ):
            return Outcome.TRANSLATED
        if expected is None and mine == theirs:
            return Outcome.UNCHANGED
        return check(mine, theirs, self.id_map)

    def _expected_id(self, source_id: int) -> int | None:
        """The map's target id for ``source_id``; -2 for a Protobuf id (message indexes to read), None: not mapped."""
        expected = self._expected.get(source_id, -1)
        if expected == -1:
            fmt = self.id_map.format(source_id)
            expected = None if fmt is None else -2 if fmt is SchemaFormat.PROTOBUF else self.id_map.target(source_id)
            self._expected[source_id] = expected
        return expected

    def _plain(self, mine: list[bytes | None], theirs: list[bytes | None]) -> Outcome | None:
        """The one outcome of a whole column (a chunk's keys, or values) when it is a plain case, proven column-wise
        as ``outcome`` proves one: none framed and each pair equal (WITHOUT_HEADER), or every one an Avro or JSON
        Schema key or value whose target is its bytes after the header with the header the map gives (TRANSLATED).
        None: anything else, proven record by record."""
        heads = [m[:ID_END] for m in mine if m is not None and len(m) >= ID_END and m[0] == 0]
        if not heads:
            return WITHOUT_HEADER if mine == theirs else None
        if len(heads) != len(mine) or None in theirs:
            return None
        wanted: dict[bytes, bytes] = {}
        for head in set(heads):
            expected = self._expected_id(int.from_bytes(head[1:], "big"))
            if expected is None or expected < 0:
                return None
            wanted[head] = b"\x00" + expected.to_bytes(4, "big")
        if [t[:ID_END] for t in theirs] != [wanted[h] for h in heads]:  # type: ignore[index]
            return None
        if [m[ID_END:] for m in mine] != [t[ID_END:] for t in theirs]:  # type: ignore[index]
            return None
        return TRANSLATED

    def __call__(self, sources: list[Any], targets: list[Any]) -> tuple[int, int, str] | None:
        # chunks of different lengths are no plain case: the record by record loop below refuses them
        key = self._plain([s.source_key for s in sources], [t.key() for t in targets])
        if key is not None:
            value = self._plain([s.source_value for s in sources], [t.value() for t in targets])
            if value is not None:  # the common chunk: every key and value one plain case
                n = len(sources)
                self.seen[RecordPart.KEY, key] = self.seen.get((RecordPart.KEY, key), 0) + n
                self.seen[RecordPart.VALUE, value] = self.seen.get((RecordPart.VALUE, value), 0) + n
                return None
        outcome = self.outcome
        keys: dict[Outcome, int] = dict.fromkeys(Outcome, 0)
        values: dict[Outcome, int] = dict.fromkeys(Outcome, 0)
        first = None
        for source, target in zip(sources, targets, strict=True):
            verdict = outcome(source.source_key, target.key())
            if type(verdict) is RecordMismatch:
                first = first or (source.offset(), target.offset(), f"key: {verdict.describe()}")
            else:
                keys[verdict] += 1  # type: ignore[index]
            verdict = outcome(source.source_value, target.value())
            if type(verdict) is RecordMismatch:
                first = first or (source.offset(), target.offset(), f"value: {verdict.describe()}")
            else:
                values[verdict] += 1  # type: ignore[index]
        for part, counts in ((RecordPart.KEY, keys), (RecordPart.VALUE, values)):
            for found, n in counts.items():
                self.seen[part, found] = self.seen.get((part, found), 0) + n
        return first

    def counts(self) -> SchemaCounts:
        def part(which: RecordPart) -> PartCounts:
            return PartCounts(*(self.seen.get((which, o), 0) for o in (TRANSLATED, UNCHANGED, WITHOUT_HEADER)))

        return SchemaCounts(self.topic, self.partition, part(RecordPart.KEY), part(RecordPart.VALUE))
