"""Canonical forms of schemas, to decide whether a source id and its target id resolve to the same schema.

Two registries seldom give back the same text for one schema (one may re-render it, or normalize it on
registration), so the verification compares canonical forms, and records their SHA-256 as the schema's
fingerprint:

- **Avro**: the Parsing Canonical Form of the Avro specification (fastavro's ``to_parsing_canonical_form``), with
  the referenced named types defined where first used, as a self-contained schema would. It keeps what decides
  how the bytes parse (names, types, fields, symbols, sizes) and drops the rest: doc, aliases, defaults, order,
  and also ``logicalType`` (a date and an int share a form).
- **JSON Schema**: the JSON text with sorted keys and no insignificant whitespace.
- **Protobuf**: the ``FileDescriptorProto`` in base64, as confluent-kafka's serializer registers it, or for a schema
  held as ``.proto`` source what the registry serves with ``format=serialized`` (``RegisteredSchema.descriptor``:
  base64 on Confluent's API, the form confluent-kafka's deserializer itself reads, as neither it nor the protobuf
  library parses ``.proto`` text), built in a protobuf ``DescriptorPool`` and copied back out, so that type
  references are resolved to full names and their kinds filled in; then without what does not change a message's
  meaning: the file's own name, source info, ``json_name`` where it is the default, the order of imports and of a
  message's fields. The order of messages, nested messages and enum values is kept: a record's message indexes
  address messages by position, and an enum's first value is its default. The form is the protobuf text format
  of a ``FileDescriptorSet``: the references by import name, then the schema.

References are given by name (the Avro type's full name, the Protobuf import path, the JSON ``$ref``) -> their
text, all of them, also the references' own; for JSON Schema and Protobuf they are part of the form, by name.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from kafka_migration.exceptions import SchemaError
from kafka_migration.model.schemas import RegisteredSchema, SchemaFormat


def canonical_form(fmt: SchemaFormat, text: str, references: Mapping[str, str] | None = None) -> str:
    """The canonical form of a schema's ``text`` with its ``references`` (name -> text), per ``fmt``."""
    references = references or {}
    if fmt is SchemaFormat.AVRO:
        return _avro(text, references)
    if fmt is SchemaFormat.JSON:
        return _json_schema(text, references)
    return _protobuf(text, references)


def fingerprint(fmt: SchemaFormat, text: str, references: Mapping[str, str] | None = None) -> str:
    """``sha256:`` and the hex SHA-256 of the canonical form: equal exactly when the canonical forms are."""
    return "sha256:" + hashlib.sha256(canonical_form(fmt, text, references).encode()).hexdigest()


def schema_fingerprint(schema: RegisteredSchema, references: Mapping[str, str] | None = None) -> str:
    """A registered schema's fingerprint, its references' texts given by reference name."""
    wanted = {r.name for r in schema.references} - set(references or {})
    if wanted:
        raise SchemaError(f"Schema id {schema.schema_id}: the text of its references {sorted(wanted)} is needed.")
    return fingerprint(schema.format, schema.canonical_text, references)


# -- Avro --------------------------------------------------------------------------------------------------------


def _json(text: str, what: str) -> Any:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise SchemaError(f"{what} gives the keys {repeated} twice: which one a registry keeps is not defined.")
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise SchemaError(f"{what} is not JSON: {e}") from None


def _avro(text: str, references: Mapping[str, str]) -> str:
    from fastavro.schema import parse_schema, to_parsing_canonical_form

    named: dict[str, Any] = {}
    pending = {name: _json(ref, f"Avro reference {name!r}") for name, ref in sorted(references.items())}
    while pending:  # references may reference each other: parse each once the types it names are known
        failures, before = {}, len(pending)
        for name, schema in list(pending.items()):
            trial = dict(named)  # a parse that fails part way leaves no half-defined type behind
            try:
                parse_schema(schema, trial, _write_hint=False)
            except Exception as e:  # fastavro raises UnknownType, SchemaParseException, ValueError, ...
                failures[name] = e
                continue
            named = trial
            del pending[name]
        if len(pending) == before:
            reasons = "; ".join(f"{name}: {e}" for name, e in failures.items())
            raise SchemaError(f"Avro references do not parse: {reasons}")
    try:
        parsed = parse_schema(_json(text, "Avro schema"), named, _write_hint=False)
        return to_parsing_canonical_form(_defined_once(parsed, named, set()))
    except SchemaError:
        raise
    except Exception as e:
        raise SchemaError(f"Avro schema does not parse: {type(e).__name__}: {e}") from None


_NAMED = {"record", "error", "enum", "fixed"}


def _defined_once(schema: Any, named: Mapping[str, Any], seen: set[str]) -> Any:
    """``schema`` made self-contained: each named type defined at its first use, in the order the canonical form
    is written, and referred to by its full name after, as a schema that defined it itself would be written."""
    if isinstance(schema, str):  # a primitive, or a named type: defined here if this is its first use
        return _defined_once(named[schema], named, seen) if schema in named else schema
    if isinstance(schema, list):
        return [_defined_once(branch, named, seen) for branch in schema]
    kind = schema["type"]
    if kind in _NAMED:
        if schema["name"] in seen:
            return schema["name"]
        seen.add(schema["name"])
    out = dict(schema)
    if kind in {"record", "error"}:
        out["fields"] = [{**f, "type": _defined_once(f["type"], named, seen)} for f in schema["fields"]]
    elif kind == "array":
        out["items"] = _defined_once(schema["items"], named, seen)
    elif kind == "map":
        out["values"] = _defined_once(schema["values"], named, seen)
    elif not isinstance(kind, str):
        out["type"] = _defined_once(kind, named, seen)
    return out


# -- JSON Schema -------------------------------------------------------------------------------------------------


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _json_schema(text: str, references: Mapping[str, str]) -> str:
    schema = _json(text, "JSON schema")
    if not references:
        return _canonical_json(schema)
    refs = {name: _json(ref, f"JSON schema reference {name!r}") for name, ref in references.items()}
    return _canonical_json({"references": refs, "schema": schema})


# -- Protobuf ----------------------------------------------------------------------------------------------------


def _descriptor(text: str, what: str) -> Any:
    """A ``FileDescriptorProto`` from a registry's ``format=serialized`` answer (base64)."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    if not text.strip():  # base64 of nothing, which would read as an empty file and prove any pair of empties
        raise SchemaError(f"Protobuf {what} is empty: the registry gave no file descriptor for it.")
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise SchemaError(
            f"Protobuf {what} is not a serialized file descriptor in base64, neither as registered nor as the "
            "registry serves it with format=serialized (where confluent-kafka's deserializer reads it too): .proto "
            "text has no parser here. Register the schema as confluent-kafka's serializer does (the descriptor in "
            "base64), or use a registry whose format=serialized answers base64."
        ) from None
    proto = descriptor_pb2.FileDescriptorProto()
    try:
        proto.ParseFromString(raw)
    except DecodeError as e:
        raise SchemaError(f"Protobuf {what} is not a file descriptor: {e}") from None
    proto.ClearField("source_code_info")
    if proto.syntax in {"", "proto2"}:
        proto.ClearField("syntax")  # proto2 is the default; a pool refuses an explicit empty syntax
    return proto


def _well_known() -> dict[str, bytes]:
    """The files every registry and confluent-kafka treat as built in, which a schema imports without reference."""
    from google.protobuf import (
        any_pb2,
        api_pb2,
        descriptor_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        source_context_pb2,
        struct_pb2,
        timestamp_pb2,
        type_pb2,
        wrappers_pb2,
    )

    modules = (any_pb2, source_context_pb2, type_pb2, api_pb2, descriptor_pb2, duration_pb2, empty_pb2)
    modules += (field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2)
    return {m.DESCRIPTOR.name: m.DESCRIPTOR.serialized_pb for m in modules}


def _protobuf(text: str, references: Mapping[str, str]) -> str:
    from google.protobuf import descriptor_pb2, descriptor_pool, text_format

    built_in = _well_known()
    main = _descriptor(text, "schema")
    files = {n: _descriptor(t, f"reference {n!r}") for n, t in references.items() if n not in built_in}
    pool = descriptor_pool.DescriptorPool()
    added = set()
    for name, serialized in built_in.items():  # in dependency order: type.proto after any and source_context
        pool.AddSerializedFile(serialized)
        added.add(name)
    main_name = "<schema>"  # no import path a registry accepts: it cannot collide with a reference's name
    main.name = main_name
    while files:
        ready = sorted(n for n, f in files.items() if set(f.dependency) <= added)
        if not ready:
            missing = sorted({d for f in files.values() for d in f.dependency} - added - set(files))
            raise SchemaError(f"Protobuf references import files that are not given: {missing or sorted(files)}")
        for name in ready:
            files[name].name = name
            _add(pool, files.pop(name), f"reference {name!r}")
            added.add(name)
    missing = sorted(set(main.dependency) - added)
    if missing:
        raise SchemaError(f"Protobuf schema imports files that are not given as references: {missing}")
    _add(pool, main, "schema")
    out = descriptor_pb2.FileDescriptorSet()
    for name in [*sorted(added - set(built_in)), main_name]:
        proto = out.file.add()
        pool.FindFileByName(name).CopyToProto(proto)
        _normalize_file(proto)
        if name == main_name:
            proto.ClearField("name")
    return text_format.MessageToString(out, print_unknown_fields=True)


def _add(pool: Any, proto: Any, what: str) -> None:
    try:
        pool.Add(proto)
    except (TypeError, ValueError, KeyError) as e:
        raise SchemaError(f"Protobuf {what} does not build: {e}") from None


def _json_name(name: str) -> str:
    """protoc's default JSON name of a field: underscores dropped, the letter after each in upper case."""
    out, upper = [], False
    for char in name:
        if char == "_":
            upper = True
        else:
            out.append(char.upper() if upper else char)
            upper = False
    return "".join(out)


def _normalize_fields(fields: Any, sort: bool) -> None:
    for field in fields:
        if field.HasField("json_name") and field.json_name == _json_name(field.name):
            field.ClearField("json_name")  # protoc writes the default; a registry may not
    if sort:
        ordered = [type(f).FromString(f.SerializeToString()) for f in sorted(fields, key=lambda f: f.number)]
        del fields[:]
        fields.extend(ordered)


def _normalize_message(message: Any) -> None:
    _normalize_fields(message.field, sort=True)  # a field is known by its number, not its place
    _normalize_fields(message.extension, sort=False)
    for nested in message.nested_type:
        _normalize_message(nested)


def _normalize_file(proto: Any) -> None:
    proto.ClearField("source_code_info")
    deps = list(proto.dependency)
    order = sorted(range(len(deps)), key=lambda i: deps[i])
    moved = {old: new for new, old in enumerate(order)}
    public = sorted(moved[i] for i in proto.public_dependency)
    weak = sorted(moved[i] for i in proto.weak_dependency)
    for name in ("dependency", "public_dependency", "weak_dependency"):
        proto.ClearField(name)
    proto.dependency.extend(deps[i] for i in order)
    proto.public_dependency.extend(public)
    proto.weak_dependency.extend(weak)
    for message in proto.message_type:
        _normalize_message(message)
    _normalize_fields(proto.extension, sort=False)
