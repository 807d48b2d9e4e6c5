"""Each subject's compatibility level on both registries, for the run's listing, plan and report.

A version the source registry took may be refused by the target's when the target subject is stricter (its own
level, or the registry's global one when the subject has none, which is also what a subject registered by the run
gets). Read after planning, before anything is registered; a registry that does not serve its config leaves the
level unknown rather than failing the run.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_migration.exceptions import RegistryNotFoundError, RegistryRequestError
from kafka_migration.model.schema_runs import SubjectCompatibility
from kafka_migration.registry import RegistryClient


def read_compatibility(
    source: RegistryClient,
    target: RegistryClient,
    subjects: Iterable[tuple[str, str]],
    global_levels: tuple[str | None, str | None] | None = None,
) -> tuple[SubjectCompatibility, ...]:
    """``subjects``: (source subject, target subject), each once, in the listing's order. ``global_levels``: the two
    registries' global levels (``global_compatibility``) when read already."""
    mine_level, theirs_level = global_levels or (global_compatibility(source), global_compatibility(target))
    out = []
    for source_subject, target_subject in dict.fromkeys(subjects):
        mine, mine_global = _level(source, source_subject, mine_level)
        theirs, theirs_global = _level(target, target_subject, theirs_level)
        out.append(SubjectCompatibility(target_subject, source_subject, mine, theirs, mine_global, theirs_global))
    return tuple(out)


def global_compatibility(door: RegistryClient) -> str | None:
    """The registry's global compatibility level; None where it does not say (404) or refuses the request."""
    try:
        return door.compatibility()
    except (RegistryNotFoundError, RegistryRequestError):
        return None


def _level(door: RegistryClient, subject: str, global_level: str | None) -> tuple[str | None, bool]:
    """The subject's own level, else (404: none set, or no such subject yet) the global one."""
    try:
        return door.compatibility(subject), False
    except RegistryNotFoundError:
        return global_level, global_level is not None
    except RegistryRequestError:
        return None, False
