"""The one notation of counts, offset ranges and partition lists (model/text.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafka_migration.model.text import noun_for, offset_range, partition_list, plural, some

PACKAGE = Path(__file__).resolve().parents[3] / "kafka_migration"


@pytest.mark.parametrize(
    ("count", "noun", "expected"),
    [
        (0, "partition", "0 partitions"),
        (1, "partition", "1 partition"),
        (2, "topic", "2 topics"),
        (1470, "offset", "1,470 offsets"),
        (1, "entry", "1 entry"),
        (3, "entry", "3 entries"),
    ],
)
def test_plural(count: int, noun: str, expected: str) -> None:
    assert plural(count, noun) == expected


def test_noun_for_takes_an_explicit_plural() -> None:
    assert noun_for(2, "index", "indices") == "indices"
    assert noun_for(1, "index", "indices") == "index"


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 1470, "0–1469 (1,470 offsets)"),  # half-open in, first and last out: every offset shown exists
        (7, 8, "7 (1 offset)"),
        (1470, 1470, "none at 1470"),
        (12, 5, "none at 12"),
        (12, None, "12 onwards"),
        (None, None, "–"),
    ],
)
def test_offset_range(start: int | None, end: int | None, expected: str) -> None:
    assert offset_range(start, end) == expected


def test_offset_range_without_the_count_for_tables() -> None:
    assert offset_range(0, 1470, count=False) == "0–1469"
    assert offset_range(3, 3, count=False) == "none at 3"


def test_partition_list_joins_consecutive_partitions_and_counts_them() -> None:
    assert partition_list([4]) == "partition 4"
    assert partition_list([3, 0, 1, 2, 7]) == "partitions 0–3, 7 (5 partitions)"
    assert partition_list(range(0, 40, 2), most=3) == "partitions 0, 2, 4, and 17 more (20 partitions)"
    assert partition_list([]) == "no partition"


def test_some_keeps_a_long_list_on_one_line() -> None:
    assert some(["a", "b"]) == "a, b"
    assert some([str(i) for i in range(8)], most=3) == "0, 1, 2, and 5 more"


def test_no_range_is_written_with_two_dots_anywhere_in_the_package() -> None:
    """The notation the docs explain is the only one: no ``start..end`` left in a message of the package."""
    dotted = re.compile(r"""\{[^}]*\}\.\.\{|\{[^}]*\}\.\.['"]|[0-9]\.\.[0-9{]|%d\.\.%d""")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if dotted.search(line) and not line.lstrip().startswith("#")
    ]
    assert not found, "offset ranges written with '..' (use model.text.offset_range):\n" + "\n".join(found)


def test_per_partition_lists_what_each_partition_says_and_elides_the_rest() -> None:
    from kafka_migration.model.text import per_partition

    assert per_partition([(3, "b"), (0, "a")]) == "[0] a; [3] b"
    assert per_partition([(p, "x") for p in range(8)], most=2) == "[0] x; [1] x; and 6 more"
