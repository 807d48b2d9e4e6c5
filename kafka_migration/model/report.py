"""A sign-off report as its readers get it: ``report.json`` (``reports/signoff.build_report``'s content) read once
into frozen values, so that lineage and the Airflow assets read fields, not string keys.

The report's JSON stays the record (its bytes are what the ledger's digest vouches for); this is the reading of it
that the run's lineage is built from. Sections a reader does not use are left out, and a key a report written by
an older version lacks reads as None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ReportRun:
    """``run``: the run as the ledger closed it."""

    run_id: str
    status: str
    message: str | None = None
    trigger: str | None = None
    started_at: str | None = None
    ended_at: str | None = None


@dataclass(frozen=True)
class ReportCluster:
    """``scope.source`` or ``scope.target``: a cluster's id and its bootstrap addresses as the run used them."""

    cluster_id: str
    bootstrap: str


@dataclass(frozen=True)
class ReportScope:
    source: ReportCluster
    target: ReportCluster
    dry_run: bool = False


@dataclass(frozen=True)
class ReportTotals:
    topics: int
    partitions: int
    records_copied: int
    records_verified: int
    partitions_verified: int
    partitions_not_verified: int


@dataclass(frozen=True)
class ReportPartition:
    """One entry of a topic's ``partition_details``: its ranges, counts, checksums and status."""

    partition: int
    status: str
    source_start: int | None = None
    source_end: int | None = None
    target_start: int | None = None
    target_end: int | None = None
    copied_records: int | None = None
    source_records: int | None = None
    target_records: int | None = None
    source_checksum: str | None = None
    target_checksum: str | None = None
    first_difference: str | None = None


@dataclass(frozen=True)
class ReportTopic:
    """One of ``topics``: the topic's verdict and counts; ``target_topic`` None for a topic with no target."""

    source_topic: str
    target_topic: str | None
    verdict: str
    records_copied: int
    bytes_copied: int
    records_verified: int
    partitions: tuple[ReportPartition, ...]


@dataclass(frozen=True)
class ReportSchemaVersion:
    """One subject version a run moved (``schemas.versions``): subjects, version, format, ids, action."""

    source_subject: str
    target_subject: str | None
    version: int
    format: str
    source_id: int
    target_id: int | None
    action: str
    fingerprint: str | None = None


@dataclass(frozen=True)
class ReportSchemas:
    """``schemas`` (``--schema-ids``): the registries, the versions, the id map, the keys and values translated."""

    mode: str
    source_registry: str
    target_registry: str
    versions: tuple[ReportSchemaVersion, ...]
    id_map: tuple[Mapping[str, Any], ...]  # each {"source", "target", "format"}, as the report holds it
    keys_translated: int
    values_translated: int


@dataclass(frozen=True)
class SignoffReport:
    """The report's run, verdict (as the report words it), scope, totals, topics and schema section (None: the
    run moved no schemas)."""

    run: ReportRun
    verdict: str
    scope: ReportScope
    totals: ReportTotals
    topics: tuple[ReportTopic, ...]
    schemas: ReportSchemas | None = None

    @classmethod
    def read(cls, path: Path) -> SignoffReport:
        return cls.from_content(json.loads(Path(path).read_bytes()))

    @classmethod
    def from_content(cls, content: Mapping[str, Any]) -> SignoffReport:
        """From the report's content (``build_report``'s dict, or report.json parsed)."""
        scope, totals = content["scope"], content["totals"]
        return cls(
            run=_fields(ReportRun, content["run"]),
            verdict=content["verdict"],
            scope=ReportScope(
                ReportCluster(scope["source"]["cluster_id"], scope["source"]["bootstrap"]),
                ReportCluster(scope["target"]["cluster_id"], scope["target"]["bootstrap"]),
                bool(scope.get("dry_run")),
            ),
            totals=_fields(ReportTotals, totals),
            topics=tuple(_topic(t) for t in content["topics"]),
            schemas=_schemas(content.get("schemas")),
        )


def _fields(kind: type[Any], values: Mapping[str, Any]) -> Any:
    """``kind`` from the keys of ``values`` it has fields for (a key an older report lacks: the field's default)."""
    names = kind.__dataclass_fields__
    return kind(**{name: values[name] for name in names if name in values})


def _topic(topic: Mapping[str, Any]) -> ReportTopic:
    return ReportTopic(
        source_topic=topic["source_topic"],
        target_topic=topic.get("target_topic"),
        verdict=topic["verdict"],
        records_copied=topic["records_copied"],
        bytes_copied=topic["bytes_copied"],
        records_verified=topic["records_verified"],
        partitions=tuple(_fields(ReportPartition, p) for p in topic["partition_details"]),
    )


def _schemas(section: Mapping[str, Any] | None) -> ReportSchemas | None:
    if not section:
        return None
    totals = section["totals"]
    return ReportSchemas(
        mode=section["mode"],
        source_registry=section["source_registry"],
        target_registry=section["target_registry"],
        versions=tuple(_fields(ReportSchemaVersion, v) for v in section["versions"]),
        id_map=tuple(section["id_map"]),
        keys_translated=totals["keys"]["translated"],
        values_translated=totals["values"]["translated"],
    )
