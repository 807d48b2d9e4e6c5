"""Translate mode's per-record work without a broker: the copy's translation (refusing an id the map lacks, naming
topic, partition and offset), and the verification's checksum and per-record proof (a wrong id caught)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_migration.exceptions import ForeignRecordsError, SchemaError, UnknownSchemaIdError
from kafka_migration.model.checksums import batch_fields
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.model.schemas import IdMap, Outcome, PartCounts, SchemaCounts, SchemaFormat
from kafka_migration.run.copy import reconcile_batches
from kafka_migration.run.schema_records import (
    RecordProof,
    Rewritten,
    translate_batch,
    translated_batches,
    translated_column,
    translated_fields,
    translated_window,
    translator,
)
from kafka_migration.run.verify import compare_ranges
from kafka_migration.schemas.wire import check, rewrite, translate
from tests.unit.run.test_batch_compare import Msg

ID_MAP = IdMap.of({7: 107, 8: 108}, SchemaFormat.AVRO)


def framed(schema_id: int, payload: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + payload


def source_records() -> list[Msg]:
    return [
        Msg(0, framed(8, b"k0"), framed(7, b"v0"), None, 1000),
        Msg(1, b"raw-key", framed(7, b"v1"), [("h", b"x")], 1001),  # a key without a header
        Msg(2, framed(8, b"k2"), None, None, 1002),  # a tombstone
        Msg(3, None, b"\x01not-framed", None, 1003),  # no key, a value without a header
    ]


def as_copied(records: list[Msg], id_map: IdMap) -> list[Msg]:
    """The target as a correct copy leaves it (offsets from 50), built with wire.rewrite, not with the copy."""

    def mapped(data: Any) -> Any:
        if data is None or data[:1] != b"\x00":
            return data
        target = id_map.get(int.from_bytes(data[1:5], "big"))
        return data if target is None else rewrite(data, target)  # an id outside the map: as it is

    return [Msg(50 + m.offset(), mapped(m.key()), mapped(m.value()), m.headers(), m.timestamp()[1]) for m in records]


def test_translate_batch_rewrites_keys_and_values_and_keeps_the_rest() -> None:
    records = source_records()
    out = translate_batch(records, ID_MAP, "orders", 0, strict=True)
    copied = as_copied(source_records(), ID_MAP)
    assert (out.keys, out.values) == ([m.key() for m in copied], [m.value() for m in copied])
    assert out.messages is records  # headers, timestamps and offsets as read
    fields = translated_fields(records, ID_MAP, "orders", 0, strict=True)
    assert fields == (out.keys, out.values, [None, [("h", b"x")], None, None], [1000, 1001, 1002, 1003])


def test_an_id_the_map_lacks_is_refused_naming_topic_partition_and_offset() -> None:
    records = [*source_records(), Msg(4, None, framed(9, b"v4"), None, 1004)]
    with pytest.raises(SchemaError) as caught:
        translate_batch(records, ID_MAP, "orders", 0, strict=True)
    assert "Source orders[0] offset 4" in str(caught.value) and "schema id 9" in str(caught.value)
    assert caught.value.__cause__ is not None
    passed = translate_batch(records, ID_MAP, "orders", 0, strict=False)  # the verification passes it on unchanged
    assert passed.values[4] == framed(9, b"v4")


def test_no_id_map_leaves_the_batches_as_they_are() -> None:
    batches = [source_records()]
    assert translated_batches(batches, None, "orders", 0, strict=True) is batches


def compare(target: list[Msg], id_map: IdMap = ID_MAP) -> tuple[Any, RecordProof]:
    proof = RecordProof(id_map, "orders", 0)
    return compare_ranges([source_records()], [target], 50, proof=proof), proof


def test_a_correct_copy_matches_on_count_checksum_and_proof_and_is_counted() -> None:
    found, proof = compare(as_copied(source_records(), ID_MAP))
    assert found.first is None and found.source.hexdigest() == found.target.hexdigest()
    assert found.source.count == found.target.count == 4
    counts = proof.counts()
    assert counts.keys == PartCounts(translated=2, unchanged=0, without_header=2)
    assert counts.values == PartCounts(translated=2, unchanged=0, without_header=2)


def test_a_planted_wrong_id_fails_the_checksum_and_the_proof_names_it() -> None:
    target = as_copied(source_records(), ID_MAP)
    target[1] = Msg(51, target[1].key(), framed(108, b"v1"), [("h", b"x")], 1001)  # a valid id, another schema
    found, _ = compare(target)
    assert found.source.hexdigest() != found.target.hexdigest()
    assert found.first == (
        1,
        51,
        "value: the target's schema id is not the mapped one (source id 7, expected 107, target id 108)",
    )


def test_an_untranslated_copy_fails_although_its_bytes_equal_the_source() -> None:
    found, _ = compare(source_records_at_50())
    assert found.first is not None and found.first[:2] == (0, 50) and "key" in found.first[2]
    assert found.source.hexdigest() != found.target.hexdigest()


def source_records_at_50() -> list[Msg]:
    return [Msg(50 + m.offset(), m.key(), m.value(), m.headers(), m.timestamp()[1]) for m in source_records()]


def test_the_proof_refutes_a_copy_that_rewrote_by_another_map() -> None:
    """A rewrite bug in the copy is not repeated by the verification: its expected side is the proof's, from the raw
    source bytes and the recorded map, not the copy's rewrite."""
    wrong = IdMap.of({7: 107, 8: 999}, SchemaFormat.AVRO)
    target = as_copied(source_records(), wrong)
    found = compare_ranges([source_records()], [target], 50, proof=RecordProof(ID_MAP, "orders", 0))
    assert found.source.hexdigest() != found.target.hexdigest()
    assert found.first == (
        0,
        50,
        "key: the target's schema id is not the mapped one (source id 8, expected 108, target id 999)",
    )


def test_reconcile_finds_the_translated_prefix_a_copy_left() -> None:
    task = PartitionSlice("orders", "orders", 0, 0, 4, 50, id_map=ID_MAP)
    prefix = as_copied(source_records(), ID_MAP)[:3]

    def expected(chunk: list[Any]) -> Any:
        return translated_fields(chunk, ID_MAP, "orders", 0, strict=True)

    assert reconcile_batches(task, [source_records()], [prefix], expected) == (3, 3)
    untranslated = [prefix[0], source_records_at_50()[1], prefix[2]]  # record 1's value as read: not the copy's
    with pytest.raises(ForeignRecordsError, match=r"offset 51 holds a record .*source offset 1; value differs"):
        reconcile_batches(task, [source_records()], [untranslated], expected)


# -- the fast paths give what schemas.wire gives ----------------------------------------------------------------


MIXED = IdMap.of(
    {1: 101, 2: 2, 3: 103, 4: 104},
    {1: SchemaFormat.AVRO, 2: SchemaFormat.JSON, 3: SchemaFormat.PROTOBUF, 4: SchemaFormat.AVRO},
)
IDS = st.sampled_from([1, 2, 3, 4, 5, 101, 103, 0x01020304])  # mapped, kept, Protobuf, unknown, targets


@st.composite
def payloads(draw: st.DrawFn) -> bytes | None:
    kind = draw(st.sampled_from(["null", "raw", "short", "framed", "protobuf-indexes"]))
    if kind == "null":
        return None
    if kind == "raw":
        return draw(st.binary(max_size=12))
    if kind == "short":
        return b"\x00" + draw(st.binary(max_size=3))
    header = b"\x00" + draw(IDS).to_bytes(4, "big")
    if kind == "protobuf-indexes":
        header += draw(st.sampled_from([b"\x00", b"\x02\x02", b"\x04\x02", b"\x81"]))  # the last does not read
    return header + draw(st.binary(max_size=8))


def mutated(data: bytes | None, how: int, other: bytes | None) -> bytes | None:
    """A target key or value: the correct translation, or it with one thing changed."""
    good = translate(data, MIXED)[0]
    if how == 0 or good is None:
        return good if how != 3 else other
    if how == 1 and len(good) >= 5:
        return good[:1] + (int.from_bytes(good[1:5], "big") ^ 1).to_bytes(4, "big") + good[5:]  # another id
    if how == 2:
        return good + b"x"
    if how == 4 and len(good) > 5:
        return good[:-1] + bytes([good[-1] ^ 1])  # the payload's last byte, the length and the id kept
    return other


@settings(max_examples=600, deadline=None)
@given(payloads(), st.integers(0, 4), payloads())
def test_the_proofs_fast_path_decides_as_wire_check(data: bytes | None, how: int, other: bytes | None) -> None:
    target = mutated(data, how, other)
    proof = RecordProof(MIXED, "t", 0)
    assert proof.outcome(data, target) == check(data, target, MIXED)
    assert proof.outcome(data, target) == check(data, target, MIXED)  # and again, from its cache


@settings(max_examples=600, deadline=None)
@given(st.lists(payloads(), max_size=6), st.booleans())
def test_the_copys_fast_translation_writes_what_wire_translate_writes(batch: list[bytes | None], strict: bool) -> None:
    one = translator(MIXED, strict)
    for data in batch:
        try:
            expected: bytes | type | None = translate(data, MIXED, strict)[0]
        except UnknownSchemaIdError:
            expected = UnknownSchemaIdError
        try:
            got: bytes | type | None = one(data)
        except UnknownSchemaIdError:
            got = UnknownSchemaIdError
        assert got == expected


# -- the verification of slices in translate mode (verify_partition, verify_window, behind a copy) -------------


def framed_records(start: int) -> list[Msg]:
    """Source records at ``start``...: JSON-keyed by id 8, valued by id 7, one naming id 9 (no subject of the
    topic's: passed unchanged), a tombstone, one without a header."""
    return [
        Msg(start, framed(8, b"k0"), framed(7, b"v0"), None, 1000),
        Msg(start + 1, framed(8, b"k1"), framed(9, b"v1"), None, 1001),
        Msg(start + 2, framed(8, b"k2"), None, None, 1002),
        Msg(start + 3, b"raw", b"raw", [("h", b"1")], 1003),
        Msg(start + 4, framed(8, b"k4"), framed(7, b"v4"), None, 1004),
        Msg(start + 5, framed(8, b"k5"), framed(7, b"v5"), None, 1005),
    ]


def copied_to(records: list[Msg], target_start: int, **changes: dict[str, Any]) -> list[Msg]:
    """The correct copy from ``target_start`` (ids through ID_MAP, built with wire.rewrite); ``changes``: by the
    record's index, fields to change on the target."""
    out = []
    for i, (m, good) in enumerate(zip(records, as_copied(records, ID_MAP), strict=True)):
        fields = {"offset": target_start + i, "key": good.key(), "value": good.value(), **changes.get(str(i), {})}
        out.append(m.changed(**fields))
    return out


def verify_with(monkeypatch: pytest.MonkeyPatch, target: list[Msg], how: str) -> Any:
    from kafka_migration.kafka import ranges
    from kafka_migration.run import verify
    from tests.unit.factories import CLUSTERS
    from tests.unit.run.test_verify import Clusters

    clusters = Clusters({("source", "orders", 0): framed_records(20), ("target", "orders-copy", 0): target})
    monkeypatch.setattr(verify, "read_range", clusters.read_range)
    monkeypatch.setattr(ranges, "read_all", clusters.read_all)
    piece = PartitionSlice("orders", "orders-copy", 0, 20, 26, 100, id_map=ID_MAP)
    if how == "window":
        return verify.verify_window([piece], CLUSTERS).results[0]
    if how == "following":
        return verify.verify_partitions_following([piece], CLUSTERS)[0]
    return verify.verify_partition(piece, CLUSTERS)


HOW = ["partition", "window", "following"]
COUNTED = {
    "topic": "orders",
    "partition": 0,
    "keys": {"translated": 5, "unchanged": 0, "without_header": 1},
    "values": {"translated": 3, "unchanged": 1, "without_header": 2},
}


@pytest.mark.parametrize("how", HOW)
def test_a_translated_slice_verifies_and_counts(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    found = verify_with(monkeypatch, copied_to(framed_records(20), 100), how)
    assert (found.match, found.first_difference, found.source_records, found.target_records) == (True, None, 6, 6)
    assert found.source_checksum == found.target_checksum and found.schema_counts == COUNTED
    assert found.offset_map == [(20, 100)]


@pytest.mark.parametrize("how", HOW)
def test_a_wrong_id_in_a_slice_is_found_with_its_offsets(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    target = copied_to(framed_records(20), 100, **{"4": {"value": framed(108, b"v4")}})
    found = verify_with(monkeypatch, target, how)
    assert not found.match and found.source_checksum != found.target_checksum
    assert (found.first_source_offset, found.first_target_offset) == (24, 104)
    assert found.first_difference == (
        "value: the target's schema id is not the mapped one (source id 7, expected 107, target id 108)"
    )


@pytest.mark.parametrize("how", HOW)
def test_an_untranslated_copy_of_a_slice_fails(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    raw = [m.changed(offset=100 + i) for i, m in enumerate(framed_records(20))]
    found = verify_with(monkeypatch, raw, how)
    assert not found.match and (found.first_source_offset, found.first_target_offset) == (20, 100)
    assert found.first_difference.startswith("key: the target's schema id is not the mapped one (source id 8")


def test_a_difference_the_bytes_show_first_stays_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed timestamp (which the per-record proof does not look at) before a wrong id: the bytes' difference
    is the first, by source offset, also when it is in an earlier chunk than the proof's."""
    from kafka_migration.run.verify import compare_ranges

    target = copied_to(framed_records(20), 100, **{"1": {"timestamp": 5}, "4": {"value": framed(108, b"v4")}})
    for size in (6, 2):  # one chunk; chunks of two records on both sides
        source_batches = [framed_records(20)[i : i + size] for i in range(0, 6, size)]
        found = compare_ranges(source_batches, [target[i : i + size] for i in range(0, 6, size)], 100, proof=proof_of())
        assert found.first == (21, 101, "timestamp differs")


def proof_of() -> RecordProof:
    return RecordProof(ID_MAP, "orders", 0)


def test_the_plain_cases_are_decided_without_wire_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Translated, unchanged and header-less keys and values take the proof's fast path: at a million records the
    general path was most of the verification's time. Anything else still goes to wire.check."""
    import kafka_migration.run.schema_records as module

    asked: list[tuple[Any, Any]] = []

    def general(mine: Any, theirs: Any, id_map: Any) -> Any:
        asked.append((mine, theirs))
        return check(mine, theirs, id_map)

    monkeypatch.setattr(module, "check", general)
    # 8 -> 0: a valid id; ids past 2**24 use all four bytes
    proof = RecordProof(IdMap.of({7: 107, 8: 0, 0x01000007: 0x02000107}, SchemaFormat.AVRO), "t", 0)
    plain = [
        (None, None),
        (b"raw", b"raw"),
        (b"\x00\x01", b"\x00\x01"),  # shorter than a header
        (framed(7, b"v"), framed(107, b"v")),
        (framed(7, b""), framed(107, b"")),
        (framed(8, b"v"), framed(0, b"v")),
        (framed(11, b"v"), framed(11, b"v")),  # an id outside the map, passed on unchanged
        (framed(0x01000007, b"v"), framed(0x02000107, b"v")),
    ]
    for _ in range(2):  # the second time from what the proof keeps of each id
        for mine, theirs in plain:
            assert proof.outcome(mine, theirs) == check(mine, theirs, proof.id_map), (mine, theirs)
    assert asked == []
    for mine, theirs in [(framed(7, b"v"), framed(108, b"v")), (framed(7, b"v"), framed(107, b"w")), (b"a", b"b")]:
        assert proof.outcome(mine, theirs) == check(mine, theirs, proof.id_map)
    assert len(asked) == 3


def test_the_proof_refuses_chunks_of_different_lengths() -> None:
    targets = as_copied(source_records(), ID_MAP)[:2]
    with pytest.raises(ValueError, match=r"shorter|longer"):
        RecordProof(ID_MAP, "t", 0)(source_records(), targets, batch_fields(targets))


BIG = IdMap.of({0x01000007: 0x02000107, 7: 0x03000000}, SchemaFormat.AVRO)  # ids past 2**24: all four bytes count


def test_ids_past_three_bytes_are_read_and_written_whole() -> None:
    records = [Msg(0, framed(0x01000007, b"k"), framed(7, b"v"), None, 1000)]
    out = translate_batch(records, BIG, "t", 0, strict=True)
    assert (out.keys, out.values) == ([framed(0x02000107, b"k")], [framed(0x03000000, b"v")])
    proof = RecordProof(BIG, "t", 0)
    assert proof.outcome(framed(0x01000007, b"k"), framed(0x02000107, b"k")) is Outcome.TRANSLATED
    assert proof.outcome(framed(7, b"v"), framed(0x03000000, b"v")) is Outcome.TRANSLATED
    wrong = proof.outcome(framed(0x01000007, b"k"), framed(0x03000107, b"k"))  # differs in the id's second byte
    assert type(wrong) is not Outcome and wrong == check(framed(0x01000007, b"k"), framed(0x03000107, b"k"), BIG)
    with pytest.raises(SchemaError, match="schema id 16777224"):  # 0x01000008, not in the map
        translate_batch([Msg(5, framed(0x01000008, b"k"), None, None, 1)], BIG, "t", 0, strict=True)


def test_protobuf_ids_and_records_outside_the_plain_cases_go_to_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_migration.run.schema_records as module

    asked: list[Any] = []
    monkeypatch.setattr(module, "check", lambda *args: asked.append(args) or check(*args))
    proto = IdMap.of({7: 107}, SchemaFormat.PROTOBUF)
    proof = RecordProof(proto, "t", 0)
    mine = framed(7, b"\x00payload")  # message indexes [0] (one zero byte), then the payload
    assert proof.outcome(mine, framed(107, b"\x00payload")) is Outcome.TRANSLATED
    assert len(asked) == 1  # message indexes are wire's to read
    one = translator(proto, strict=True)
    assert one(mine) == framed(107, b"\x00payload")
    with pytest.raises(UnknownSchemaIdError):
        translator(proto, strict=True)(framed(9, b"\x00p"))
    assert translator(proto, strict=False)(framed(9, b"\x00p")) == framed(9, b"\x00p")


def test_each_source_id_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[int] = []
    real = IdMap.format
    monkeypatch.setattr(IdMap, "format", lambda self, schema_id: looked.append(schema_id) or real(self, schema_id))
    proof = RecordProof(ID_MAP, "t", 0)
    for _ in range(50):
        assert proof.outcome(framed(7, b"v"), framed(107, b"v")) is Outcome.TRANSLATED
        assert proof.outcome(framed(11, b"v"), framed(11, b"v")) is Outcome.UNCHANGED
    assert sorted(looked) == [7, 11]
    one = translator(ID_MAP, strict=False)
    looked.clear()
    for _ in range(50):
        assert one(framed(7, b"v")) == framed(107, b"v")
    assert looked == [7]


def test_a_fresh_proof_counts_nothing() -> None:
    counts = RecordProof(ID_MAP, "t", 3).counts()
    assert (counts.topic, counts.partition) == ("t", 3)
    assert counts.keys == counts.values == PartCounts(translated=0, unchanged=0, without_header=0)


def test_the_copys_batches_name_their_topic_and_partition_when_refused() -> None:
    batches = translated_batches([[Msg(4, None, framed(9, b"v"), None, 1)]], ID_MAP, "orders", 2, strict=True)
    with pytest.raises(SchemaError) as refused:
        list(batches)
    assert str(refused.value) == (
        "Source orders[2] offset 4: a key or value names schema id 9, which is not among the 2 ids of the topic's "
        "subjects registered on the target; nothing from this record on was copied. Its schema is under a subject "
        "this run does not move (e.g. RecordNameStrategy): register it on the target, or let such records pass "
        "unchanged (--unknown-schema-ids pass; they are counted), or copy the topic with --schema-ids off if its "
        "records are raw bytes that start with a zero byte."
    )
    (passed,) = translated_batches([[Msg(4, None, framed(9, b"v"), None, 1)]], ID_MAP, "orders", 2, strict=False)
    assert passed.values == [framed(9, b"v")]


def test_a_window_translates_each_range_by_its_own_slices_map() -> None:
    def piece(topic: str, id_map: IdMap | None, pass_unknown: bool = False) -> PartitionSlice:
        return PartitionSlice(topic, topic, 1, 0, 10, 0, id_map=id_map, pass_unknown_ids=pass_unknown)

    slices = [piece("a", ID_MAP), piece("b", None), piece("c", ID_MAP, pass_unknown=True)]
    reads = iter(
        [
            (0, [Msg(0, None, framed(7, b"v"), None, 1)], False),
            (1, [Msg(0, None, framed(7, b"v"), None, 1)], True),
            (2, [Msg(0, None, framed(9, b"v"), None, 1)], True),
            (0, [Msg(1, None, framed(9, b"v"), None, 1)], True),
        ]
    )
    window = translated_window(reads, [s.id_map for s in slices], slices)
    i, batch, done = next(window)
    assert (i, batch.values, done) == (0, [framed(107, b"v")], False)
    i, batch, done = next(window)
    assert (i, batch[0].value(), done) == (1, framed(7, b"v"), True) and not isinstance(batch, Rewritten)  # as read
    i, batch, done = next(window)
    assert (i, batch.values, done) == (2, [framed(9, b"v")], True)  # passed on, as the slice allows
    with pytest.raises(SchemaError, match=r"Source a\[1\] offset 1"):
        next(window)


# -- whole chunks: the column-wise fast paths decide as wire does record by record ----------------------------------


@st.composite
def columns(draw: st.DrawFn, size: int) -> list[bytes | None]:
    """A chunk's keys or values: often one plain kind throughout (what the fast paths take whole), else mixed."""
    kind = draw(st.sampled_from(["raw", "avro", "avro-json", "mixed"]))
    if kind == "raw":
        return [
            draw(st.one_of(st.none(), st.binary(max_size=6).filter(lambda b: b[:1] != b"\x00"))) for _ in range(size)
        ]
    if kind == "mixed":
        return [draw(payloads()) for _ in range(size)]
    ids = [1, 4] if kind == "avro" else [1, 2, 4]
    return [b"\x00" + draw(st.sampled_from(ids)).to_bytes(4, "big") + draw(st.binary(max_size=6)) for _ in range(size)]


@st.composite
def chunks(draw: st.DrawFn) -> tuple[list[Msg], list[Msg]]:
    """Source records and their target: the correct copy, with at most two records changed (``mutated``)."""
    size = draw(st.integers(1, 6))
    keys, values = draw(columns(size)), draw(columns(size))
    sources = [Msg(10 + i, k, v, None, 1000 + i) for i, (k, v) in enumerate(zip(keys, values, strict=True))]
    changes = draw(
        st.lists(st.tuples(st.integers(0, size - 1), st.booleans(), st.integers(1, 4), payloads()), max_size=2)
    )
    targets = []
    for i, m in enumerate(sources):
        key, value = translate(m.key(), MIXED)[0], translate(m.value(), MIXED)[0]
        for at, is_key, how, other in changes:
            if at == i and is_key:
                key = mutated(m.key(), how, other)
            elif at == i:
                value = mutated(m.value(), how, other)
        targets.append(Msg(60 + i, key, value, None, 1000 + i))
    return sources, targets


@settings(max_examples=800, deadline=None)
@given(chunks())
def test_a_chunks_proof_counts_and_names_what_wire_check_finds_record_by_record(
    chunk: tuple[list[Msg], list[Msg]],
) -> None:
    sources, targets = chunk
    proof = RecordProof(MIXED, "t", 0)
    fields, found = proof(sources, targets, batch_fields(targets))
    assert fields == translated_fields(sources, MIXED, "t", 0, strict=False)  # what the target must hold
    seen: dict[tuple[str, Outcome], int] = {}
    first = None
    for source, target in zip(sources, targets, strict=True):
        for part, mine, theirs in (("key", source.key(), target.key()), ("value", source.value(), target.value())):
            verdict = check(mine, theirs, MIXED)
            if isinstance(verdict, Outcome):
                seen[part, verdict] = seen.get((part, verdict), 0) + 1
            elif first is None:
                first = (source.offset(), target.offset(), f"{part}: {verdict.describe()}")
    assert found == first
    counts = proof.counts()
    for part, got in (("key", counts.keys), ("value", counts.values)):
        assert got == PartCounts(
            *(seen.get((part, o), 0) for o in (Outcome.TRANSLATED, Outcome.UNCHANGED, Outcome.WITHOUT_HEADER))
        )


@settings(max_examples=600, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(columns(n), columns(n))), st.booleans())
def test_a_batchs_translation_is_wire_translate_of_each_key_and_value(
    batch: tuple[list[bytes | None], list[bytes | None]], strict: bool
) -> None:
    keys, values = batch
    records = [Msg(10 + i, k, v, None, 1000 + i) for i, (k, v) in enumerate(zip(keys, values, strict=True))]
    expected: list[Any] = []
    refused = None
    for m in records:
        try:
            expected.append((translate(m.key(), MIXED, strict)[0], translate(m.value(), MIXED, strict)[0]))
        except UnknownSchemaIdError:
            refused = m.offset()
            break
    if refused is not None:
        with pytest.raises(SchemaError, match=rf"^Source t\[0\] offset {refused}: "):
            translate_batch(records, MIXED, "t", 0, strict)
        return
    out = translate_batch(records, MIXED, "t", 0, strict)
    assert list(zip(out.keys, out.values, strict=True)) == expected and out.messages is records


def _no_record_by_record(*_: Any) -> Any:
    raise AssertionError("a plain chunk went record by record")


def test_plain_chunks_are_proven_column_wise_not_record_by_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast paths are what keeps translate mode's verification near a raw one's (docs/schemas.md): a chunk of
    raw keys and mapped Avro or JSON Schema values (ids past three bytes, a target id of 0 too) is proven whole."""
    id_map = IdMap.of(
        {0x01000007: 0, 8: 0x02000108, 9: 9},
        {0x01000007: SchemaFormat.AVRO, 8: SchemaFormat.JSON, 9: SchemaFormat.AVRO},
    )
    sources = [
        Msg(0, b"k0", framed(0x01000007, b"a"), None, 1),
        Msg(1, None, framed(8, b"b"), None, 2),
        Msg(2, b"k2", framed(9, b""), None, 3),
    ]
    targets = as_copied(sources, id_map)
    proof = RecordProof(id_map, "t", 0)
    monkeypatch.setattr(RecordProof, "outcome", _no_record_by_record)
    translated = translate_batch(sources, id_map, "t", 0, strict=True)
    assert (translated.keys, translated.values) == ([m.key() for m in targets], [m.value() for m in targets])
    assert proof(sources, targets, batch_fields(targets)) == (batch_fields(targets), None)
    assert proof.counts() == SchemaCounts("t", 0, PartCounts(0, 0, 3), PartCounts(3, 0, 0))


def test_a_plain_column_is_translated_in_one_pass_not_key_by_key() -> None:
    column = [framed(0x01000007, b"a"), framed(8, b""), framed(0x01000007, b"c")]
    id_map = IdMap.of({0x01000007: 5, 8: 0x02000108}, SchemaFormat.AVRO)
    assert translated_column(column, id_map, _no_record_by_record) == [
        framed(5, b"a"),
        framed(0x02000108, b""),
        framed(5, b"c"),
    ]
    raw = [b"k", None, b"\x01x"]
    assert translated_column(raw, id_map, _no_record_by_record) is raw  # nothing framed: as it is
    seen: list[Any] = []
    mixed = [framed(0x01000007, b"a"), b"raw"]  # mixed: each through ``one`` (the translator), ids read whole
    assert translated_column(mixed, id_map, lambda d: seen.append(d) or d) == mixed and seen == mixed
    one = translator(id_map, strict=True)
    assert [one(d) for d in mixed] == [framed(5, b"a"), b"raw"]


def test_a_proofs_counts_add_up_over_plain_and_mixed_chunks() -> None:
    proof = RecordProof(ID_MAP, "t", 0)
    plain = [Msg(0, b"k", framed(7, b"v"), None, 1)]
    assert proof(plain, as_copied(plain, ID_MAP), batch_fields(as_copied(plain, ID_MAP)))[1] is None
    mixed = source_records()
    assert proof(mixed, as_copied(mixed, ID_MAP), batch_fields(as_copied(mixed, ID_MAP)))[1] is None
    counts = proof.counts()
    assert counts.keys == PartCounts(2, 0, 3) and counts.values == PartCounts(3, 0, 2)


def test_without_targets_the_proof_gives_what_the_target_must_hold_and_proves_nothing() -> None:
    proof = RecordProof(ID_MAP, "t", 0)
    fields, first = proof(source_records(), [], batch_fields([]))
    assert first is None and fields == translated_fields(source_records(), ID_MAP, "t", 0, strict=False)
    assert proof.counts() == SchemaCounts("t", 0, PartCounts(0, 0, 0), PartCounts(0, 0, 0))


def test_the_source_checksum_is_of_the_translated_records_also_where_the_target_lacks_some() -> None:
    whole, _ = compare(as_copied(source_records(), ID_MAP))
    short, _ = compare(as_copied(source_records(), ID_MAP)[:2])
    assert short.source.hexdigest() == whole.source.hexdigest() == whole.target.hexdigest()
    assert short.first == (2, None, "record missing on the target") and short.source.count == 4


def test_only_the_header_is_rewritten_when_the_payload_repeats_its_bytes() -> None:
    """A payload may hold the header's five bytes again (an Avro bytes field, an id as data): the copy rewrites the
    header alone, and the proof expects exactly that."""
    echo = [framed(7, framed(7, b"x") * 2), framed(7, b"\x00\x00\x00\x00\x07")]
    rewritten = [framed(107, framed(7, b"x") * 2), framed(107, b"\x00\x00\x00\x00\x07")]
    assert translated_column(echo, ID_MAP, _no_record_by_record) == rewritten
    sources = [Msg(i, None, v, None, 1) for i, v in enumerate(echo)]
    targets = [Msg(i, None, v, None, 1) for i, v in enumerate(rewritten)]
    proof = RecordProof(ID_MAP, "t", 0)
    assert proof(sources, targets, batch_fields(targets)) == (batch_fields(targets), None)
    assert proof.counts().values == PartCounts(2, 0, 0)


def test_a_reconciles_refusal_of_an_unknown_id_names_its_topic_and_partition() -> None:
    records = [Msg(4, None, framed(9, b"v"), None, 1)]
    with pytest.raises(SchemaError, match=r"^Source orders\[2\] offset 4: a key or value names schema id 9"):
        translated_fields(records, ID_MAP, "orders", 2, strict=True)


def test_the_proof_refutes_a_record_whose_bytes_equal_a_wrong_expectation(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a mixed column the expected bytes come from the translator; were it wrong (here: it rewrites nothing),
    both checksums would agree with an untranslated copy, and the record-by-record proof still names the record."""
    import kafka_migration.run.schema_records as module

    monkeypatch.setattr(module, "translator", lambda id_map, strict: lambda data: data)
    found, _ = compare(source_records_at_50())
    assert found.source.hexdigest() == found.target.hexdigest()
    assert found.first is not None and found.first[:2] == (0, 50) and found.first[2].startswith("key: ")


def test_a_slice_without_an_id_map_is_compared_byte_for_byte_and_counts_no_schemas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kafka_migration.kafka import ranges
    from kafka_migration.run import verify
    from tests.unit.factories import CLUSTERS
    from tests.unit.run.test_verify import Clusters

    raw = [m.changed(offset=100 + i) for i, m in enumerate(framed_records(20))]
    clusters = Clusters({("source", "orders", 0): framed_records(20), ("target", "orders-copy", 0): raw})
    monkeypatch.setattr(verify, "read_range", clusters.read_range)
    monkeypatch.setattr(ranges, "read_all", clusters.read_all)
    found = verify.verify_partition(PartitionSlice("orders", "orders-copy", 0, 20, 26, 100), CLUSTERS)
    assert found.match and found.schema_counts is None
