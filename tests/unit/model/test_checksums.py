"""kafka_migration.model.checksums: canonical encoding, field differences, the range checksum."""

from __future__ import annotations

import hashlib
from itertools import combinations

import pytest

from kafka_migration.model.checksums import RangeChecksum, difference, encode_record, message_fields


class TestEncodeRecord:
    def test_deterministic(self) -> None:
        assert encode_record(b"k", b"v", [("h", b"1")], 5) == encode_record(b"k", b"v", [("h", b"1")], 5)

    def test_layout(self) -> None:
        encoded = encode_record(b"k", None, [("h", b"")], 1)
        assert encoded == (
            (1).to_bytes(8, "big")  # timestamp
            + (1).to_bytes(4, "big")
            + b"k"  # key
            + b"\xff\xff\xff\xff"  # null value
            + (1).to_bytes(4, "big")  # one header
            + (1).to_bytes(4, "big")
            + b"h"
            + (0).to_bytes(4, "big")  # empty header value
        )

    def test_null_and_empty_are_distinct(self) -> None:
        variants = [
            encode_record(None, b"v", None, 1),
            encode_record(b"", b"v", None, 1),
            encode_record(b"k", None, None, 1),
            encode_record(b"k", b"", None, 1),
            encode_record(b"k", b"v", [("h", None)], 1),
            encode_record(b"k", b"v", [("h", b"")], 1),
        ]
        assert len(set(variants)) == len(variants)

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ((b"ab", b"c", None, 1), (b"a", b"bc", None, 1)),  # bytes moved from key to value
            ((b"k", b"v", None, 1), (b"k", b"v", None, 2)),  # timestamp
            ((b"k", b"v", [("a", b"1"), ("b", b"2")], 1), (b"k", b"v", [("b", b"2"), ("a", b"1")], 1)),  # order
            ((b"k", b"v", [("h", b"1")], 1), (b"k", b"v", [("h", b"1"), ("h", b"1")], 1)),  # repeated header
            ((b"k", b"v", [("ab", b"c")], 1), (b"k", b"v", [("a", b"bc")], 1)),  # name/value boundary
            ((b"k", b"v", [("h", b"1")], 1), (b"k", b"v", [("H", b"1")], 1)),  # header name
        ],
    )
    def test_any_field_change_changes_encoding(self, a: tuple, b: tuple) -> None:  # type: ignore[type-arg]
        assert encode_record(*a) != encode_record(*b)

    def test_no_headers_and_empty_headers_encode_alike(self) -> None:
        assert encode_record(b"k", b"v", None, 1) == encode_record(b"k", b"v", [], 1)

    def test_negative_timestamp(self) -> None:
        assert encode_record(None, None, None, -1) != encode_record(None, None, None, 0)

    def test_unicode_header_name(self) -> None:
        assert encode_record(None, None, [("é", b"x")], 0) != encode_record(None, None, [("e", b"x")], 0)


class TestDifference:
    def test_names_each_differing_field(self) -> None:
        a = (b"k", b"v", [("h", b"1")], 1)
        assert difference(a, (b"k", b"V", [("h", b"1")], 1)) == "value"
        assert difference(a, (b"K", b"v", [("h", b"2")], 1)) == "key, headers"
        assert difference(a, (b"k", b"v", [("h", b"1")], 2)) == "timestamp"
        assert difference(a, (None, None, None, 0)) == "key, value, headers, timestamp"

    def test_null_vs_empty_key_is_a_difference(self) -> None:
        assert difference((None, b"v", None, 1), (b"", b"v", None, 1)) == "key"

    def test_none_and_empty_headers_are_equal(self) -> None:
        assert difference((b"k", b"v", None, 1), (b"k", b"v", [], 1)) == "encoding"

    def test_header_tuple_vs_list_container_is_equal(self) -> None:
        assert difference((b"k", b"v", (("h", b"1"),), 1), (b"k", b"v", [("h", b"1")], 1)) == "encoding"

    def test_identical_records_fall_back_to_encoding(self) -> None:
        a = (b"k", b"v", None, 1)
        assert difference(a, a) == "encoding"


class TestRangeChecksum:
    def test_empty(self) -> None:
        checksum = RangeChecksum()
        assert (checksum.count, checksum.bytes) == (0, 0)
        assert checksum.hexdigest() == "sha256:" + hashlib.sha256().hexdigest()

    def test_counts_records_and_bytes(self) -> None:
        checksum = RangeChecksum()
        encodings = [encode_record(b"k", b"v" * i, None, i) for i in range(3)]
        for e in encodings:
            checksum.add(e)
        assert checksum.count == 3
        assert checksum.bytes == sum(len(e) for e in encodings)
        assert checksum.hexdigest() == "sha256:" + hashlib.sha256(b"".join(encodings)).hexdigest()

    def test_order_sensitive(self) -> None:
        records = [encode_record(str(i).encode(), b"x", None, i) for i in range(3)]
        digests = set()
        for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0]):
            checksum = RangeChecksum()
            for i in order:
                checksum.add(records[i])
            digests.add(checksum.hexdigest())
        assert len(digests) == 3

    def test_missing_or_duplicated_record_changes_checksum(self) -> None:
        records = [encode_record(None, bytes([i]), None, 0) for i in range(3)]

        def digest(seq: list[bytes]) -> str:
            checksum = RangeChecksum()
            for e in seq:
                checksum.add(e)
            return checksum.hexdigest()

        full = digest(records)
        assert digest(records[:2]) != full
        assert digest([*records, records[-1]]) != full
        assert all(digest(list(pair)) != full for pair in combinations(records, 2))

    def test_hexdigest_does_not_finalise(self) -> None:
        checksum = RangeChecksum()
        checksum.add(b"a")
        first = checksum.hexdigest()
        assert checksum.hexdigest() == first
        checksum.add(b"b")
        assert checksum.hexdigest() != first


def test_message_fields_reads_a_confluent_message() -> None:
    class Message:
        def key(self) -> bytes:
            return b"k"

        def value(self) -> None:
            return None

        def headers(self) -> list[tuple[str, bytes]]:
            return [("h", b"1")]

        def timestamp(self) -> tuple[int, int]:
            return (1, 1700000000000)  # (TIMESTAMP_CREATE_TIME, ms)

    assert message_fields(Message()) == (b"k", None, [("h", b"1")], 1700000000000)
