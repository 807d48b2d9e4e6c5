"""Schemas on a failback: the records the target received after a cutover go back to the source with ids that mean
the same schemas there.

A failback's run reads the cutover's target and writes its source. When the runs before the cutover translated the
topics' schema ids, each record on the target names a target registry id, which the source's consumers cannot
resolve; ``failback_step`` makes that run translate back (keep mode: back_keep.py):

1. the map comes from the ledger: every subject version the forward runs recorded (``km_schema_ids``), each target
   id back to the source id it was translated from;
2. the failback's source registry (the cutover's target registry) is read for the topics' subjects
   (``<target topic>-key``, ``-value``) and their references; a version whose id the map names is on the source
   already; a version registered on the target after the cutover is registered on the source like a forward sync
   does, references first, under the source topic's subject;
3. each pair is proven, both schemas read back by id from their registries with one canonical fingerprint;
4. each topic gets its id map (target id -> source id), which the copy rewrites by and the verification proves
   record by record, as in the forward direction.

A failback treats the ids as the runs before the cutover did (``refuse_failback_mode``, exit 2, nothing written):
- after runs that translated them, ``--schema-ids translate`` (without it, or with keep, the source would get the
  target registry's ids);
- after runs that kept them, ``--schema-ids keep`` (back_keep.py: every id the records name proven on the source
  registry, the records copied as they are) or ``translate`` (the way out when a version registered on the target
  since the cutover cannot be put on the source under its id: the map back is then the kept runs' ids, each to
  itself, and what is new is registered on the source); without ``--schema-ids`` the ids would go back unproven;
- after runs without ``--schema-ids``, without it, or with keep (which only adds the proof); translate has no map.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_migration.exceptions import ConfigurationError, SchemaConflictError, SchemaError
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import SchemaMode, SchemaReference
from kafka_migration.schema_sync.guard import CensusTaker, SchemaStep, refuse_mixed_ids, schema_step
from kafka_migration.schemas.plan import PARTS, PlannedVersion, plan_subjects

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.registry import RegistryClient
    from kafka_migration.schema_sync.sync import SchemaOptions

log = logging.getLogger(__name__)

Key = tuple[str, int]  # (subject, version)
Pair = tuple[str, str]  # (source topic, target topic) of the forward direction


def reversed_options(options: SchemaOptions) -> SchemaOptions:
    """The options of a run in the other direction: its source registry is the cutover's target's."""
    return dataclasses.replace(options, source=options.target, target=options.source)


@dataclass(frozen=True)
class ForwardIds:
    """How the runs before a cutover treated its topics' schema ids, as their checkpoints say: (source topic, target
    topic) -> the run that translated them, or that kept them (``--schema-ids keep``); a topic in neither was copied
    without ``--schema-ids``."""

    translated: Mapping[Pair, str] = field(default_factory=dict)
    kept: Mapping[Pair, str] = field(default_factory=dict)


def forward_ids(ledger: Ledger, source_cluster_id: str, target_cluster_id: str, pairs: Iterable[Pair]) -> ForwardIds:
    """What the runs in the cutover's direction did with the ids of ``pairs`` (its topics)."""
    wanted = set(pairs)
    found = ledger.checkpointed_translation(source_cluster_id, target_cluster_id)
    translated = {pair: run for pair, run in found.items() if pair in wanted and run is not None}
    kept = ledger.checkpointed_kept(source_cluster_id, target_cluster_id)
    return ForwardIds(translated, {p: run for p, run in kept.items() if p in wanted and p not in translated})


def _named(runs: Mapping[Pair, str]) -> str:
    names = ", ".join(sorted(f"{s} -> {t} (run {run})" for (s, t), run in runs.items())[:5])
    return f"{len(runs)} topic{'s' if len(runs) != 1 else ''} ({names})"


def refuse_failback_mode(forward: ForwardIds, mode: SchemaMode) -> None:
    """A failback treats the ids as the cutover's runs did (one line, exit 2, nothing written; see the module)."""
    if forward.translated and mode is not SchemaMode.TRANSLATE:
        raise SchemaConflictError(
            f"The runs before the cutover translated the schema ids of {_named(forward.translated)}: copied back as "
            "they are, their records would name the target registry's ids on the source. Fail back with "
            "--schema-ids translate and the cutover's two registries (Param schema_ids translate and the registry "
            "connections)."
        )
    if forward.kept and mode is SchemaMode.OFF:
        raise SchemaConflictError(
            f"The runs before the cutover kept the schema ids of {_named(forward.kept)}: the records written on the "
            "target since name the target registry's ids, which mean the same schemas on the source registry only "
            "where a proof says so (a version registered on the target after the cutover may be missing there, or "
            "be another schema under that id). Fail back with --schema-ids keep and the cutover's two registries "
            "(Param schema_ids keep and the registry connections)."
        )
    if mode is SchemaMode.TRANSLATE and not forward.translated and not forward.kept:
        raise SchemaConflictError(
            "The runs before the cutover copied the schema ids as they were (none translated or kept them), so the "
            "target's records already name the source registry's ids: fail back without --schema-ids (or with "
            "--schema-ids keep, which proves each id they name on both registries)."
        )


def failback_step(ledger: Ledger, options: SchemaOptions | None) -> SchemaStep:
    """What a failback's run does with its plan before writing it. ``options``: of the failback's own direction
    (``reversed_options``: its source registry is the cutover's target's), None for ``--schema-ids off``.

    Translate: back through the map the forward runs proved (the translated runs', and the kept runs' ids each to
    itself) and the subjects of its own topics; it takes no census (a record naming an id outside them is refused
    when the copy reaches it). Keep: the census of the records to bring back (``census``, which the run's pipeline
    gives, and the failback DAG's plan task), each id in it proven on both registries (back_keep.py)."""

    def step(plan: MigrationPlan, census: CensusTaker | None = None) -> MigrationPlan:
        pairs = [(t.target_topic, t.source_topic) for t in plan.topics]
        forward = forward_ids(ledger, plan.target.cluster_id, plan.source.cluster_id, pairs)
        refuse_failback_mode(forward, SchemaMode.OFF if options is None else options.mode)
        if options is None:
            return schema_step(ledger, None)(plan)
        seeded_by = str(plan.options.get("failback_of") or "") or None
        previous = ledger.checkpointed_translation(plan.source.cluster_id, plan.target.cluster_id, seeded_by)
        if options.mode is SchemaMode.KEEP:
            from kafka_migration.schema_sync.back_keep import keep_back

            if census is None:
                raise ConfigurationError(
                    "A failback with --schema-ids keep proves every id its records name, and was given no census of "
                    "them; fail back with kafka-migrate failback or the kafka_failback DAG."
                )
            return keep_back(options, plan, census(plan), previous)
        runs = dict.fromkeys([*sorted(set(forward.translated.values())), *sorted(set(forward.kept.values()))])
        recorded = [v for run in runs for v in _versions(ledger, run)]
        return sync_back(options, plan, recorded, previous)

    return step


def _versions(ledger: Ledger, run_id: str) -> tuple[SyncedVersion, ...]:
    run = ledger.run_schema_ids(run_id)
    return run.versions if run is not None else ()


def sync_back(
    options: SchemaOptions,
    plan: MigrationPlan,
    recorded: Iterable[SyncedVersion],
    previous: Mapping[Pair, str | None] | None = None,
) -> MigrationPlan:
    """``plan`` (a failback's) with its schemas translated back through ``recorded`` (the forward runs' versions),
    the versions new on its source registry registered on its target, every pair proven."""
    from kafka_migration.registry import RegistryClient, read_catalog
    from kafka_migration.schema_sync.compat import read_compatibility
    from kafka_migration.schema_sync.sync import with_schemas

    renamed = {f"{t.source_topic}-{p}": f"{t.target_topic}-{p}" for t in plan.topics for p in PARTS}
    with RegistryClient(options.source) as source, RegistryClient(options.target) as target:
        catalog = read_catalog(source, sorted(renamed))
        # References first, every version "to register" against an empty catalog: only the order is used.
        ordered = plan_subjects([t.source_topic for t in plan.topics], "{topic}", catalog, {})
        if previous:
            subjects = {subject for subject, _ in catalog}
            translating = {t.source_topic for t in plan.topics if {f"{t.source_topic}-{p}" for p in PARTS} & subjects}
            refuse_mixed_ids(plan, previous, translating, options.mode)
        pairs = [(p.source_subject, renamed.get(p.source_subject, p.source_subject)) for p in ordered]
        compatibility = read_compatibility(source, target, pairs)
        versions = prove_back(_placed_back(ordered, renamed, recorded, target), source, target)
    urls = (options.source.display_url, options.target.display_url)
    run = SchemaRun(options.mode, *urls, versions, id_map_of(versions), compatibility=compatibility)
    log.info("%s", run.render())
    return with_schemas(plan, run, options.pass_unknown_ids)


def _placed_back(
    ordered: Iterable[PlannedVersion],
    renamed: Mapping[str, str],
    recorded: Iterable[SyncedVersion],
    target: RegistryClient,
) -> Iterator[SyncedVersion]:
    """Each version of the failback's source registry with its id on the target: the recorded source id where the
    forward map names it, else registered now (references pointed at where the target holds them)."""
    from kafka_migration.schema_sync.sync import register_or_refuse

    back: dict[int, SyncedVersion] = {}  # the cutover target's id -> the forward version that gave it
    placed: dict[Key, Key] = {}  # the failback source's (subject, version) -> the failback target's
    registered = 0
    for v in recorded:
        if v.target_id is not None:
            back.setdefault(v.target_id, v)
            if v.target_version is not None:
                placed.setdefault((v.target_subject, v.target_version), (v.source_subject, v.version))
    for p in ordered:
        key, schema = (p.source_subject, p.version), p.schema
        known = back.get(schema.schema_id)
        if known is not None:
            placed.setdefault(key, (known.source_subject, known.version))
            yield SyncedVersion(
                known.source_subject,
                p.version,
                p.source_subject,
                schema.format,
                schema.schema_id,
                known.source_id,
                VersionAction.PRESENT,
                known.version,
            )
            continue
        subject = renamed.get(p.source_subject, p.source_subject)
        references = tuple(
            SchemaReference(r.name, *placed.get((r.subject, r.version), (r.subject, r.version)))
            for r in schema.references
        )
        pointed = dataclasses.replace(schema, references=references)
        what = (
            f"Subject {subject!r} version {p.version} (the cutover target's {p.source_subject!r} version {p.version})"
        )
        target_id = register_or_refuse(
            target, subject, pointed, what, registered, "the source registry", "then fail back again"
        )
        registered += 1
        found = target.lookup(subject, pointed)
        if found is None:
            raise SchemaError(
                f"Subject {subject!r}: the registry gave id {target_id} to the schema of {p.source_subject!r} version "
                f"{p.version} but does not find it under the subject when asked back; check its state, then fail "
                "back again (registered versions are found present)."
            )
        placed[key] = (subject, found.version.version)
        yield SyncedVersion(
            subject,
            p.version,
            p.source_subject,
            schema.format,
            schema.schema_id,
            target_id,
            VersionAction.REGISTERED,
            found.version.version,
        )


def prove_back(
    versions: Iterable[SyncedVersion], source: RegistryClient, target: RegistryClient
) -> tuple[SyncedVersion, ...]:
    """Each id and the one it goes back to, read back by id from their registries, have one fingerprint: a
    recorded pair that no longer holds (a registry changed since) is refused before any record is copied."""
    from kafka_migration.schema_sync.sync import prove_pairs

    return prove_pairs(
        versions,
        (source, target),
        lambda v: f"Subject {v.target_subject!r} version {v.version} has no id to go back to.",
        lambda v, mine, theirs: (
            f"Subject {v.source_subject!r} version {v.version}: id {v.source_id} and id {v.target_id} it goes "
            f"back to (subject {v.target_subject!r}) do not name the same schema (canonical fingerprints "
            f"{mine} and {theirs}); nothing was copied back. Check whether either registry changed since the "
            "cutover."
        ),
    )
