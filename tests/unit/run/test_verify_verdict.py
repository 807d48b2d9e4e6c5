"""The verdict on one partition when the two sides hold equally many records of equal sizes.

Counts and byte totals cannot tell these copies apart: only the record-by-record comparison
can. One field of one record is changed on the target (a value, a key, a header's value, the
order of the headers, a null against an empty header value, the timestamp) and the verdict
must be a mismatch naming the first differing pair by its source and target offsets, with
different checksums and no offset map; the unchanged copy must be verified. Each is judged
with the two sides cut into batches of different sizes, as consumers hand them over.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.verify import PartitionVerification, _verification, compare_ranges
from tests.unit.run.test_batch_compare import Msg, batches

SOURCE_START = 20
TARGET_START = 100
CHANGED = 7  # the changed record: source offset 27, target offset 108 (after the target's transaction marker)


def source_records() -> list[Msg]:
    return [
        Msg(SOURCE_START + i, b"k%d" % i, b"v%d" % i, [("trace", b"t-%d" % i), ("tenant", b"acme")], 1_700_000 + i)
        for i in range(12)
    ]


def copied(source: list[Msg]) -> list[Msg]:
    """The copy as the target holds it: from TARGET_START, with a transaction marker at offset 105."""
    return [m.changed(offset=TARGET_START + i + (i >= 5)) for i, m in enumerate(source)]


def verdict(source: list[Msg], target: list[Msg], sizes: tuple[int, int]) -> PartitionVerification:
    task = PartitionSlice(
        source_topic="orders",
        target_topic="orders",
        partition=0,
        start=SOURCE_START,
        end=SOURCE_START + len(source),
        target_start=TARGET_START,
    )
    s_size, t_size = sizes
    found = compare_ranges(
        batches(source, itertools.repeat(s_size)), batches(target, itertools.repeat(t_size)), TARGET_START
    )
    return _verification(task, found, 0.0)


def changed_copy(change: str) -> tuple[list[Msg], list[Msg]]:
    source = source_records()
    target = copied(source)
    m = target[CHANGED]
    if change == "value":
        target[CHANGED] = m.changed(value=b"V7")  # same length: equal byte totals too
    elif change == "key":
        target[CHANGED] = m.changed(key=b"K7")
    elif change == "null key vs empty key":
        source[CHANGED] = source[CHANGED].changed(key=None)
        target[CHANGED] = m.changed(key=b"")
    elif change == "header value":
        target[CHANGED] = m.changed(headers=[("trace", b"t-8"), ("tenant", b"acme")])
    elif change == "header order":
        target[CHANGED] = m.changed(headers=[("tenant", b"acme"), ("trace", b"t-7")])
    elif change == "null vs empty header value":
        source[CHANGED] = source[CHANGED].changed(headers=[("trace", None), ("tenant", b"acme")])
        target[CHANGED] = m.changed(headers=[("trace", b""), ("tenant", b"acme")])
    elif change == "timestamp":
        target[CHANGED] = m.changed(timestamp=m.timestamp()[1] + 1)
    else:
        raise AssertionError(change)
    return source, target


SIZES = [(12, 12), (4, 4), (5, 3), (1, 1), (3, 100)]
CHANGES = {
    "value": "value differs",
    "key": "key differs",
    "null key vs empty key": "key differs",
    "header value": "headers differs",
    "header order": "headers differs",
    "null vs empty header value": "headers differs",
    "timestamp": "timestamp differs",
}


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: f"batches{s[0]}x{s[1]}")
@pytest.mark.parametrize("change", list(CHANGES))
def test_one_changed_field_with_equal_counts_is_a_mismatch_at_that_record(change: str, sizes: tuple[int, int]) -> None:
    source, target = changed_copy(change)
    result = verdict(source, target, sizes)
    assert (result.source_records, result.target_records) == (12, 12)
    assert result.match is False
    assert (result.first_source_offset, result.first_target_offset) == (SOURCE_START + CHANGED, TARGET_START + 8)
    assert result.first_difference == CHANGES[change]
    assert result.source_checksum != result.target_checksum
    assert result.offset_map == []  # a mismatch proves no offset translation
    assert result.target_end == TARGET_START + 13 and result.error is None


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: f"batches{s[0]}x{s[1]}")
def test_an_exact_copy_is_verified_with_its_offset_map(sizes: tuple[int, int]) -> None:
    source = source_records()
    result = verdict(source, copied(source), sizes)
    assert result.match is True
    assert (result.source_records, result.target_records) == (12, 12)
    assert result.source_checksum == result.target_checksum and result.source_checksum
    assert (result.first_difference, result.first_source_offset, result.first_target_offset) == (None, None, None)
    assert result.offset_map == [(20, 100), (25, 106)]  # the transaction marker at target offset 105


def test_no_headers_and_an_empty_header_list_are_the_same_record() -> None:
    """Kafka's record format cannot tell them apart (a header count of 0): a client may return either."""
    source = [m.changed(headers=None) for m in source_records()]
    target = [m.changed(headers=[]) for m in copied(source)]
    assert verdict(source, target, (4, 3)).match is True


def test_the_verdict_needs_equal_checksums_as_well_as_no_differing_pair() -> None:
    source = source_records()
    found = compare_ranges([source], [copied(source)], TARGET_START)
    shorter = compare_ranges([source[:-1]], [copied(source)[:-1]], TARGET_START)
    task = PartitionSlice("orders", "orders", 0, SOURCE_START, SOURCE_START + 12, TARGET_START)
    assert _verification(task, found, 0.0).match is True
    result = _verification(task, dataclasses.replace(found, target=shorter.target), 0.0)
    assert result.match is False and result.offset_map == []
