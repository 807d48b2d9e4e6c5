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


def _encode_headers(headers: Sequence[Header]) -> bytes:
    parts = [_I32.pack(len(headers))]
    for name, data in headers:
        parts.append(_field(name.encode()))
        parts.append(_field(data))
    return b"".join(parts)


def message_fields(msg: Any) -> tuple[bytes | None, bytes | None, Any, int]:
    """(key, value, headers, timestamp) of a confluent_kafka message, as compared and encoded."""
    return msg.key(), msg.value(), msg.headers(), msg.timestamp()[1]


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

    def hexdigest(self) -> str:
        return "sha256:" + self._hash.hexdigest()


@dataclass(frozen=True)
class RangeDigest:
    count: int
    checksum: str
    bytes: int
