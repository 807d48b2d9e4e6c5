"""Records whose schema ids are translated (``--schema-ids translate``): as the copy writes them, and their proof.

A slice with an id map (``PartitionSlice.id_map``) is copied with each key's and value's schema header rewritten
through it; everything else of a record (the payload, Protobuf's message indexes, the headers, the timestamp) is
written as read. A key or value whose header names an id the map lacks is refused, naming topic, partition and
offset: its schema was not registered on the target, and a consumer there would fail on it or, worse, decode it
with whatever schema the target gave that id.

The verification compares each target record with its source record as the copy must have written it, so the
counts and the order-sensitive checksum cover every byte of both sides, the ids included: the source side's
checksum is over the source records with their ids mapped (what the target must hold, byte for byte), the
target's over what it holds. ``RecordProof`` builds that expectation from the raw source bytes and the map
(a plain column with its own lookups, not the copy's; any other through ``translator``, and then each pair is
proven record by record), and proves each pair as ``schemas.wire.check`` decides: equal but for the id, and the
id the one the map gives. A wrong id on the target fails the proof and changes its checksum. It
counts the keys and values translated per partition.

Both work column by column (a batch's keys, then its values): the common column (every one framed, of ids the map
rewrites by their header alone; or none framed) in a few passes at C speed, anything else one by one through
``schemas.wire``; tests/unit/run/test_schema_records.py checks that they answer as ``wire`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import Any, NamedTuple

from kafka_migration.exceptions import SchemaError, UnknownSchemaIdError
from kafka_migration.model.checksums import Fields, batch_fields
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
from kafka_migration.schemas.wire import ID_END, Column, check, framed_heads, translate

TRANSLATED, UNCHANGED, WITHOUT_HEADER = Outcome.TRANSLATED, Outcome.UNCHANGED, Outcome.WITHOUT_HEADER
_MAGIC = b"\x00"


class Rewritten(NamedTuple):
    """A source batch as the target gets it: its messages as read (headers, timestamps, offsets), with each key and
    value as the copy writes it."""

    messages: list[Any]
    keys: Column
    values: Column


def _rewritten(column: Column, heads: list[bytes], news: dict[bytes, bytes]) -> Column:
    """Each framed key or value of ``column`` with its header (``heads``) replaced by ``news``' for it."""
    return list(map(bytes.replace, column, heads, map(news.__getitem__, heads), repeat(1)))  # type: ignore[arg-type]


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


def translated_column(column: Column, id_map: IdMap, one: Callable[[bytes | None], bytes | None]) -> Column:
    """``one`` (``translator``) over a batch's keys, or values: at C speed where every one is an Avro or JSON Schema
    key or value of an id the map has (the common column), or none is framed; else one by one."""
    heads = framed_heads(column)
    if heads is not None and not heads:
        return column  # nothing framed: nothing to rewrite (``one`` would give each back as it is)
    if heads:
        news: dict[bytes, bytes] = {}
        for head in set(heads):
            schema_id = int.from_bytes(head[1:], "big")
            fmt = id_map.format(schema_id)
            if fmt is None or fmt is SchemaFormat.PROTOBUF:
                break
            news[head] = _MAGIC + id_map.target(schema_id).to_bytes(4, "big")
        else:
            return _rewritten(column, heads, news)
    return list(map(one, column))


def translate_batch(batch: list[Any], id_map: IdMap, topic: str, partition: int, strict: bool) -> Rewritten:
    """The records of one source batch as the target gets them. ``strict`` (the copy): a header whose id the map
    lacks is refused, naming the topic, partition and offset; else (the verification) it passes as it is."""
    one = translator(id_map, strict)
    keys = [m.key() for m in batch]
    values = [m.value() for m in batch]
    try:
        return Rewritten(batch, translated_column(keys, id_map, one), translated_column(values, id_map, one))
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


def translated_fields(chunk: list[Any], id_map: IdMap, topic: str, partition: int, strict: bool) -> Fields:
    """``batch_fields`` of ``chunk`` as the target gets it (``translate_batch``)."""
    batch = translate_batch(chunk, id_map, topic, partition, strict)
    return batch.keys, batch.values, [m.headers() for m in chunk], [m.timestamp()[1] for m in chunk]


def translated_batches(
    batches: Iterable[list[Any]], id_map: IdMap | None, topic: str, partition: int, *, strict: bool
) -> Iterable[list[Any] | Rewritten]:
    """``batches`` of ``topic[partition]`` translated batch by batch; as they are without an id map. ``strict``: an
    id the map lacks is refused, naming the record; else passed on as it is (``--unknown-schema-ids pass``)."""
    if id_map is None:
        return batches
    return (translate_batch(batch, id_map, topic, partition, strict) for batch in batches)


def translated_window(
    reads: Iterator[tuple[int, list[Any], bool]], maps: list[IdMap | None], slices: list[PartitionSlice]
) -> Iterator[tuple[int, list[Any] | Rewritten, bool]]:
    """``read_ranges``' batches (range index, records, done), each translated by its own slice's id map."""
    for i, batch, done in reads:
        id_map = maps[i]
        piece = slices[i]
        yield (
            i,
            batch
            if id_map is None
            else translate_batch(batch, id_map, piece.source_topic, piece.partition, strict=not piece.pass_unknown_ids),
            done,
        )


class RecordProof:
    """The per-record proof of one partition: each target record's key and value against its source's, as
    ``wire.check`` decides (the id compared as a number with the map's, the rest byte for byte; anything but the
    plain cases asks ``wire.check`` itself, which names the mismatch). Called with each pair of equally long chunks
    (source messages, target messages and the target's fields); gives the fields the target must hold and the first
    mismatch, and counts each key's and value's outcome."""

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

    def _column(self, mine: Column, theirs: Column) -> tuple[Column, Outcome | None]:
        """``mine`` (a chunk's source keys, or values) as the target must hold it, and the one outcome of the whole
        column against ``theirs`` when it is a plain case, proven column-wise as ``outcome`` proves one: none framed
        and each pair equal (WITHOUT_HEADER), or every one an Avro or JSON Schema key or value whose target is it
        with the header the map gives (TRANSLATED). None: anything else, proven record by record."""
        heads = framed_heads(mine)
        if heads is not None and not heads:
            return mine, WITHOUT_HEADER if mine == theirs else None
        if heads:
            wanted: dict[bytes, bytes] = {}
            for head in set(heads):
                expected = self._expected_id(int.from_bytes(head[1:], "big"))
                if expected is None or expected < 0:
                    break
                wanted[head] = _MAGIC + expected.to_bytes(4, "big")
            else:
                column = _rewritten(mine, heads, wanted)
                return column, TRANSLATED if column == theirs else None
        return list(map(translator(self.id_map, False), mine)), None

    def __call__(
        self, sources: list[Any], targets: list[Any], theirs: Fields
    ) -> tuple[Fields, tuple[int, int, str] | None]:
        """The fields the target must hold for ``sources`` and the first pair of ``sources`` and ``targets`` (as
        long, ``theirs`` their fields) the proof refutes, or None. Without ``targets`` (the target holds fewer
        records) nothing is proven: only the fields are given."""
        keys, values, headers, stamps = batch_fields(sources)
        new_keys, key = self._column(keys, theirs[0])  # without targets no outcome is kept: see below
        new_values, value = self._column(values, theirs[1])
        expected = (new_keys, new_values, headers, stamps)
        if not targets:
            return expected, None
        if key is not None and value is not None:  # the common chunk: every key and value one plain case
            n = len(sources)
            self.seen[RecordPart.KEY, key] = self.seen.get((RecordPart.KEY, key), 0) + n
            self.seen[RecordPart.VALUE, value] = self.seen.get((RecordPart.VALUE, value), 0) + n
            return expected, None
        return expected, self._each(sources, targets, (keys, values), theirs)

    def _each(
        self, sources: list[Any], targets: list[Any], mine: tuple[Column, Column], theirs: Fields
    ) -> tuple[int, int, str] | None:
        """The proof record by record: each key's and value's outcome counted, and the first mismatch."""
        outcome = self.outcome
        counts: dict[RecordPart, dict[Outcome, int]] = {part: dict.fromkeys(Outcome, 0) for part in RecordPart}
        first = None
        # chunks of different lengths are no plain case: strict zips refuse them
        for source, target, *pairs in zip(sources, targets, mine[0], theirs[0], mine[1], theirs[1], strict=True):
            for part, a, b in ((RecordPart.KEY, pairs[0], pairs[1]), (RecordPart.VALUE, pairs[2], pairs[3])):
                verdict = outcome(a, b)
                if type(verdict) is RecordMismatch:
                    first = first or (source.offset(), target.offset(), f"{part}: {verdict.describe()}")
                else:
                    counts[part][verdict] += 1  # type: ignore[index]
        for part, found in counts.items():
            for which, n in found.items():
                self.seen[part, which] = self.seen.get((part, which), 0) + n
        return first

    def counts(self) -> SchemaCounts:
        def part(which: RecordPart) -> PartCounts:
            return PartCounts(*(self.seen.get((which, o), 0) for o in (TRANSLATED, UNCHANGED, WITHOUT_HEADER)))

        return SchemaCounts(self.topic, self.partition, part(RecordPart.KEY), part(RecordPart.VALUE))
