"""Schemas that move with the records, as plain values: registered schemas, the id map, the per-record verdicts.

A registry-encoded key or value names its schema by an id that only its own registry can resolve. A migration
either keeps the ids (the target registry imports them) or translates them (registers the schemas on the target
and rewrites each record's id through an ``IdMap``). These values are shared by the wire rules
(``schemas.wire``), the canonical forms (``schemas.canonical``), the registry calls and the sync that use them,
and the ledger and plan files, which store them through ``to_dict`` and ``from_dict``.
"""

from __future__ import annotations

import base64
import binascii
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kafka_migration.exceptions import ConfigurationError, UnknownSchemaIdError

MAX_ID = 0xFFFF_FFFF  # the wire format's four id bytes, big-endian and unsigned (confluent-kafka packs ">I")


class SchemaFormat(StrEnum):
    """A schema's type, spelled as the registry's ``schemaType`` (absent means Avro)."""

    AVRO = "AVRO"
    PROTOBUF = "PROTOBUF"
    JSON = "JSON"

    @classmethod
    def of(cls, schema_type: str | None) -> SchemaFormat:
        """The format of a registry answer: its ``schemaType``, Avro when the registry leaves it out."""
        if not schema_type:
            return cls.AVRO
        try:
            return cls(schema_type.upper())
        except ValueError:
            known = ", ".join(f.value for f in cls)
            raise ConfigurationError(f"Schema type {schema_type!r} is not one of {known}.") from None


class SchemaMode(StrEnum):
    """What a run does with registry-encoded records: nothing, keep the ids, or translate them."""

    OFF = "off"  # records are copied as bytes; their schemas stay behind
    KEEP = "keep"  # the target registry holds the same ids (IMPORT mode, or a registry import)
    TRANSLATE = "translate"  # schemas registered on the target, each record's id rewritten through the id map


class RecordPart(StrEnum):
    """Keys and values are serialized separately, each with its own header or none."""

    KEY = "key"
    VALUE = "value"


class Outcome(StrEnum):
    """What became of one key or value that arrived as it should."""

    TRANSLATED = "translated"  # its id is in the map and the target carries the map's id (kept as is in KEEP mode)
    UNCHANGED = "unchanged"  # a header whose id the map does not name: copied byte for byte
    WITHOUT_HEADER = "without_header"  # null, or raw bytes without a header: copied byte for byte


class Mismatch(StrEnum):
    """Why a target key or value is not the source's with the mapped id, the first difference found."""

    NULL_DIFFERS = "null_differs"  # one side is null (a tombstone's value), the other is not
    HEADER_DISAPPEARED = "header_disappeared"  # the source had a header, the target has none
    HEADER_APPEARED = "header_appeared"  # the target has a header where the source had raw bytes
    INDEXES_DIFFER = "indexes_differ"  # Protobuf message indexes changed: another message of the schema
    PAYLOAD_DIFFERS = "payload_differs"  # the bytes after the header differ
    WRONG_ID = "wrong_id"  # only the id differs, and it is not the one the map gives


def _schema_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise ConfigurationError(f"{what} {value!r} is not a schema id (a whole number from 0 to {MAX_ID}).")
    return value


@dataclass(frozen=True, order=True)
class SchemaReference:
    """A schema's reference to another subject's version: an Avro named type, a Protobuf import, a JSON ``$ref``.
    ``name`` is how the schema refers to it (the type's full name, the import path, the URL)."""

    name: str
    subject: str
    version: int

    def __post_init__(self) -> None:
        if not self.name or not self.subject or isinstance(self.version, bool) or self.version < 1:
            raise ConfigurationError(
                f"Schema reference {self.name!r} -> {self.subject!r} version {self.version!r} needs a name, a "
                "subject and a version from 1."
            )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SchemaReference:
        return cls(str(data["name"]), str(data["subject"]), int(data["version"]))


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as one registry holds it under one id: its format, its text as registered, its references.

    A Protobuf schema is registered either as ``.proto`` source (a Confluent registry also serves any schema so)
    or as a serialized ``FileDescriptorProto`` in base64 (what confluent-kafka's serializer registers). Nothing
    here parses ``.proto`` source, so for such a text ``descriptor`` holds what the registry serves for it with
    ``format=serialized`` (base64 on Confluent's API, what confluent-kafka's deserializer reads): the canonical
    form is read from ``canonical_text``. The text as registered is what a run registers on the target."""

    schema_id: int
    format: SchemaFormat
    text: str
    references: tuple[SchemaReference, ...] = ()
    descriptor: str | None = None  # Protobuf .proto source: the registry's format=serialized answer

    def __post_init__(self) -> None:
        _schema_id(self.schema_id, "Registered schema id")
        object.__setattr__(self, "format", SchemaFormat(self.format))
        object.__setattr__(self, "references", tuple(self.references))

    @property
    def needs_descriptor(self) -> bool:
        """A Protobuf schema held as ``.proto`` source (not base64) whose serialized descriptor was not read yet."""
        return self.format is SchemaFormat.PROTOBUF and self.descriptor is None and not _is_base64(self.text)

    @property
    def canonical_text(self) -> str:
        """The text the canonical form reads: the serialized descriptor read apart, else the text as registered."""
        return self.text if self.descriptor is None else self.descriptor

    def to_dict(self) -> dict[str, Any]:
        out = {
            "schema_id": self.schema_id,
            "format": self.format.value,
            "text": self.text,
            "references": [r.to_dict() for r in self.references],
        }
        if self.descriptor is not None:
            out["descriptor"] = self.descriptor
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RegisteredSchema:
        return cls(
            schema_id=data["schema_id"],
            format=SchemaFormat(data["format"]),
            text=data["text"],
            references=tuple(SchemaReference.from_dict(r) for r in data.get("references", ())),
            descriptor=data.get("descriptor"),
        )


def _is_base64(text: str) -> bool:
    """Whether ``text`` is base64 (``.proto`` source never is: it has spaces, quotes and semicolons)."""
    try:
        base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


@dataclass(frozen=True, order=True)
class SubjectVersion:
    """One version of a subject and the schema id it resolves to (the same id may serve several)."""

    subject: str
    version: int
    schema_id: int

    def __post_init__(self) -> None:
        _schema_id(self.schema_id, f"Subject {self.subject!r} version {self.version}: schema id")
        if not self.subject or isinstance(self.version, bool) or self.version < 1:
            raise ConfigurationError(
                f"Subject {self.subject!r} version {self.version!r} needs a subject and a version from 1."
            )

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "version": self.version, "schema_id": self.schema_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SubjectVersion:
        return cls(str(data["subject"]), int(data["version"]), data["schema_id"])


@dataclass(frozen=True, order=True)
class IdPair:
    """One line of the id map: a source schema id, the target id of the same schema, and the schema's format
    (a Protobuf record carries message indexes after its id; the others do not)."""

    source_id: int
    target_id: int
    format: SchemaFormat

    def __post_init__(self) -> None:
        _schema_id(self.source_id, "Source schema id")
        _schema_id(self.target_id, f"Target schema id for source id {self.source_id}")
        object.__setattr__(self, "format", SchemaFormat(self.format))


@dataclass(frozen=True)
class IdMap:
    """Source schema id -> target schema id, as registering the schemas on the target gave them. Immutable: the
    copy rewrites by it and the verification proves by the same map, as the ledger recorded it.

    Several source ids may map to one target id (the same schema registered twice on the source), so the map is
    a function, not necessarily reversible. In KEEP mode it is the identity over the source registry's ids.
    """

    pairs: tuple[IdPair, ...] = ()
    _targets: dict[int, IdPair] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        targets: dict[int, IdPair] = {}
        for pair in self.pairs:
            known = targets.setdefault(pair.source_id, pair)
            if known != pair:
                raise ConfigurationError(
                    f"Schema id map: source id {pair.source_id} is given twice, as {known.target_id} "
                    f"({known.format}) and {pair.target_id} ({pair.format})."
                )
        object.__setattr__(self, "pairs", tuple(sorted(targets.values())))
        object.__setattr__(self, "_targets", targets)

    @classmethod
    def of(cls, targets: Mapping[int, int], formats: Mapping[int, SchemaFormat] | SchemaFormat) -> IdMap:
        """From source id -> target id, with each source id's format (or one format for all)."""
        if isinstance(formats, SchemaFormat):
            return cls(tuple(IdPair(s, t, formats) for s, t in targets.items()))
        missing = sorted(set(targets) - set(formats))
        if missing:
            raise ConfigurationError(f"Schema id map: no format given for source ids {missing}.")
        return cls(tuple(IdPair(s, t, formats[s]) for s, t in targets.items()))

    @classmethod
    def identity(cls, formats: Mapping[int, SchemaFormat]) -> IdMap:
        """Every id to itself: KEEP mode, where the target registry holds the source's ids."""
        return cls(tuple(IdPair(i, i, f) for i, f in formats.items()))

    def target(self, source_id: int) -> int:
        """The target id of ``source_id``; an id the map does not name is an error that names it."""
        pair = self._targets.get(source_id)
        if pair is None:
            raise UnknownSchemaIdError(source_id, len(self._targets))
        return pair.target_id

    def get(self, source_id: int) -> int | None:
        """The target id of ``source_id``, None when the map does not name it (the record passes unchanged)."""
        pair = self._targets.get(source_id)
        return None if pair is None else pair.target_id

    def format(self, source_id: int) -> SchemaFormat | None:
        pair = self._targets.get(source_id)
        return None if pair is None else pair.format

    def __contains__(self, source_id: object) -> bool:
        return source_id in self._targets

    def __len__(self) -> int:
        return len(self._targets)

    def __iter__(self) -> Iterator[int]:
        return iter(pair.source_id for pair in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        return {"ids": [{"source": p.source_id, "target": p.target_id, "format": p.format.value} for p in self.pairs]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IdMap:
        return cls(tuple(IdPair(i["source"], i["target"], SchemaFormat(i["format"])) for i in data.get("ids", ())))


@dataclass(frozen=True)
class RecordMismatch:
    """Why one target key or value fails the per-record proof, with the ids involved (None: no header there)."""

    reason: Mismatch
    source_id: int | None  # the id in the source's header
    expected_id: int | None  # the id the target must carry: the map's, or the source's own where the map has none
    target_id: int | None  # the id in the target's header

    def describe(self) -> str:
        ids = f"source id {self.source_id}, expected {self.expected_id}, target id {self.target_id}"
        return {
            Mismatch.NULL_DIFFERS: "one side is null and the other is not",
            Mismatch.HEADER_DISAPPEARED: f"the target lost the source's schema header ({ids})",
            Mismatch.HEADER_APPEARED: f"the target has a schema header the source did not ({ids})",
            Mismatch.INDEXES_DIFFER: f"the Protobuf message indexes differ ({ids})",
            Mismatch.PAYLOAD_DIFFERS: f"the bytes after the schema header differ ({ids})",
            Mismatch.WRONG_ID: f"the target's schema id is not the mapped one ({ids})",
        }[self.reason]

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason.value,
            "source_id": self.source_id,
            "expected_id": self.expected_id,
            "target_id": self.target_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecordMismatch:
        return cls(Mismatch(data["reason"]), data.get("source_id"), data.get("expected_id"), data.get("target_id"))


@dataclass(frozen=True)
class PartCounts:
    """Keys (or values) of one partition by what became of them."""

    translated: int = 0
    unchanged: int = 0
    without_header: int = 0

    @property
    def total(self) -> int:
        return self.translated + self.unchanged + self.without_header

    def __add__(self, other: PartCounts) -> PartCounts:
        return PartCounts(
            self.translated + other.translated,
            self.unchanged + other.unchanged,
            self.without_header + other.without_header,
        )

    def to_dict(self) -> dict[str, int]:
        return {"translated": self.translated, "unchanged": self.unchanged, "without_header": self.without_header}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PartCounts:
        return cls(int(data["translated"]), int(data["unchanged"]), int(data["without_header"]))


@dataclass(frozen=True)
class SchemaCounts:
    """One partition's keys and values by outcome, counted apart: a topic may translate values and leave raw
    keys (Redpanda's migrator rewrites values only), and the report should say which."""

    topic: str
    partition: int
    keys: PartCounts = PartCounts()
    values: PartCounts = PartCounts()

    @classmethod
    def tally(cls, topic: str, partition: int, outcomes: Iterable[tuple[RecordPart, Outcome]]) -> SchemaCounts:
        """Counts of a stream of (key or value, outcome), as the copy or the verification yields them."""
        seen = Counter(outcomes)

        def part(which: RecordPart) -> PartCounts:
            return PartCounts(
                seen[which, Outcome.TRANSLATED], seen[which, Outcome.UNCHANGED], seen[which, Outcome.WITHOUT_HEADER]
            )

        return cls(topic, partition, part(RecordPart.KEY), part(RecordPart.VALUE))

    def __add__(self, other: SchemaCounts) -> SchemaCounts:
        if (self.topic, self.partition) != (other.topic, other.partition):
            raise ConfigurationError(
                f"Schema counts of {self.topic}[{self.partition}] and {other.topic}[{other.partition}] cannot be "
                "added: they count different partitions."
            )
        return SchemaCounts(self.topic, self.partition, self.keys + other.keys, self.values + other.values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "keys": self.keys.to_dict(),
            "values": self.values.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SchemaCounts:
        return cls(
            str(data["topic"]),
            int(data["partition"]),
            PartCounts.from_dict(data["keys"]),
            PartCounts.from_dict(data["values"]),
        )


@dataclass(frozen=True)
class RegistryConfig:
    """How to reach one schema registry: its Confluent-compatible base URL (Apicurio's ends ``/apis/ccompat/v7``),
    basic auth ``user:password`` or a bearer token, and TLS files. The secrets never appear in its repr, in
    ``display_url`` or in any message built from it."""

    url: str
    basic_auth: str | None = field(default=None, repr=False)
    bearer_token: str | None = field(default=None, repr=False)
    ca_location: str | None = None
    cert_location: str | None = None
    key_location: str | None = None
    # Where these settings come from, named in the way out of a refusal ("--source-registry-config", "Airflow
    # connection 'schema_registry_source'"); empty: "the registry's settings".
    origin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"Schema registry URL {self.display_url!r} is not an http(s) URL with a host: give its base URL, "
                "e.g. https://registry:8081 (Apicurio: .../apis/ccompat/v7)."
            )
        if self.basic_auth is not None and ":" not in self.basic_auth:
            raise ConfigurationError(f"Schema registry {self.display_url}: basic auth must be 'user:password'.")
        if self.basic_auth is not None and parts.username:
            raise ConfigurationError(
                f"Schema registry {self.display_url}: give the user and password in the URL or as basic auth, not both."
            )
        if self.basic_auth and self.bearer_token:
            raise ConfigurationError(
                f"Schema registry {self.display_url}: give basic auth or a bearer token, not both."
            )
        if (self.cert_location is None) != (self.key_location is None):
            raise ConfigurationError(
                f"Schema registry {self.display_url}: a TLS client certificate needs both its cert and key files."
            )

    @property
    def display_url(self) -> str:
        """The URL with any password in it replaced by ``***``: the only form messages and logs use."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret value, to scrub from text that might quote one."""
        found = [self.bearer_token or "", (self.basic_auth or "").partition(":")[2], urlsplit(self.url).password or ""]
        return tuple(s for s in found if s)

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def __repr__(self) -> str:
        return f"RegistryConfig(url={self.display_url!r}, auth={self.auth_kind!r}, tls={self.ca_location is not None})"

    @property
    def settings_origin(self) -> str:
        """Where a user changes these settings: ``origin``, or "the registry's settings"."""
        return self.origin or "the registry's settings"

    @property
    def auth_kind(self) -> str:
        return "basic" if self.basic_auth or urlsplit(self.url).password else "bearer" if self.bearer_token else "none"


# A registry's settings as confluent-kafka's SchemaRegistryClient names them -> RegistryConfig's fields: the keys of
# a --*-registry-config file (the CLI) and of a schema registry connection's extra (Airflow).
REGISTRY_SETTINGS = {
    "url": "url",
    "basic.auth.user.info": "basic_auth",
    "bearer.auth.token": "bearer_token",
    "ssl.ca.location": "ca_location",
    "ssl.certificate.location": "cert_location",
    "ssl.key.location": "key_location",
}


def check_registry_settings(settings: Mapping[str, object], where: str) -> dict[str, str]:
    """``settings`` named as in ``REGISTRY_SETTINGS``, each a non-empty string; anything else refused naming
    ``where`` (the file or the connection they came from) and the known names."""
    unknown = sorted(set(settings) - set(REGISTRY_SETTINGS))
    if unknown:
        known = sorted(REGISTRY_SETTINGS)
        raise ConfigurationError(f"{where}: unknown settings {unknown}; the known ones are {known}.")
    bad = sorted(k for k, v in settings.items() if not isinstance(v, str) or not v)
    if bad:
        raise ConfigurationError(f"{where}: {bad} must be non-empty strings.")
    return {k: str(v) for k, v in settings.items()}


def registry_config_of(settings: Mapping[str, str], origin: str = "") -> RegistryConfig:
    """The ``RegistryConfig`` of settings checked by ``check_registry_settings`` (``url`` among them); ``origin``
    names where they come from, for messages."""
    return RegistryConfig(**{REGISTRY_SETTINGS[k]: v for k, v in settings.items()}, origin=origin)
