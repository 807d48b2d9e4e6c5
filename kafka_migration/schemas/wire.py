"""The wire format's schema header: read it, rewrite its id, and prove a target key or value is its source's with
only the id changed.

A registry-encoded key or value (Confluent's wire format, also Apicurio's ccompat, Redpanda's and Karapace's) is
the magic byte 0, the schema id in four bytes big-endian, for Protobuf the message indexes (zig-zag varints: a
count, then that many indexes into the schema's nested messages; the single byte 0 stands for ``[0]``, the first
message), then the payload. Anything else is raw bytes, copied as they are.

A first byte of 0 does not prove a header: only an id the source registry knows does. So ``parse`` and
``header_id`` give the candidate id and the caller decides; ``translate`` and ``check`` decide by the run's
``IdMap``, which names the source ids whose schemas were looked up and registered. confluent-kafka 2.16 also
writes the schema as a GUID in a Kafka record header (``__value_schema_id``, magic byte 1) with an unprefixed
payload: such keys and values read here as raw, and their GUID is not rewritten.

``check`` does not call ``rewrite``: it compares the two byte strings region by region, so that a bug in the
rewrite is not repeated by the proof that should catch it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import repeat
from operator import itemgetter

from kafka_migration.exceptions import SchemaError
from kafka_migration.model.schemas import (
    MAX_ID,
    IdMap,
    Mismatch,
    Outcome,
    RecordMismatch,
    SchemaFormat,
)

MAGIC = 0
ID_END = 5  # the magic byte and the four id bytes
MAX_INDEX_COUNT = 100_000  # confluent-kafka refuses a longer message-index array
_MAGIC_BYTE = bytes([MAGIC])
Column = list[bytes | None]  # a batch's keys, or its values
_HEAD = itemgetter(slice(0, ID_END))
_FIRST_BYTE = itemgetter(0)


class RawReason(StrEnum):
    """Why a key or value has no header."""

    EMPTY = "empty"
    NO_MAGIC = "no_magic"  # its first byte is not 0
    SHORT = "short"  # a first byte 0, but fewer than the five bytes of a header
    BAD_INDEXES = "bad_indexes"  # Protobuf: the message indexes do not read, so confluent-kafka would refuse it


@dataclass(frozen=True)
class Null:
    """A null key or value: a tombstone's value, or a record without a key."""


@dataclass(frozen=True)
class Raw:
    """Bytes without a header."""

    reason: RawReason


@dataclass(frozen=True)
class Framed:
    """A header: the candidate schema id, Protobuf's message indexes (None for Avro and JSON Schema), and where the
    payload starts (5, or after the indexes)."""

    schema_id: int
    indexes: tuple[int, ...] | None
    payload_start: int


NULL = Null()


def framed_heads(column: Column) -> list[bytes] | None:
    """The 5-byte headers of ``column``'s keys or values when each has one (a first byte 0 and at least five
    bytes); [] when none starts with a 0 byte; None for anything else (some framed, some not; a first byte 0 too
    short for a header), which the callers go through one by one. The common columns (one id throughout; none
    framed) take one or two C-level passes: the copy, the census and the proof go through every key and value."""
    first = column[0][:ID_END] if column and column[0] else b""
    try:
        if len(first) == ID_END and first[0] == MAGIC and all(map(bytes.startswith, column, repeat(first))):
            return [first] * len(column)  # one id throughout (one object: its hash is computed once)
        firsts = set(map(_FIRST_BYTE, column))
    except (TypeError, IndexError):  # a null (a tombstone's value, a record without a key) or an empty one
        return None if any(map(bytes.startswith, filter(None, column), repeat(_MAGIC_BYTE))) else []
    if MAGIC not in firsts:
        return []
    if len(firsts) > 1:
        return None
    heads = list(map(_HEAD, column))
    return heads if min(map(len, set(heads))) == ID_END else None


def header_id(data: bytes | None) -> int | None:
    """The candidate schema id of a key or value: bytes 1-4 when the first byte is 0 and there are five; else None."""
    if data is None or len(data) < ID_END or data[0] != MAGIC:
        return None
    return int.from_bytes(data[1:ID_END], "big")


def parse(data: bytes | None, fmt: SchemaFormat) -> Null | Raw | Framed:
    """What a key or value's first bytes say, read as confluent-kafka's deserializers read them for ``fmt``."""
    if data is None:
        return NULL
    if not data:
        return Raw(RawReason.EMPTY)
    if data[0] != MAGIC:
        return Raw(RawReason.NO_MAGIC)
    if len(data) < ID_END:
        return Raw(RawReason.SHORT)
    schema_id = int.from_bytes(data[1:ID_END], "big")
    if fmt is not SchemaFormat.PROTOBUF:
        return Framed(schema_id, None, ID_END)
    read = read_indexes(data, ID_END)
    return Raw(RawReason.BAD_INDEXES) if read is None else Framed(schema_id, read[0], read[1])


def _read_varint(data: bytes, position: int) -> tuple[int, int] | None:
    """A zig-zag varint at ``position`` and the position after it; None when the bytes end inside it."""
    value = shift = 0
    while True:
        if position >= len(data):
            return None
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), position


def read_indexes(data: bytes, position: int) -> tuple[tuple[int, ...], int] | None:
    """Protobuf's message indexes at ``position`` and where they end, as confluent-kafka reads them: a count (0
    stands for ``[0]`` alone), then that many indexes; None where it would refuse them (the bytes end inside, or a
    count below 0 or above 100,000). Overlong varints and negative indexes read as it reads them."""
    read = _read_varint(data, position)
    if read is None:
        return None
    count, position = read
    if not 0 <= count <= MAX_INDEX_COUNT:
        return None
    if count == 0:
        return (0,), position
    indexes = []
    for _ in range(count):
        read = _read_varint(data, position)
        if read is None:
            return None
        index, position = read
        indexes.append(index)
    return tuple(indexes), position


def _write_varint(out: bytearray, value: int) -> None:
    value = (value << 1) ^ (value >> 63)  # zig-zag, for values of 64 bits as Protobuf's are
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_indexes(indexes: Sequence[int]) -> bytes:
    """Message indexes as confluent-kafka's serializer writes them: ``[0]`` as the single byte 0, else the count
    and the indexes as zig-zag varints. For tests and tools that make records; a rewrite never re-encodes them."""
    if not indexes:
        raise SchemaError("Protobuf message indexes cannot be empty: the first message is [0].")
    if list(indexes) == [0]:
        return b"\x00"
    out = bytearray()
    _write_varint(out, len(indexes))
    for index in indexes:
        _write_varint(out, index)
    return bytes(out)


def rewrite(data: bytes, schema_id: int) -> bytes:
    """``data`` with the id of its header replaced by ``schema_id``; every other byte (the magic byte, Protobuf's
    message indexes, the payload) as it was."""
    if len(data) < ID_END or data[0] != MAGIC:
        first = f", first byte {data[0]}" if data else ""
        raise SchemaError(f"Cannot rewrite the schema id of {len(data)} bytes{first}: they have no schema header.")
    if isinstance(schema_id, bool) or not 0 <= schema_id <= MAX_ID:
        raise SchemaError(f"Schema id {schema_id!r} does not fit the header's four bytes.")
    return data[:1] + schema_id.to_bytes(4, "big") + data[ID_END:]


def _decide(data: bytes, id_map: IdMap) -> tuple[Outcome, Framed | None]:
    """Whether a key or value is translated: a header whose id the map names (for Protobuf, with indexes that read)."""
    source_id = header_id(data)
    if source_id is None:
        return Outcome.WITHOUT_HEADER, None
    fmt = id_map.format(source_id)
    if fmt is None:
        return Outcome.UNCHANGED, None
    framing = parse(data, fmt)
    if isinstance(framing, Framed):
        return Outcome.TRANSLATED, framing
    return Outcome.WITHOUT_HEADER, None


def translate(data: bytes | None, id_map: IdMap, strict: bool = False) -> tuple[bytes | None, Outcome]:
    """A source key or value as the target gets it, and what became of it. A header whose id the map names gets
    the map's id; anything else passes byte for byte (``strict``: a header-shaped prefix whose id the map does not
    name is an error that names the id, for topics known to hold registry-encoded records only)."""
    if data is None:
        return None, Outcome.WITHOUT_HEADER
    outcome, framing = _decide(data, id_map)
    if framing is not None:
        return rewrite(data, id_map.target(framing.schema_id)), outcome
    source_id = header_id(data)
    if strict and outcome is Outcome.UNCHANGED and source_id is not None:
        id_map.target(source_id)  # raises UnknownSchemaIdError, naming the id
    return data, outcome


def check(source: bytes | None, target: bytes | None, id_map: IdMap) -> Outcome | RecordMismatch:
    """The per-record proof: ``target`` is ``source`` with its header's id replaced by the map's, and nothing else
    changed; a key or value the map does not translate arrived byte for byte. Gives the outcome, else the first
    difference found (header, then message indexes, then payload, then the id)."""
    source_id, target_id = header_id(source), header_id(target)
    if source is None or target is None:
        if source is None and target is None:
            return Outcome.WITHOUT_HEADER
        return RecordMismatch(Mismatch.NULL_DIFFERS, source_id, _expected(source_id, id_map), target_id)
    outcome, framing = _decide(source, id_map)
    if framing is not None:
        expected = id_map.target(framing.schema_id)
        return _check_translated(source, target, framing, expected, target_id) or outcome
    if target == source:
        return outcome
    if source_id is None:
        reason = Mismatch.PAYLOAD_DIFFERS if target_id is None else Mismatch.HEADER_APPEARED
    elif target_id is None:
        reason = Mismatch.HEADER_DISAPPEARED
    elif target[ID_END:] == source[ID_END:]:
        reason = Mismatch.WRONG_ID
    else:
        reason = Mismatch.PAYLOAD_DIFFERS
    return RecordMismatch(reason, source_id, source_id, target_id)


def _check_translated(
    source: bytes, target: bytes, framing: Framed, expected: int, target_id: int | None
) -> RecordMismatch | None:
    start = framing.payload_start
    if target_id is None:
        reason = Mismatch.HEADER_DISAPPEARED
    elif target[ID_END:start] != source[ID_END:start]:
        reason = Mismatch.INDEXES_DIFFER
    elif target[start:] != source[start:]:
        reason = Mismatch.PAYLOAD_DIFFERS
    elif target_id != expected:
        reason = Mismatch.WRONG_ID
    else:
        return None
    return RecordMismatch(reason, framing.schema_id, expected, target_id)


def _expected(source_id: int | None, id_map: IdMap) -> int | None:
    if source_id is None:
        return None
    mapped = id_map.get(source_id)
    return source_id if mapped is None else mapped
