"""Scenario 10's figures: medians over the repetitions, the runner's table rows and notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.bench.common import fmt, median

NAME = "access"
STEPS = ("dry_run", "sync", "again")
LABELS = {
    "dry_run": "access sync --dry-run (plan, decide)",
    "sync": "access sync (apply, log in, prove)",
    "again": "access sync again (nothing to do)",
}


def _figures(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "median_seconds": median([s["seconds"] for s in samples]),
        "max_seconds": max(s["seconds"] for s in samples),
        "median_cpu_seconds": median([s["cpu_seconds"] for s in samples]),
        "median_peak_rss_mib": median([s["peak_rss_mib"] for s in samples]),
        "median_load1_at_start": median([s["load1_at_start"] for s in samples]),
        "verdicts": sorted({str(s["verdict"]) for s in samples}),
        "runs": len(samples),
        "samples": list(samples),
    }


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    samples = raw.get("samples") or {}
    if not samples.get("sync"):
        return {}
    steps = {step: _figures(samples[step]) for step in STEPS if samples.get(step)}
    sync = samples["sync"]
    return {
        NAME: {
            **raw["seeded"],
            "steps": steps,
            "sync_seconds": steps["sync"]["max_seconds"],  # the slowest repetition: the target is "every one"
            "all_proven": all(s["verdict"] == "proven" for s in sync),
            "logins_proven": min(s["logins_proven"] for s in sync),
            "actions_checked": sync[-1]["totals"].get("actions_checked"),
            "cluster_start_seconds": raw["cluster_start_seconds"],
            "seed_seconds": raw["seed_seconds"],
            "median_cleanup_seconds": median(raw.get("cleanup_seconds", [])),
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    pad = f"{'':<28}"
    lines = []
    for step, figures in s["steps"].items():
        head = f"10 access {s['bindings']:,} / {s['users']:,}" if not lines else ""
        lines.append(
            f"{head:<28} {LABELS[step]:<40} median {fmt(figures['median_seconds'], 2)} s, slowest "
            f"{fmt(figures['max_seconds'], 2)} s, CPU {fmt(figures['median_cpu_seconds'])} s, peak RSS "
            f"{fmt(figures['median_peak_rss_mib'], 0)} MiB, verdict {'/'.join(figures['verdicts'])}"
        )
    lines.append(
        f"{pad} every sync proven: {s['all_proven']}; users logged in to the target: {s['logins_proven']:,} of "
        f"{s['users']:,}; actions decided on both clusters: {s['actions_checked']}; target < 60 s for the slowest "
        f"sync: {fmt(s['sync_seconds'], 2)} s"
    )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    return [
        "",
        f"Scenario 10: an ACL-enforcing SASL_SSL source (StandardAuthorizer) holding {s['bindings']:,} bindings "
        f"(10 per service: topics, a DENY, groups, transactional ids, the cluster) and {s['users']:,} SCRAM-SHA-512 "
        f"users, seeded in {fmt(s['seed_seconds'])} s; per repetition the target is emptied of bindings and users "
        f"first (median {fmt(s['median_cleanup_seconds'])} s, not timed), then `kafka-migrate access sync` runs as "
        "a dry run, for real (every binding written, every user created from the operator's passwords and logged "
        "in to the target, the decisions computed on both clusters) and again (nothing left to do), each launch to "
        "exit.",
    ]
