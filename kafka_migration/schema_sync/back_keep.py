"""Keep mode on a failback: the records the target received after a cutover go back to the source as they are, once
every schema id they name is proven to mean on the source registry the schema it means on the target registry.

After a cutover whose runs kept the ids (the target registry holds the source's, e.g. moved whole with the
registry's export and import), producers on the target keep writing with the target registry, and may register new
versions there. Such a version gets the target registry's next id, which the source registry may not hold, or may
hold for another schema (the two registries number on their own since the import). Copied back as they are, those
records would name on the source an id its consumers cannot resolve, or one they would decode with the wrong schema.

``keep_back`` runs on the failback's plan before anything is written to the source (its run reads the cutover's
target and writes its source, so its options are the cutover's swapped, ``back.reversed_options``):

1. the census of the records to bring back (the ranges the failback copies: everything since the cutover) gives
   every schema id a key or value names, with the first record that names it;
2. each id is looked up on the target registry (its subject versions): an id it cannot give is refused as a forward
   run refuses one (``records.refuse_unknown``), unless ``--unknown-schema-ids pass`` lets it through unchanged;
3. each id must be on the source registry: one that is not there is refused, naming the subject, version and id
   and the ways out; one that is there is proven by ``sync.prove_pairs``, the schema read back by id from both
   registries with one canonical fingerprint, and another schema under that id is refused the same way;
4. the proven ids are the run's schemas (mode keep, recorded with the failback's run); the records are copied as
   bytes and verified as bytes, as a forward run in keep mode does.

Every refusal is exit 2, one line, before any record or subject is written.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kafka_migration.exceptions import RegistryNotFoundError, SchemaConflictError
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import SubjectVersion
from kafka_migration.model.text import plural
from kafka_migration.schema_sync.guard import Previous, refuse_mixed_ids

if TYPE_CHECKING:
    from kafka_migration.registry import RegistryClient
    from kafka_migration.schema_sync.sync import SchemaOptions

log = logging.getLogger(__name__)

MOST_NAMED = 5  # ids named after the first in a refusal
TRANSLATE_WAY_OUT = (
    "fail back with --schema-ids translate: it registers the version on the source registry under an id of that "
    "registry's own and rewrites the ids of the records, proven record by record"
)


def keep_back(
    options: SchemaOptions, plan: MigrationPlan, census: Census, previous: Previous | None = None
) -> MigrationPlan:
    """``plan`` (a failback's; ``options`` of its own direction: the source registry is the cutover's target's) with
    every schema id its records name proven to mean the same schema on both registries, the proven ids its schemas.
    ``previous``: the failback direction's ``checkpointed_translation`` (a retried failback keeps its first
    attempt's way with the ids)."""
    from kafka_migration.registry import RegistryClient
    from kafka_migration.schema_sync.records import census_note, refuse_unknown, resolve_ids
    from kafka_migration.schema_sync.sync import with_schemas

    if previous:
        refuse_mixed_ids(plan, previous, set(), options.mode)
    urls = (options.source.display_url, options.target.display_url)
    with RegistryClient(options.source) as source, RegistryClient(options.target) as target:
        resolved = resolve_ids(census, (), source)
        if not options.pass_unknown_ids:
            refuse_unknown(census, resolved.unknown, urls[0])
        versions = prove_kept(census, resolved.holders, (source, target), urls)
    run = SchemaRun(options.mode, *urls, versions, id_map_of(versions), census=census_note(census, resolved))
    log.info("%s", run.render())
    return with_schemas(plan, run, options.pass_unknown_ids, census)


def prove_kept(
    census: Census,
    holders: Mapping[int, tuple[SubjectVersion, ...]],
    doors: tuple[RegistryClient, RegistryClient],
    urls: tuple[str, str],
) -> tuple[SyncedVersion, ...]:
    """Each id the records name (``holders``: its subject versions on the failback's source registry, the cutover's
    target) held by the registry the records go back to with the same canonical schema: a version per id, present
    on both under that id; refused (``SchemaConflictError``) where it is not there, or is another schema there."""
    from kafka_migration.schema_sync.sync import prove_pairs

    source, target = doors
    versions: list[SyncedVersion] = []
    absent: list[SyncedVersion] = []
    for schema_id, held in sorted(holders.items()):
        here = held[0]
        try:
            there = target.subject_versions_of(schema_id)
        except RegistryNotFoundError:
            there = []
        same = next((v for v in there if v.subject == here.subject), there[0] if there else None)
        version = SyncedVersion(
            same.subject if same is not None else here.subject,
            here.version,
            here.subject,
            source.schema(schema_id).format,
            schema_id,
            schema_id if same is not None else None,
            VersionAction.PRESENT,
            same.version if same is not None else None,
        )
        (versions if same is not None else absent).append(version)
    if absent:
        raise SchemaConflictError(_not_there(census, absent, urls))
    return prove_pairs(
        versions,
        doors,
        lambda v: _not_there(census, [v], urls),
        lambda v, mine, theirs: _another(census, v, urls, (mine, theirs)),
        error=SchemaConflictError,
    )


def _named(census: Census, v: SyncedVersion, target_url: str) -> str:
    """``schema id 57, subject 'orders-value' version 3 on the target registry URL (2 keys and values to bring
    back name it, the first ...)``."""
    first: Sighting | None = census.first_of([v.source_id]).get(v.source_id)
    count = census.records_naming(v.source_id)
    seen = (
        f" ({plural(count, 'key or value', 'keys and values')} to bring back {'names' if count == 1 else 'name'} it, "
        f"the first {first.where()})"
        if first is not None
        else ""
    )
    where = f"subject {v.source_subject!r} version {v.version} on the target registry {target_url}"
    return f"schema id {v.source_id}, {where}{seen}"


def _not_there(census: Census, absent: list[SyncedVersion], urls: tuple[str, str]) -> str:
    head = absent[0]
    others = [str(v.source_id) for v in absent[1:]]
    more = ""
    if others:
        rest = len(others) - MOST_NAMED
        listed = ", ".join(others[:MOST_NAMED]) + (f" and {rest} more" if rest > 0 else "")
        more = f" (nor {'is' if len(others) == 1 else 'are'} id{'s' if len(others) != 1 else ''} {listed})"
    return (
        f"Failback with --schema-ids keep: {_named(census, head, urls[0])}, is not on the source registry "
        f"{urls[1]}{more}; copied back as they are, those records would name an id the source's consumers cannot "
        f"resolve. Nothing was written. Register that version on the source registry under id {head.source_id} (a "
        "registry that takes an id on register, as Confluent's in IMPORT mode; Apicurio's Confluent-compatible API "
        f"ignores it, and its import takes only an empty registry) and fail back again, or {TRANSLATE_WAY_OUT}."
    )


def _another(census: Census, v: SyncedVersion, urls: tuple[str, str], fingerprints: tuple[str, str]) -> str:
    return (
        f"Failback with --schema-ids keep: {_named(census, v, urls[0])}, names another schema on the source registry "
        f"{urls[1]} (subject {v.target_subject!r} version {v.target_version}; canonical fingerprints "
        f"{fingerprints[0]} and {fingerprints[1]}): copied back as they are, those records would be read there with "
        f"that other schema. Nothing was written. The id is taken on the source registry, so {TRANSLATE_WAY_OUT}."
    )
