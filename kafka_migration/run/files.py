"""Read a run's plan and results files, refusing missing, corrupt or replaced ones with the way out.

Airflow tasks of one DAG run hand work to each other through these files in the shared state
directory. A task that resumes (a retry, a cleared task) must not act on a file that is gone,
half-written, or not the plan the ledger recorded for the run.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_migration.exceptions import RunFileError
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import StepResults


def new_run_id(prefix: str = "cli") -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{prefix}-{stamp}-{uuid.uuid4().hex[:6]}"


def run_dir(state_dir: Path, run_id: str) -> Path:
    """Where a run's plan and results files live."""
    return Path(state_dir) / "runs" / run_id


REPLAN = (
    "Clear this DAG run's 'plan' task together with its downstream tasks: it plans again under the same run id, "
    "and the copy resumes from what the target already holds, without duplicates"
)


def read_plan(path: Path, run_id: str | None = None, recorded: dict[str, Any] | None = None) -> MigrationPlan:
    """The plan at ``path``; ``run_id`` and ``recorded`` (the plan the ledger stored) must match it when given."""
    path = Path(path)
    try:
        plan = MigrationPlan.from_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        raise RunFileError(
            f"The plan file {path} of run {run_id or '?'} is missing (removed, or the state directory is not shared "
            f"by every Airflow worker: set kafka_migration_state_dir to shared storage). Nothing was written by "
            f"this task. {REPLAN}."
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunFileError(
            f"The plan file {path} of run {run_id or '?'} is corrupt ({type(exc).__name__}: {exc}). Nothing was "
            f"written by this task. {REPLAN}."
        ) from None
    if run_id is not None and plan.run_id != run_id:
        raise RunFileError(
            f"The plan file {path} belongs to run {plan.run_id}, not to run {run_id}. Nothing was written by this "
            f"task. {REPLAN}."
        )
    if recorded is not None and MigrationPlan.from_dict(recorded).to_dict() != plan.to_dict():
        raise RunFileError(
            f"The plan file {path} differs from the plan the ledger recorded for run {plan.run_id} when it was "
            f"made: it was edited or replaced. Nothing was written by this task. {REPLAN}."
        )
    return plan


def read_results(path: Path, step: str, task: str) -> StepResults | None:
    """A step's results file; None when it does not exist (the step did not finish); corrupt ones are refused."""
    path = Path(path)
    try:
        return StepResults.read(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunFileError(
            f"The {step} results file {path} is corrupt ({type(exc).__name__}: {exc}); nothing was recorded from "
            f"it. Clear the {task} task of this DAG run to run the {step} again (a copy resumes from what the "
            "target holds, without duplicates)."
        ) from None


def missing_results(path: Path, step: str, task: str) -> RunFileError:
    return RunFileError(
        f"No {step} results at {path}: the {task} task failed before writing them (see its log), or the file was "
        "removed, or the state directory is not shared by every Airflow worker. Nothing was recorded for this "
        f"topic. Clear the {task} task of this DAG run (and what follows it) to run the {step} again."
    )
