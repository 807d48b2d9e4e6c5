"""Canonical record encoding and the order-sensitive partition checksum.

A record is encoded as timestamp, key, value and headers, each length-prefixed,
with -1 marking null so that null and empty stay distinct. The checksum of a
range is SHA-256 over the encodings in offset order: any change in content,
order, count, or a record's position changes it.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_NULL = struct.pack(">i", -1)
_NO_HEADERS = struct.pack(">i", 0)
_I32 = struct.Struct(">i")
_TIMESTAMP_AND_LENGTH = struct.Struct(">qi")

Header = tuple[str, bytes | None]
# A batch's keys, values, headers and timestamps, column by column (``batch_fields``).
Fields = tuple[list[bytes | None], list[bytes | None], list[Any], list[int]]


def _field(data: bytes | None) -> bytes:
    if data is None:
        return _NULL
    return _I32.pack(len(data)) + data


def encode_record(key: bytes | None, value: bytes | None, headers: Sequence[Header] | None, timestamp: int) -> bytes:
    # The hot path of verification: two packs and one join for a record without headers.
    return b"".join(
        (
            _TIMESTAMP_AND_LENGTH.pack(timestamp, -1 if key is None else len(key)),
            key or b"",
            _I32.pack(-1 if value is None else len(value)),
            value or b"",
            _encode_headers(headers) if headers else _NO_HEADERS,
        )
    )


def encode_records(
    keys: Sequence[bytes | None],
    values: Sequence[bytes | None],
    headers: Sequence[Sequence[Header] | None],
    timestamps: Sequence[int],
) -> bytes:
    """The concatenated ``encode_record`` of each record of a batch, in order.

    Verification's hot path: a few C-level passes over the batch (struct packs mapped over
    the lengths, one join) instead of a Python call per record. The concatenation of
    length-prefixed encodings of equally many records is equal only when every record is.
    """
    n = len(keys)
    parts: list[bytes] = [_NO_HEADERS] * (5 * n)
    try:
        parts[0::5] = map(_TIMESTAMP_AND_LENGTH.pack, timestamps, map(len, keys))  # type: ignore[arg-type]
        parts[2::5] = map(_I32.pack, map(len, values))  # type: ignore[arg-type]
    except TypeError:  # a null key or value: length -1 and no bytes
        parts[0::5] = [
            _TIMESTAMP_AND_LENGTH.pack(t, -1 if k is None else len(k)) for t, k in zip(timestamps, keys, strict=True)
        ]
        parts[2::5] = [_NULL if v is None else _I32.pack(len(v)) for v in values]
        keys = [k or b"" for k in keys]
        values = [v or b"" for v in values]
    parts[1::5] = keys  # type: ignore[assignment]
    parts[3::5] = values  # type: ignore[assignment]
    if any(headers):
        parts[4::5] = [_encode_headers(h) if h else _NO_HEADERS for h in headers]
    return b"".join(parts)


def _encode_headers(headers: Sequence[Header]) -> bytes:
    parts = [_I32.pack(len(headers))]
    for name, data in headers:
        parts.append(_field(name.encode()))
        parts.append(_field(data))
    return b"".join(parts)


def message_fields(msg: Any) -> tuple[bytes | None, bytes | None, Any, int]:
    """(key, value, headers, timestamp) of a confluent_kafka message, as compared and encoded."""
    return msg.key(), msg.value(), msg.headers(), msg.timestamp()[1]


def batch_fields(messages: Sequence[Any]) -> Fields:
    """Keys, values, headers and timestamps of a batch of messages: ``message_fields`` column-wise."""
    return (
        [m.key() for m in messages],
        [m.value() for m in messages],
        [m.headers() for m in messages],
        [m.timestamp()[1] for m in messages],
    )


def difference(
    a: tuple[bytes | None, bytes | None, Sequence[Header] | None, int],
    b: tuple[bytes | None, bytes | None, Sequence[Header] | None, int],
) -> str:
    """Which fields of two records differ, for messages ('value', 'key, headers')."""
    names = ("key", "value", "headers", "timestamp")
    differing = [
        n
        for n, x, y in zip(names, a, b, strict=True)
        if (list(x or []) if n == "headers" else x) != (list(y or []) if n == "headers" else y)
    ]
    return ", ".join(differing) or "encoding"


class RangeChecksum:
    """Running count and SHA-256 over canonical record encodings, in offset order."""

    __slots__ = ("_hash", "bytes", "count")

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.count = 0
        self.bytes = 0

    def add(self, encoded: bytes) -> None:
        self._hash.update(encoded)
        self.count += 1
        self.bytes += len(encoded)

    def add_encoded(self, encoded: bytes, count: int) -> None:
        """``count`` records at once, ``encoded`` their concatenated encodings: SHA-256 is the same either way."""
        self._hash.update(encoded)
        self.count += count
        self.bytes += len(encoded)

    def copy(self) -> RangeChecksum:
        """An independent checksum in the same state: another range that shares this prefix continues from it."""
        other = RangeChecksum()
        other._hash = self._hash.copy()
        other.count = self.count
        other.bytes = self.bytes
        return other

    def hexdigest(self) -> str:
        return "sha256:" + self._hash.hexdigest()


@dataclass(frozen=True)
class RangeDigest:
    count: int
    checksum: str
    bytes: int
