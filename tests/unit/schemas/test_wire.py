"""The wire format's header (schemas/wire.py): read as confluent-kafka reads it, its id rewritten and nothing else,
and the per-record proof that accepts exactly the mapped rewrite."""

from __future__ import annotations

import io

import pytest
from confluent_kafka.schema_registry import topic_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kafka_migration.exceptions import SchemaError, UnknownSchemaIdError
from kafka_migration.model.schemas import MAX_ID, IdMap, Mismatch, Outcome, RecordMismatch, SchemaFormat
from kafka_migration.schemas.wire import (
    NULL,
    Framed,
    Raw,
    RawReason,
    check,
    encode_indexes,
    header_id,
    parse,
    read_indexes,
    rewrite,
    translate,
)
from tests.unit.schemas.confluent import FakeRegistry, protobuf_classes

PROPERTY = settings(derandomize=True, max_examples=200, deadline=None)
IDS = st.integers(0, MAX_ID)
INDEXES = st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=4)
PAYLOADS = st.binary(max_size=40)
AVRO, PROTOBUF, JSON = SchemaFormat.AVRO, SchemaFormat.PROTOBUF, SchemaFormat.JSON


def framed(schema_id: int, payload: bytes, indexes: list[int] | None = None) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + (encode_indexes(indexes) if indexes else b"") + payload


@st.composite
def records(draw: st.DrawFn) -> tuple[SchemaFormat, int, tuple[int, ...] | None, bytes, bytes]:
    """A registry-encoded key or value: (format, id, message indexes or None, payload, its bytes)."""
    fmt = draw(st.sampled_from(SchemaFormat))
    schema_id, payload = draw(IDS), draw(PAYLOADS)
    indexes = draw(INDEXES) if fmt is PROTOBUF else None
    return fmt, schema_id, None if indexes is None else tuple(indexes), payload, framed(schema_id, payload, indexes)


@st.composite
def cases(draw: st.DrawFn) -> tuple[bytes | None, IdMap]:
    """A source key or value of any shape (null, raw bytes, a header whose id the map names or not) and a map."""
    fmt, schema_id, _, _, data = draw(records())
    value = draw(st.one_of(st.none(), st.binary(max_size=24), st.just(data)))
    mapped = draw(st.dictionaries(IDS, IDS, max_size=3))
    if draw(st.booleans()):
        mapped[schema_id] = draw(IDS)
    return value, IdMap.of(mapped, {i: fmt if i == schema_id else AVRO for i in mapped})


# -- reading -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fmt", "parsed"),
    [
        (None, AVRO, NULL),
        (b"", AVRO, Raw(RawReason.EMPTY)),
        (b"{}", JSON, Raw(RawReason.NO_MAGIC)),
        (b"\x01\x00\x00\x00\x07hi", AVRO, Raw(RawReason.NO_MAGIC)),  # magic 1: a GUID, which rides in a header
        (b"\x00\x00\x00\x07", AVRO, Raw(RawReason.SHORT)),
        (b"\x00\x00\x00\x00\x07", AVRO, Framed(7, None, 5)),
        (b"\x00\x01\x02\x03\x04payload", JSON, Framed(0x01020304, None, 5)),
        (b"\x00\x00\x00\x00\x07\x00pb", PROTOBUF, Framed(7, (0,), 6)),  # the single 0 byte: the first message
        (b"\x00\x00\x00\x00\x07\x04\x02\x04pb", PROTOBUF, Framed(7, (1, 2), 8)),  # count 2, then 1 and 2, zig-zag
        (b"\x00\x00\x00\x00\x07\x02\x01", PROTOBUF, Framed(7, (-1,), 7)),  # a negative index reads, as confluent's
        (b"\x00\x00\x00\x00\x07\x80\x00", PROTOBUF, Framed(7, (0,), 7)),  # an overlong 0 count, as confluent's
        (b"\x00\x00\x00\x00\x07", PROTOBUF, Raw(RawReason.BAD_INDEXES)),  # no count
        (b"\x00\x00\x00\x00\x07\x01", PROTOBUF, Raw(RawReason.BAD_INDEXES)),  # count -1
        (b"\x00\x00\x00\x00\x07\x04\x02", PROTOBUF, Raw(RawReason.BAD_INDEXES)),  # count 2, one index
        (b"\x00\x00\x00\x00\x07\x82", PROTOBUF, Raw(RawReason.BAD_INDEXES)),  # ends inside a varint
        (b"\x00\x00\x00\x00\x07\xc2\x9a\x0c", PROTOBUF, Raw(RawReason.BAD_INDEXES)),  # count 100,001
    ],
)
def test_a_key_or_value_reads_as_null_raw_or_framed(data: bytes | None, fmt: SchemaFormat, parsed: object) -> None:
    assert parse(data, fmt) == parsed
    assert header_id(data) == (None if data is None or len(data) < 5 or data[0] else int.from_bytes(data[1:5]))


@PROPERTY
@given(records())
def test_a_framed_record_gives_back_its_id_indexes_and_payload(record: tuple) -> None:
    fmt, schema_id, indexes, payload, data = record
    parsed = parse(data, fmt)
    assert isinstance(parsed, Framed)
    assert (parsed.schema_id, parsed.indexes, data[parsed.payload_start :]) == (schema_id, indexes, payload)


def _confluent_reads(data: bytes) -> tuple[tuple[int, ...], int] | None:
    """confluent-kafka's own reading of a Protobuf header: the indexes and where the payload starts, or None."""
    schema_id = SchemaId("PROTOBUF")
    stream = io.BytesIO(data)
    try:
        schema_id.from_bytes(stream)
    except (SerializationError, EOFError):
        return None
    return tuple(schema_id.message_indexes), stream.tell()  # type: ignore[arg-type]


@PROPERTY
@given(IDS, st.binary(max_size=12))
def test_message_indexes_read_exactly_as_confluent_kafka_reads_them(schema_id: int, rest: bytes) -> None:
    """Any bytes after a header, well formed or not: the same indexes and payload start, or both refuse."""
    data = framed(schema_id, rest)
    parsed = parse(data, PROTOBUF)
    ours = (parsed.indexes, parsed.payload_start) if isinstance(parsed, Framed) else None
    assert ours == _confluent_reads(data)
    assert read_indexes(data, 5) == ours


@PROPERTY
@given(INDEXES)
def test_message_indexes_are_written_as_confluent_kafka_writes_them(indexes: list[int]) -> None:
    theirs = io.BytesIO()
    SchemaId._encode_varints(theirs, indexes, zigzag=True)
    assert encode_indexes(indexes) == theirs.getvalue()
    assert encode_indexes([0]) == b"\x00"
    with pytest.raises(SchemaError, match="cannot be empty"):
        encode_indexes([])


# -- rewriting -----------------------------------------------------------------------------------------------------


@PROPERTY
@given(records(), IDS)
def test_a_rewrite_changes_the_id_and_keeps_every_other_byte(record: tuple, new_id: int) -> None:
    fmt, _, indexes, payload, data = record
    rewritten = rewrite(data, new_id)
    parsed = parse(rewritten, fmt)
    assert isinstance(parsed, Framed)
    assert (parsed.schema_id, parsed.indexes) == (new_id, indexes)
    assert rewritten[:1] + rewritten[5:] == data[:1] + data[5:]  # magic, index bytes and payload byte-identical
    assert rewritten[parsed.payload_start :] == payload
    assert rewrite(data, header_id(data)) == data  # type: ignore[arg-type]


@pytest.mark.parametrize("data", [b"", b"\x00\x00\x00\x07", b"{\x00\x00\x00\x07}"])
def test_there_is_no_id_to_rewrite_in_raw_bytes(data: bytes) -> None:
    with pytest.raises(SchemaError, match=f"Cannot rewrite the schema id of {len(data)} bytes"):
        rewrite(data, 9)
    with pytest.raises(SchemaError, match="does not fit"):
        rewrite(b"\x00\x00\x00\x00\x07", MAX_ID + 1)


@PROPERTY
@given(cases())
def test_translating_with_the_identity_map_changes_nothing(case: tuple[bytes | None, IdMap]) -> None:
    value, ids = case
    identity = IdMap.identity({i: ids.format(i) for i in ids})  # type: ignore[misc]
    assert translate(value, identity)[0] == value


def test_a_translation_rewrites_only_the_ids_the_map_names() -> None:
    ids = IdMap.of({7: 70, 8: 80}, {7: AVRO, 8: PROTOBUF})
    assert translate(framed(7, b"avro"), ids) == (framed(70, b"avro"), Outcome.TRANSLATED)
    assert translate(framed(8, b"pb", [2, 0]), ids) == (framed(80, b"pb", [2, 0]), Outcome.TRANSLATED)
    assert translate(framed(9, b"x"), ids) == (framed(9, b"x"), Outcome.UNCHANGED)  # not an id the map names
    assert translate(b"plain", ids) == (b"plain", Outcome.WITHOUT_HEADER)
    assert translate(None, ids) == (None, Outcome.WITHOUT_HEADER)
    bad_indexes = b"\x00\x00\x00\x00\x08\x01"  # id 8 is Protobuf, but confluent-kafka could not read this one
    assert translate(bad_indexes, ids) == (bad_indexes, Outcome.WITHOUT_HEADER)
    with pytest.raises(UnknownSchemaIdError, match="Schema id 9 is not in the id map"):
        translate(framed(9, b"x"), ids, strict=True)
    assert translate(b"plain", ids, strict=True) == (b"plain", Outcome.WITHOUT_HEADER)


# -- the per-record proof ------------------------------------------------------------------------------------------


@PROPERTY
@given(cases(), st.data())
def test_the_proof_accepts_the_mapped_rewrite_and_no_single_byte_changed(
    case: tuple[bytes | None, IdMap], data: st.DataObject
) -> None:
    source, ids = case
    target, outcome = translate(source, ids)
    assert check(source, target, ids) == outcome
    if target:
        at = data.draw(st.integers(0, len(target) - 1), label="byte changed")
        flip = data.draw(st.integers(1, 255), label="xor")
        changed = target[:at] + bytes([target[at] ^ flip]) + target[at + 1 :]
        assert isinstance(check(source, changed, ids), RecordMismatch)
    for longer_or_shorter in (target + b"\x00", target[:-1]) if target else ():
        assert isinstance(check(source, longer_or_shorter, ids), RecordMismatch)


@PROPERTY
@given(records(), IDS, IDS)
def test_the_proof_refuses_a_target_id_the_map_does_not_give(record: tuple, mapped: int, other: int) -> None:
    fmt, schema_id, _, _, source = record
    assume(other != mapped)
    ids = IdMap.of({schema_id: mapped}, fmt)
    wrong = check(source, rewrite(source, other), ids)
    assert wrong == RecordMismatch(Mismatch.WRONG_ID, schema_id, mapped, other)
    if other != schema_id:  # an id the map does not name must arrive as it was
        unmapped = check(source, rewrite(source, other), IdMap())
        assert unmapped == RecordMismatch(Mismatch.WRONG_ID, schema_id, schema_id, other)


@PROPERTY
@given(records(), IDS)
def test_the_proof_refuses_a_header_removed(record: tuple, mapped: int) -> None:
    fmt, schema_id, _, payload, source = record
    ids = IdMap.of({schema_id: mapped}, fmt)
    for stripped in (payload, source[5:]):
        found = check(source, stripped, ids)
        assert isinstance(found, RecordMismatch)
        if header_id(stripped) is None:
            assert found.reason is Mismatch.HEADER_DISAPPEARED


@PROPERTY
@given(st.binary(max_size=24), IDS, IDS)
def test_the_proof_refuses_a_header_added_to_raw_bytes(raw: bytes, schema_id: int, mapped: int) -> None:
    assume(header_id(raw) is None)
    ids = IdMap.of({schema_id: mapped}, AVRO)
    assert check(raw, framed(schema_id, raw), ids) == RecordMismatch(Mismatch.HEADER_APPEARED, None, None, schema_id)
    assert check(raw, raw, ids) is Outcome.WITHOUT_HEADER


def test_the_proof_names_what_differs_first() -> None:
    ids = IdMap.of({7: 70}, PROTOBUF)
    source = framed(7, b"payload", [1])
    assert check(source, framed(70, b"payload", [2]), ids) == RecordMismatch(Mismatch.INDEXES_DIFFER, 7, 70, 70)
    assert check(source, framed(7, b"paYload", [1]), ids) == RecordMismatch(Mismatch.PAYLOAD_DIFFERS, 7, 70, 7)
    assert check(source, b"\x01" + source[1:], ids) == RecordMismatch(Mismatch.HEADER_DISAPPEARED, 7, 70, None)
    assert check(None, None, ids) is Outcome.WITHOUT_HEADER
    assert check(None, b"", ids) == RecordMismatch(Mismatch.NULL_DIFFERS, None, None, None)
    assert check(source, None, ids) == RecordMismatch(Mismatch.NULL_DIFFERS, 7, 70, None)
    assert check(b"", b"", ids) is Outcome.WITHOUT_HEADER
    assert check(b"raw", b"raw!", ids) == RecordMismatch(Mismatch.PAYLOAD_DIFFERS, None, None, None)


# -- against confluent-kafka's own serializers, offline -------------------------------------------------------------

CONTEXT = SerializationContext("orders", MessageField.VALUE)
BY_TOPIC = {"subject.name.strategy": topic_subject_name_strategy}
SOURCE_ID, TARGET_ID = 0x01020304, 0x0A0B0C0D


def _carried(data: bytes, fmt: SchemaFormat, registry: FakeRegistry) -> tuple[bytes, FakeRegistry]:
    """``data`` translated to TARGET_ID, and a target registry that holds its schema under that id."""
    ids = IdMap.of({SOURCE_ID: TARGET_ID}, fmt)
    target, outcome = translate(data, ids)
    assert outcome is Outcome.TRANSLATED
    assert check(data, target, ids) is Outcome.TRANSLATED
    moved = FakeRegistry()
    moved.add(TARGET_ID, registry.get_schema(SOURCE_ID))
    return target, moved  # type: ignore[return-value]


def test_avro_serializer_s_records_parse_and_read_back_on_the_target_after_translation() -> None:
    """A fake registry: where the id sits is the question, not what a real registry answers."""
    registry = FakeRegistry(SOURCE_ID)
    schema = '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}'
    data = AvroSerializer(registry, schema, conf=BY_TOPIC)({"id": 42}, CONTEXT)
    assert parse(data, AVRO) == Framed(SOURCE_ID, None, 5)
    target, moved = _carried(data, AVRO, registry)  # type: ignore[arg-type]
    assert AvroDeserializer(moved, conf=BY_TOPIC)(target, CONTEXT) == {"id": 42}
    with pytest.raises(KeyError, match=str(SOURCE_ID)):  # what consumers hit untranslated: "Schema N not found"
        AvroDeserializer(moved, conf=BY_TOPIC)(data, CONTEXT)


def test_json_serializer_s_records_parse_and_read_back_on_the_target_after_translation() -> None:
    """A fake registry: where the id sits is the question, not what a real registry answers."""
    registry = FakeRegistry(SOURCE_ID)
    schema = '{"type": "object", "properties": {"id": {"type": "integer"}}}'
    data = JSONSerializer(schema, registry, conf=BY_TOPIC)({"id": 42}, CONTEXT)
    assert parse(data, JSON) == Framed(SOURCE_ID, None, 5)
    target, moved = _carried(data, JSON, registry)  # type: ignore[arg-type]
    assert JSONDeserializer(None, schema_registry_client=moved, conf=BY_TOPIC)(target, CONTEXT) == {"id": 42}


@pytest.mark.parametrize(
    ("message", "indexes"),
    [
        ("acme.Order", (0,)),
        ("acme.Order.Line", (0, 0)),
        ("acme.Order.Line.Detail", (0, 0, 0)),
        ("acme.Order.Note", (0, 1)),
        ("acme.Customer", (1,)),
        ("acme.Refund", (2,)),
    ],
)
def test_protobuf_serializer_s_message_indexes_parse_and_survive_translation(
    message: str, indexes: tuple[int, ...]
) -> None:
    """Messages of one file built at run time (no protoc here), each serialized by confluent-kafka's serializer
    against a fake registry: where the id and the message indexes sit is the question, not what a real registry
    answers. The translated record reads back, through the target id, as the same message."""
    registry = FakeRegistry(SOURCE_ID)
    cls = protobuf_classes()[message]
    value = cls()
    field = value.DESCRIPTOR.fields[0]
    setattr(value, field.name, 9 if field.type == field.TYPE_INT64 else "nine")
    data = ProtobufSerializer(cls, registry, BY_TOPIC)(value, CONTEXT)
    parsed = parse(data, PROTOBUF)
    assert isinstance(parsed, Framed)
    assert (parsed.schema_id, parsed.indexes) == (SOURCE_ID, indexes)
    assert cls.FromString(data[parsed.payload_start :]) == value
    target, moved = _carried(data, PROTOBUF, registry)
    assert target[5 : parsed.payload_start] == data[5 : parsed.payload_start]
    assert ProtobufDeserializer(cls, BY_TOPIC, moved)(target, CONTEXT) == value


# -- framed_heads: a column's headers at C speed, as the definition decides key by key -----------------------------


def _framed(data: bytes | None) -> bool:
    return data is not None and len(data) >= 5 and data[0] == 0


@st.composite
def heads_columns(draw: st.DrawFn) -> list[bytes | None]:
    """Columns of one kind (one id throughout, several ids, none framed) or mixed: nulls, empty, short, framed."""
    one = st.sampled_from([b"\x00\x00\x00\x00\x07", b"\x00\x01\x00\x00\x07", b"\x00\x00\x00\x00\x08"])
    items = st.one_of(
        st.none(),
        st.just(b""),
        st.binary(max_size=4).map(lambda b: b"\x00" + b[:3]),  # a first byte 0, under five bytes
        st.binary(min_size=1, max_size=6).filter(lambda b: b[0] != 0),
        st.tuples(one, st.binary(max_size=4)).map(lambda t: t[0] + t[1]),
    )
    kind = draw(st.sampled_from(["one id", "framed", "raw", "mixed"]))
    size = draw(st.integers(0, 8))
    if kind == "one id":
        head = draw(one)
        return [head + draw(st.binary(max_size=4)) for _ in range(size)]
    if kind == "framed":
        return [draw(one) + draw(st.binary(max_size=4)) for _ in range(size)]
    if kind == "raw":
        return [
            draw(st.one_of(st.none(), st.binary(min_size=1, max_size=6).filter(lambda b: b[0] != 0)))
            for _ in range(size)
        ]
    return [draw(items) for _ in range(size)]


@settings(max_examples=800, deadline=None)
@given(heads_columns())
def test_framed_heads_are_each_key_or_values_header_or_say_the_column_is_mixed(column: list[bytes | None]) -> None:
    from kafka_migration.schemas.wire import framed_heads

    zero_first = [d is not None and d[:1] == b"\x00" for d in column]
    if column and all(_framed(d) for d in column):
        expected: list[bytes] | None = [d[:5] for d in column]  # type: ignore[index]
    else:  # none with a first byte 0 (nothing to rewrite); else not one plain case (a short one is counted mixed)
        expected = None if any(zero_first) else []
    assert framed_heads(column) == expected
