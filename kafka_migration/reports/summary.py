"""Per-topic summary of a run, as a plain-text table for terminals and task logs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import OK, UNVERIFIED, StepResults, TopicOutcome
from kafka_migration.model.text import offset_range, plural
from kafka_migration.model.timings import RunTimings, run_timings, task_intervals

VERIFIED = "verified"
COULD_NOT_VERIFY = "could not verify"


@dataclass(frozen=True)
class TopicSummary:
    source_topic: str
    target_topic: str
    partitions: int
    planned_offsets: int
    copied: int | None
    source_records: int | None
    target_records: int | None
    verdict: str
    detail: str | None
    seconds: float  # the topic's own task seconds (copy + verify), also when it shared a Spark job
    job_topics: int = 1  # topics in its Spark job (1: its own job)


def topic_verdict(copy: TopicOutcome | None, verify: TopicOutcome | None) -> tuple[str, str | None]:
    if copy is not None and copy.status != OK:
        return f"copy {copy.status}", copy.error
    if verify is None:
        return "not verified", None
    if verify.status == UNVERIFIED:
        return COULD_NOT_VERIFY, verify.error
    if verify.status != OK:
        return f"verify {verify.status}", verify.error
    return VERIFIED, None


def summarize(
    plan: MigrationPlan, copy: Mapping[str, TopicOutcome], verify: Mapping[str, TopicOutcome]
) -> list[TopicSummary]:
    rows = []
    for topic in plan.topics:
        c = copy.get(topic.source_topic)
        v = verify.get(topic.source_topic)
        verdict, detail = topic_verdict(c, v)
        rows.append(
            TopicSummary(
                source_topic=topic.source_topic,
                target_topic=topic.target_topic,
                partitions=len(topic.partitions),
                planned_offsets=topic.offset_span,
                copied=c.records if c is not None and c.status == OK else None,
                source_records=sum(p["source_records"] for p in v.partitions) if v and v.partitions else None,
                target_records=sum(p["target_records"] for p in v.partitions) if v and v.partitions else None,
                verdict=verdict,
                detail=detail,
                seconds=round(own_seconds(c) + own_seconds(v), 1),
                job_topics=max(c.job_topics if c else 1, v.job_topics if v else 1),
            )
        )
    return rows


def own_seconds(outcome: TopicOutcome | None) -> float:
    """A topic's own time in a step: its partitions' task seconds, not the time of a Spark job it may have
    shared with other topics (results without per-partition seconds: the step's time for the topic)."""
    if outcome is None or not outcome.partitions:
        return 0.0  # no task ran for it (e.g. only empty partitions to copy)
    if any("seconds" in p for p in outcome.partitions):
        return outcome.task_seconds
    return outcome.seconds


def all_verified(rows: Sequence[TopicSummary]) -> bool:
    return bool(rows) and all(r.verdict == VERIFIED for r in rows)


def run_status(rows: Sequence[TopicSummary]) -> str:
    """verified, failed (a copy did not complete), mismatch, or unverified (a cluster could not be read)."""
    if all_verified(rows):
        return "verified"
    if any(r.verdict.startswith("copy") or r.verdict == "not verified" for r in rows):
        return "failed"
    if any(r.verdict not in (VERIFIED, COULD_NOT_VERIFY) for r in rows):
        return "mismatch"
    return UNVERIFIED


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def render_table(rows: Sequence[TopicSummary]) -> str:
    header = ("source topic", "target topic", "parts", "copied", "source recs", "target recs", "verdict", "secs")
    body = [
        (
            r.source_topic,
            r.target_topic,
            str(r.partitions),
            _num(r.copied),
            _num(r.source_records),
            _num(r.target_records),
            r.verdict,
            f"{r.seconds:.1f}" + ("*" if r.job_topics > 1 else ""),
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(row[i]) for row in body)) if body else len(h) for i, h in enumerate(header)]
    right = {2, 3, 4, 5, 7}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(row) for row in body]
    total_copied = sum(r.copied or 0 for r in rows)
    out.append(
        f"{plural(len(rows), 'topic')}, {plural(total_copied, 'record')} copied, "
        f"{sum(1 for r in rows if r.verdict == VERIFIED):,} verified"
    )
    if any(r.job_topics > 1 for r in rows):
        out.append("* shared a Spark job with other topics; secs is its own tasks' time (summed over its partitions)")
    for r in rows:
        if r.detail:
            out.append(f"  {r.source_topic}: {r.detail}")
    return "\n".join(out)


def unaccounted(timings: RunTimings) -> float:
    """Wall time in none of the parts: waits between steps (a second Spark start-up, a scheduler)."""
    busy = timings.plan + timings.startup + timings.copy + timings.verify - timings.overlap + timings.bookkeeping
    return max(0.0, timings.wall - busy)


def timing_parts(timings: RunTimings) -> list[tuple[str, float, str]]:
    """(part, seconds, note) of a run's wall time, in the order they happen; "other" only when there is some."""
    other = unaccounted(timings)
    extra = [("other", other, "in none of the parts: waits between steps, a later Spark start-up")]
    return [
        ("plan", timings.plan, "discovery, offsets, target checks, leases, topics"),
        ("Spark start-up", timings.startup, "start-up the run waited for"),
        ("copy", timings.copy, "first copy task start to last copy task end"),
        (
            "verification",
            timings.verify,
            f"{timings.overlap:.1f} s of it during the copy" if timings.overlap > 0 else "after the copy",
        ),
        ("bookkeeping", timings.bookkeeping, "ledger and report after the last task"),
    ] + (extra if other >= 0.05 else [])


def timings_line(timings: RunTimings | None) -> str:
    """One line for terminals and task logs: 'Wall 11.2 s: plan 0.8, Spark start-up 0.4, copy 5.1, ...'."""
    if timings is None:
        return "Wall time: - (not measured)"
    parts = []
    for name, seconds, _note in timing_parts(timings):
        text = f"{name} {seconds:.1f}"
        if name == "verification" and timings.overlap > 0:
            text += f" ({timings.overlap:.1f} of it during the copy)"
        parts.append(text)
    return f"Wall {timings.wall:.1f} s: " + ", ".join(parts)


def render_plan(plan: MigrationPlan) -> str:
    """What a dry run prints: every topic, its target, configs, ranges, and what is skipped."""
    out = [
        f"Plan {plan.run_id}",
        f"  source {plan.source.cluster_id} at {plan.source.bootstrap} ({plural(plan.source.broker_count, 'broker')})",
        f"  target {plan.target.cluster_id} at {plan.target.bootstrap} ({plural(plan.target.broker_count, 'broker')})",
        f"  {plural(len(plan.topics), 'topic')} in {plural(len(plan.jobs), 'Spark job')}",
    ]
    for topic in plan.topics:
        action = "create" if topic.create else "use existing"
        out.append(
            f"  {topic.source_topic} -> {topic.target_topic} ({action}, {plural(len(topic.partitions), 'partition')}, "
            f"replication factor {topic.replication_factor}, {plural(topic.offset_span, 'offset')} to copy)"
        )
        if not topic.create:
            out.append("      configs: the existing target topic's own (a run does not change them)")
        elif topic.configs:
            out.append("      configs: " + ", ".join(f"{k}={v}" for k, v in topic.configs.items()))
        decided: dict[str, list[str]] = {}
        for name, how in topic.config_decisions.items():
            if name not in topic.skipped_configs:
                decided.setdefault(how, []).append(name)
        for how, names in decided.items():
            out.append(f"        {', '.join(names)}: {how}")
        for name, reason in topic.skipped_configs.items():
            out.append(f"      not copied: {name} ({reason})")
        for p in topic.partitions:
            what = f"offsets {offset_range(p.start, p.end)}" if p.offset_span else f"nothing new at offset {p.start}"
            out.append(
                f"      partition {p.partition}: {what}, from {p.origin} -> target offset {p.target_start}"
                + (f"; {plural(p.expired, 'offset')} expired before copying" if p.expired else "")
            )
        for warning in topic.warnings:
            out.append(f"      warning: {warning}")
    for topic, reason in plan.skipped_topics.items():
        out.append(f"  skipped {topic}: {reason}")
    for warning in plan.warnings:
        out.append(f"  warning: {warning}")
    return "\n".join(out)


def results_timings(
    started: float,
    planned: float | None,
    copy: list[StepResults],
    verify: list[StepResults],
    finished: float,
) -> RunTimings:
    """A run's parts from its start, end of planning, the steps' results files and its end (timings.run_timings).

    For the DAG's summary, and for the CLI when the pipeline did not measure. Stamps that older results
    lack count as unknown (no start-up; each job's start and length instead of task intervals), not as errors.
    """
    readies = [r.ready for r in copy + verify if getattr(r, "ready", None) is not None]
    if not readies:  # a step starts once its Spark application is up (to the second)
        readies = [start for start, _ in _job_spans(copy)]
    return run_timings(
        started=started,
        planned=planned if planned is not None else started,
        spark_ready=min(readies) if readies else None,
        copy_tasks=_step_intervals(copy),
        verify_tasks=_step_intervals(verify),
        finished=finished,
    )


def _step_intervals(results: list[StepResults]) -> list[tuple[float, float]]:
    """The step's task intervals; for results whose rows carry no stamps, each job's own start and length."""
    found = task_intervals(p for r in results for t in r.topics.values() for p in t.partitions)
    return found or _job_spans(results)


def _job_spans(results: list[StepResults]) -> list[tuple[float, float]]:
    out = []
    for r in results:
        try:
            start = datetime.fromisoformat(r.started_at).timestamp()
        except (TypeError, ValueError):
            continue
        out.append((start, start + float(r.seconds or 0.0)))
    return out
