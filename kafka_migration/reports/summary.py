"""Per-topic summary of a run, as a plain-text table for terminals and task logs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kafka_migration.model.plan import MigrationPlan, TopicPlan
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


TARGET_LOST = "target_lost"


def with_losses(status: str, plan: MigrationPlan) -> str:
    """A run that found verified records the target lost (and did not accept) is not verified, whatever it
    copied: ``target_lost`` (exit 1, like a difference)."""
    return TARGET_LOST if plan.unaccepted_losses and status in ("verified", "up_to_date") else status


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


def render_table(rows: Sequence[TopicSummary], *, every_topic: bool | None = None) -> str:
    """The run's table, a line per topic up to ``TABLE_TOPICS`` topics (or with ``every_topic``); above, the
    lines of the topics not verified (at most ``TABLE_TOPICS``) and the totals: every topic is in the run's
    report, and 10,000 verified lines would bury the few that matter."""
    if every_topic is None:
        every_topic = len(rows) <= TABLE_TOPICS
    shown = list(rows) if every_topic else [r for r in rows if r.verdict != VERIFIED][:TABLE_TOPICS]
    # The records verification compared in this run's range on each side: a later run checks what is new since the
    # last verified run, so a topic with nothing new shows 0 there (and the line below says why).
    header = ("source topic", "target topic", "parts", "copied", "src in range", "tgt in range", "verdict", "secs")
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
        for r in shown
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
    verified = sum(1 for r in rows if r.verdict == VERIFIED)
    out.append(f"{plural(len(rows), 'topic')}, {plural(total_copied, 'record')} copied, {verified:,} verified")
    if any(r.verdict == VERIFIED and r.source_records == 0 for r in shown):
        out.append(
            "in range: the records this run compared, from where the last verified run ended (0: nothing new on the "
            "source; what earlier runs verified stays verified)"
        )
    left_out = len(rows) - len(shown)
    if left_out:
        more = len(rows) - verified - len(shown)  # not verified, past the first TABLE_TOPICS of them
        which = (
            plural(left_out, "verified topic") if not more else f"{plural(left_out, 'topic')} ({more:,} not verified)"
        )
        out.append(f"{which} not listed here (a run of more than {TABLE_TOPICS} topics): its report lists every topic")
    if any(r.job_topics > 1 for r in shown):
        out.append("* shared a Spark job with other topics; secs is its own tasks' time (summed over its partitions)")
    for r in shown:
        if r.detail:
            out.append(f"  {r.source_topic}: {r.detail}")
    return "\n".join(out)


# Above this many topics the run's table lists only the topics not verified (render_table).
TABLE_TOPICS = 20


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


# Plans of more topics than this print a summary (counts, what is created, what is left out) instead of
# every topic: 5,000 topics would write some 30,000 lines. The details stay in the run's plan file.
PLAN_DETAILS_TOPICS = 20
# Kinds of skips, warnings and configs listed by name in a summary; the rest is counted.
_SUMMARY_KINDS = 8
_SUMMARY_NAMES = 3


def render_plan(
    plan: MigrationPlan,
    *,
    details: bool | None = None,
    plan_file: Path | str | None = None,
    details_option: str | None = None,
) -> str:
    """What a run prints before it starts: every topic, its target, configs, ranges and what is skipped
    (``details``, the default up to PLAN_DETAILS_TOPICS topics), or a summary of bounded length whatever
    the topic count, pointing at ``plan_file`` (where every topic's details are written) and at the
    ``details_option`` that prints them (``--show-plan`` for the CLI)."""
    if details is None:
        details = len(plan.topics) <= PLAN_DETAILS_TOPICS
    out = [
        f"Plan {plan.run_id}",
        f"  source {plan.source.cluster_id} at {plan.source.bootstrap} ({plural(plan.source.broker_count, 'broker')})",
        f"  target {plan.target.cluster_id} at {plan.target.bootstrap} ({plural(plan.target.broker_count, 'broker')})",
        f"  {plural(len(plan.topics), 'topic')} in {plural(len(plan.jobs), 'Spark job')}",
    ]
    out += _plan_details(plan) if details else _plan_summary(plan, plan_file, details_option)
    return "\n".join(out)


def _plan_details(plan: MigrationPlan) -> list[str]:
    out = []
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
        else:
            out.append("      configs: none set (the target's defaults give what is wanted)")
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
    return out


def _plan_summary(plan: MigrationPlan, plan_file: Path | str | None, details_option: str | None) -> list[str]:
    """Counts and grouped kinds, at most a few dozen lines for any number of topics."""
    topics = plan.topics
    partitions = [p for t in topics for p in t.partitions]
    created = [t for t in topics if t.create]
    existing = len(topics) - len(created)
    renamed = sum(1 for t in topics if t.source_topic != t.target_topic)
    idle = [t.source_topic for t in topics if not t.offset_span]
    out = [
        f"  {plural(len(partitions), 'partition')}, {plural(plan.offset_span, 'offset')} to copy"
        f" ({plural(sum(1 for p in partitions if p.offset_span), 'partition')} with records to copy)",
        f"  create {plural(len(created), 'topic')} on the target"
        + (f"; use {plural(existing, 'existing topic')} (with their own configs)" if existing else "")
        + (f"; {plural(renamed, 'topic')} renamed" if renamed else ""),
    ]
    if idle:
        out.append(f"  nothing new on {plural(len(idle), 'topic')}: {_some(idle)}")
    origins: dict[str, int] = {}
    for p in partitions:
        origins[p.origin] = origins.get(p.origin, 0) + 1
    out.append("  partitions start: " + ", ".join(f"{n:,} from {o}" for o, n in sorted(origins.items())))
    expired = [(t.source_topic, p.expired) for t in topics for p in t.partitions if p.expired]
    if expired:
        out.append(
            f"  {plural(sum(n for _, n in expired), 'offset')} expired before copying, in "
            f"{plural(len(expired), 'partition')} of {_some(sorted({t for t, _ in expired}))}"
        )
    out.extend(_created_configs(created))
    refused: dict[str, list[str]] = {}
    for t in created:
        for name, reason in t.skipped_configs.items():
            refused.setdefault(f"not copied: {name} ({reason})", []).append(t.source_topic)
    warned: dict[str, list[str]] = {}
    for t in topics:
        for warning in t.warnings:
            warned.setdefault(f"warning: {warning}", []).append(t.source_topic)
    skipped: dict[str, list[str]] = {}
    for name, reason in plan.skipped_topics.items():
        skipped.setdefault(f"skipped: {reason}", []).append(name)
    for kinds in (refused, warned, skipped):
        out += _grouped(kinds)
    out += [f"  warning: {w}" for w in plan.warnings[:_SUMMARY_KINDS]]
    if len(plan.warnings) > _SUMMARY_KINDS:
        out.append(f"  and {plural(len(plan.warnings) - _SUMMARY_KINDS, 'other warning')}")
    where = f" in the plan file {plan_file}" if plan_file else " in the run's plan file (plan.json)"
    option = f"; {details_option} prints them here" if details_option else ""
    out.append(f"  Every topic's configs, ranges and warnings are{where}{option}.")
    return out


def _some(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_SUMMARY_NAMES])
    return shown + (f" and {len(names) - _SUMMARY_NAMES:,} more" if len(names) > _SUMMARY_NAMES else "")


def _created_configs(created: Sequence[TopicPlan]) -> list[str]:
    """Which configs the created topics get, and which they leave at the target's defaults, counted."""
    copied: dict[str, int] = {}
    defaulted: dict[str, int] = {}
    for t in created:
        for name in t.configs:
            copied[name] = copied.get(name, 0) + 1
        for name in t.config_decisions:
            if name not in t.configs and name not in t.skipped_configs:
                defaulted[name] = defaulted.get(name, 0) + 1
    out = ["  configs set on created topics: " + _counted(copied, "topic")] if copied else []
    if defaulted:
        out.append("  left at the target's defaults (which give what is wanted): " + _counted(defaulted, "topic"))
    return out


def _counted(counts: Mapping[str, int], noun: str) -> str:
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{name} ({plural(n, noun)})" for name, n in ordered[:_SUMMARY_KINDS])
    return text + (f" and {len(ordered) - _SUMMARY_KINDS:,} more" if len(ordered) > _SUMMARY_KINDS else "")


def _grouped(kinds: Mapping[str, list[str]]) -> list[str]:
    """One line per kind (most frequent first): its text, how many topics, a few of them."""
    ordered = sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    out = [f"  {kind}: {plural(len(names), 'topic')} ({_some(names)})" for kind, names in ordered[:_SUMMARY_KINDS]]
    if len(ordered) > _SUMMARY_KINDS:
        rest = sum(len(names) for _, names in ordered[_SUMMARY_KINDS:])
        out.append(f"  and {plural(len(ordered) - _SUMMARY_KINDS, 'other kind')} on {plural(rest, 'topic')}")
    return out


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
