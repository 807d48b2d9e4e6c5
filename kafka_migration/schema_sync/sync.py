"""Schemas moved with a run's records, end to end: read both registries, plan, register, prove, hand over the id map.

``sync_schemas`` runs while the run is planned, after its topics are selected and before anything is written to
the target (no topic created, no record copied, the run not yet opened in the ledger):

1. reads every version of the TopicNameStrategy subjects of the selected topics (``<topic>-key``,
   ``<topic>-value``) and their references from the source registry, and the renamed subjects from the target;
   given a census of the run's source records (``model.census``), resolves the ids found there that those
   subjects do not hold (``records.resolve_ids``): their subjects (RecordNameStrategy and others) are read and
   moved too, under their own names, and an id the source registry cannot give is refused, naming the first record
   that carries it, unless such records may pass unchanged;
2. refuses a source version whose canonical form cannot be computed (it does not parse; a Protobuf schema held as
   ``.proto`` text whose registry serves no base64 descriptor for it with ``format=serialized``), which could
   not be proven on the target; plans them (``schemas.plan.plan_subjects``): each version present on the target,
   to register, or a conflict; a conflict is refused, naming subject and version and the way out, before any
   subject is written;
3. translate mode: registers the versions to register, references first (their references pointed at the
   versions the target gave them); keep mode: registers nothing, and refuses a target that lacks a version
   under the source's id (no Confluent-compatible register keeps an id on Apicurio);
4. proves each source id and its target id name the same schema: both read back by id, each with its references
   read from its own registry, their canonical fingerprints equal;
5. puts the result in the plan: the ``SchemaRun`` (written to plan.json, recorded by the ledger with the run) and
   each topic's id map, which reaches the copy and verification tasks with their slices.

A dry run does steps 1 and 2 (with a bounded census) and lists what it would register. A topic without any subject
on the source registry, and without any id in its records that the run moves, keeps no id map: its records are
copied and verified byte for byte, as with ``--schema-ids off``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kafka_migration.exceptions import (
    RegistryAuthorizationError,
    SchemaConflictError,
    SchemaError,
    SchemaUnreadableError,
)
from kafka_migration.model.census import Census
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import IdMap, IdPair, RegisteredSchema, RegistryConfig, SchemaMode, SchemaReference
from kafka_migration.registry import RegistryClient, read_catalog
from kafka_migration.schema_sync.compat import global_compatibility, read_compatibility
from kafka_migration.schema_sync.guard import CensusTaker, refuse_mixed_ids
from kafka_migration.schema_sync.records import ResolvedIds, census_note, refuse_unknown, resolve_ids
from kafka_migration.schemas.plan import (
    Action,
    PlannedVersion,
    fingerprint_with_references,
    plan_subjects,
    subject_names,
)

log = logging.getLogger(__name__)

Key = tuple[str, int]


@dataclass(frozen=True)
class SchemaOptions:
    """``--schema-ids`` and the two registries (their secrets stay in the configs, never in the plan)."""

    mode: SchemaMode
    source: RegistryConfig
    target: RegistryConfig
    pass_unknown_ids: bool = False  # --unknown-schema-ids pass: a record naming an id outside the map is copied as is


def check_registries(options: SchemaOptions) -> None:
    """Both registries answer and let this user read (seconds, before Spark starts or anything is written)."""
    for config in (options.source, options.target):
        with RegistryClient(config) as door:
            door.subjects()


def sync_schemas(
    options: SchemaOptions,
    plan: MigrationPlan,
    previous: Mapping[tuple[str, str], str | None] | None = None,
    census: CensusTaker | None = None,
) -> MigrationPlan:
    """``plan`` with its schemas planned (a dry run) or synced and proven, and each topic's id map (translate).
    ``previous``: the ledger's ``checkpointed_translation``, so that a continuing topic keeps its earlier runs' way
    with the ids (``refuse_mixed_ids``). ``census``: takes the census of the plan's source ranges (None: only the
    topics' own subjects move, and a record naming another id is found by the copy)."""
    dry_run = bool(plan.options.get("dry_run"))
    template = str(plan.options.get("rename") or "{topic}")
    topics = [t.source_topic for t in plan.topics]
    with RegistryClient(options.source) as source, RegistryClient(options.target) as target:
        renamed = subject_names(topics, template)
        with ThreadPoolExecutor(1, thread_name_prefix="registry-reads") as meanwhile:
            # The topics' own subjects need no census: read while it reads the records (its wait is the run's).
            own = meanwhile.submit(_read_own, source, target, renamed)
            found = census(plan) if census is not None else None
            source_catalog, target_catalog, global_levels = own.result()
        resolved = ResolvedIds()
        if found is not None:
            resolved = resolve_ids(found, {s.schema_id for s in source_catalog.values()}, source)
            if not options.pass_unknown_ids:
                refuse_unknown(found, resolved.unknown, options.source.display_url)
            if resolved.subjects:
                source_catalog = {**source_catalog, **read_catalog(source, list(resolved.subjects))}
        refuse_unreadable(source_catalog, options.source.display_url)
        others = sorted(set(resolved.subjects) - set(renamed.values()))
        if others:
            target_catalog = {**target_catalog, **read_catalog(target, others)}
        planned = plan_subjects(topics, template, source_catalog, target_catalog, resolved.subjects)
        pairs = [(p.source_subject, p.target_subject) for p in planned]
        compatibility = read_compatibility(source, target, pairs, global_levels)
        refuse_conflicts(planned, options.target.display_url)
        if previous:
            translating = set()
            if options.mode is SchemaMode.TRANSLATE:
                translating = _translating(topics, source_catalog, found)
            refuse_mixed_ids(plan, previous, translating, options.mode)
        if options.mode is SchemaMode.KEEP:
            refuse_unkept(planned, options.target.display_url)
        if dry_run:
            versions = tuple(_unproven(p) for p in planned)
            id_map = id_map_of(versions)
        else:
            versions = _prove(_register_all(planned, target), source, target)
            id_map = id_map_of(versions)
    note = census_note(found, resolved) if found is not None else None
    run = SchemaRun(
        options.mode,
        options.source.display_url,
        options.target.display_url,
        versions,
        id_map,
        dry_run=dry_run,
        compatibility=compatibility,
        census=note,
    )
    log.info("%s", run.render())
    return with_schemas(plan, run, options.pass_unknown_ids, found)


def _read_own(
    source: RegistryClient, target: RegistryClient, renamed: Mapping[str, str]
) -> tuple[dict[Key, RegisteredSchema], dict[Key, RegisteredSchema], tuple[str | None, str | None]]:
    """The topics' own subjects on both registries (their catalogs) and each registry's global compatibility."""
    levels = (global_compatibility(source), global_compatibility(target))
    return read_catalog(source, sorted(renamed)), read_catalog(target, sorted(renamed.values())), levels


def _translating(topics: Iterable[str], catalog: Mapping[Key, RegisteredSchema], census: Census | None) -> set[str]:
    """The topics a translate run rewrites: those with a subject of their own, or whose records carry an id the
    sync moves."""
    subjects = {subject for subject, _ in catalog}
    ids = {schema.schema_id for schema in catalog.values()}
    return {
        t
        for t in topics
        if f"{t}-key" in subjects or f"{t}-value" in subjects or (census is not None and census.ids_of(t) & ids)
    }


def refuse_conflicts(planned: Iterable[PlannedVersion], target_url: str) -> None:
    conflicts = [p for p in planned if p.action is Action.CONFLICT]
    if not conflicts:
        return
    lines = "\n".join(
        f"  - subject {p.target_subject!r} version {p.version}: the target holds another schema (target id "
        f"{p.target_id}) than the source's {p.source_subject!r} version {p.version} (source id {p.schema.schema_id})"
        for p in conflicts
    )
    raise SchemaConflictError(
        f"{len(conflicts)} subject version{'s' if len(conflicts) != 1 else ''} conflict on the target registry "
        f"{target_url}; nothing was written:\n{lines}\nCopy under other names (--rename, which renames the "
        "subjects with the topics), or delete those subject versions on the target registry, or use an empty one."
    )


def refuse_unreadable(catalog: Mapping[Key, RegisteredSchema], source_url: str) -> None:
    """Every source version the run would move gives its canonical form, with its references': one that does not
    would be registered on the target and then fail its proof, so it is refused before anything is written."""
    for (subject, version), schema in sorted(catalog.items()):
        try:
            fingerprint_with_references(schema, lambda s, v: catalog.get((s, v)))
        except SchemaError as e:
            raise SchemaUnreadableError(
                f"Subject {subject!r} version {version} (schema id {schema.schema_id}) on the source registry "
                f"{source_url} cannot be proven on a target; nothing was written. {e}"
            ) from None


def refuse_unkept(planned: Iterable[PlannedVersion], target_url: str) -> None:
    """Keep mode registers nothing: every version must be on the target already, under the source's id."""
    missing = [p for p in planned if p.action is Action.REGISTER or p.target_id != p.schema.schema_id]
    if not missing:
        return
    lines = "\n".join(
        f"  - subject {p.target_subject!r} version {p.version}: source id {p.schema.schema_id}, "
        + ("not on the target" if p.target_id is None else f"target id {p.target_id}")
        for p in missing[:20]
    )
    more = f"\n  ... and {len(missing) - 20} more" if len(missing) > 20 else ""
    raise SchemaConflictError(
        f"--schema-ids keep: the target registry {target_url} does not hold {len(missing)} subject "
        f"version{'s' if len(missing) != 1 else ''} under the source's ids, and this run cannot register a schema "
        f"under a given id (Apicurio's Confluent-compatible API ignores it, even in IMPORT mode); nothing was "
        f"written:\n{lines}{more}\nMove the whole registry with its own export and import first (Apicurio: "
        "/apis/registry/v3/admin/export into an empty registry's /admin/import), or use --schema-ids translate."
    )


def _unproven(p: PlannedVersion) -> SyncedVersion:
    action = VersionAction.PRESENT if p.action is Action.PRESENT else VersionAction.TO_REGISTER
    target_version = p.version if p.action is Action.PRESENT else None
    return SyncedVersion(
        p.target_subject,
        p.version,
        p.source_subject,
        p.schema.format,
        p.schema.schema_id,
        p.target_id,
        action,
        target_version,
    )


def _register_all(planned: list[PlannedVersion], target: RegistryClient) -> Iterable[SyncedVersion]:
    """Register what the target lacks, in the plan's order (references first), each reference pointed at the
    version the target holds it under."""
    placed: dict[Key, Key] = {}  # source (subject, version) -> target (subject, version)
    registered = 0
    for p in planned:
        if p.action is Action.PRESENT:
            placed[(p.source_subject, p.version)] = (p.target_subject, p.version)
            yield _unproven(p)
            continue
        schema = _pointed(p.schema, placed)
        what = (
            f"Subject {p.target_subject!r} version {p.version} (source subject {p.source_subject!r} version "
            f"{p.version}, id {p.schema.schema_id})"
        )
        target_id = register_or_refuse(
            target, p.target_subject, schema, what, registered, "the target registry", KEEP_WAY_OUT
        )
        registered += 1
        found = target.lookup(p.target_subject, schema)
        if found is None:
            raise SchemaError(
                f"Subject {p.target_subject!r}: the target registry gave id {target_id} to the schema of source "
                f"{p.source_subject!r} version {p.version} but does not find it under the subject when asked back; "
                "check the target registry's state, then run again (registered versions are found present)."
            )
        placed[(p.source_subject, p.version)] = (p.target_subject, found.version.version)
        yield SyncedVersion(
            p.target_subject,
            p.version,
            p.source_subject,
            p.schema.format,
            p.schema.schema_id,
            target_id,
            VersionAction.REGISTERED,
            found.version.version,
        )


KEEP_WAY_OUT = (
    "or use --schema-ids keep (Param schema_ids keep) with a target registry that already holds the source's ids "
    "(moved whole with the registry's own export and import)"
)


def register_or_refuse(
    door: RegistryClient, subject: str, schema: RegisteredSchema, what: str, before: int, registry: str, way_out: str
) -> int:
    """``door.register`` on the registry a run writes; one that refuses it (HTTP 401/403: this user may read, not
    write) is refused naming ``what`` could not be registered, what was registered before it (``before``
    versions), and the way out: write rights, or ``way_out``."""
    try:
        return door.register(subject, schema)
    except RegistryAuthorizationError as exc:
        written = (
            "nothing was written"
            if before == 0
            else f"the {before} version{'s' if before != 1 else ''} registered before it stay (found present when run "
            "again); no topic was created and no record copied"
        )
        config = door.config
        raise RegistryAuthorizationError(
            f"{what} could not be registered on {registry} {config.display_url}: it "
            f"{'refused the credentials' if exc.status == 401 else 'forbids this user to write'} ({exc.detail}); "
            f"{written}. Grant this user write rights on the registry's subjects, or give one that has them in "
            f"{config.settings_origin}, {way_out}.",
            exc.status,
            exc.detail,
        ) from exc


def _pointed(schema: RegisteredSchema, placed: Mapping[Key, Key]) -> RegisteredSchema:
    references = []
    for ref in schema.references:
        subject, version = placed.get((ref.subject, ref.version), (ref.subject, ref.version))
        references.append(SchemaReference(ref.name, subject, version))
    return dataclasses.replace(schema, references=tuple(references))


def _prove(
    versions: Iterable[SyncedVersion], source: RegistryClient, target: RegistryClient
) -> tuple[SyncedVersion, ...]:
    """Each source id and its target id, read back by id from their own registries, have one fingerprint; each
    version gets it. A difference is refused: the target would decode the records with another schema."""
    return prove_pairs(
        versions,
        (source, target),
        lambda v: f"Subject {v.target_subject!r} version {v.version} has no target id to prove.",
        lambda v, mine, theirs: (
            f"Subject {v.target_subject!r} version {v.version}: source id {v.source_id} and target id "
            f"{v.target_id} do not name the same schema (canonical fingerprints {mine} and {theirs}); "
            "no record was copied. Check what the target registry normalizes on register, then run again."
        ),
    )


def prove_pairs(
    versions: Iterable[SyncedVersion],
    doors: tuple[RegistryClient, RegistryClient],
    no_id: Callable[[SyncedVersion], str],
    differ: Callable[[SyncedVersion, str, str], str],
    error: Callable[[str], Exception] = SchemaError,
) -> tuple[SyncedVersion, ...]:
    """Each version with the fingerprint its source id and its target id share, each pair read back by id once
    from ``doors`` (the source's registry, the target's); a version without a target id, or a pair whose
    fingerprints differ, is refused with ``no_id`` / ``differ``'s message (the forward sync's, or a failback's), as
    ``error`` (``SchemaError``; a failback in keep mode, which has written nothing, refuses as bad input)."""
    source, target = doors
    proven: dict[tuple[int, int | None], str] = {}
    out = []
    for v in versions:
        pair = (v.source_id, v.target_id)
        if pair not in proven:
            if v.target_id is None:
                raise error(no_id(v))
            mine = fingerprint_by_id(source, v.source_id)
            theirs = fingerprint_by_id(target, v.target_id)
            if mine != theirs:
                raise error(differ(v, mine, theirs))
            proven[pair] = mine
        out.append(dataclasses.replace(v, fingerprint=proven[pair]))
    return tuple(out)


def fingerprint_by_id(door: RegistryClient, schema_id: int) -> str:
    """A schema's fingerprint as its registry serves it by id, its references' texts read from the same registry."""
    return fingerprint_with_references(
        door.schema(schema_id), lambda subject, version: door.subject_version(subject, version).schema
    )


def with_schemas(
    plan: MigrationPlan, run: SchemaRun, pass_unknown_ids: bool = False, census: Census | None = None
) -> MigrationPlan:
    """``plan`` carrying ``run``, and in translate mode each topic's id map: the ids of its own subjects' versions
    and those the census found in its records that the run moved (a topic without any keeps none and is copied
    byte for byte)."""
    if run.mode is not SchemaMode.TRANSLATE or run.dry_run:
        return dataclasses.replace(plan, schemas=run.to_dict())
    by_subject: dict[str, list[SyncedVersion]] = {}
    for v in run.versions:
        by_subject.setdefault(v.source_subject, []).append(v)
    topics = []
    for topic in plan.topics:
        ids = [v.source_id for part in ("key", "value") for v in by_subject.get(f"{topic.source_topic}-{part}", [])]
        if census is not None:
            ids += sorted(i for i in census.ids_of(topic.source_topic) if i in run.id_map)
        pairs = tuple(IdPair(i, run.id_map.target(i), run.id_map.format(i)) for i in dict.fromkeys(ids))  # type: ignore[arg-type]
        ids = {**IdMap(pairs).to_dict(), "pass_unknown_ids": True} if pass_unknown_ids else IdMap(pairs).to_dict()
        topics.append(dataclasses.replace(topic, schema_ids=ids if pairs else None))
    return dataclasses.replace(plan, topics=tuple(topics), schemas=run.to_dict())
