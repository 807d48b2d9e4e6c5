"""Scenario 7's figures: medians over the repetitions, the table the runner prints, and the Markdown
table of docs/benchmarks.md from one or two results files (``python -m harness.bench.mirrormaker.report
RUN1.json [RUN2.json]``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.bench.common import fmt, median, ratio, table_row
from harness.bench.mirrormaker import positions as gp
from harness.bench.mirrormaker.tools import GROUPS_WAIT_SECONDS, HEAP_MB, PARTITIONS, SETTLE_SECONDS, TOOLS
from harness.bench.whole.report import median_parts

NAME = "mm2"


def signed(result: Mapping[str, Any]) -> int | None:
    """A position's outcome as one number: < 0 re-read, > 0 skipped; None without an offset."""
    if result.get("target_offset") is None:
        return None
    return int(result["skips"]) - int(result["rereads"])


def position_cell(results: Sequence[Mapping[str, Any]]) -> str:
    """The table cell of one position and tool over the repetitions: the median outcome, its range when the
    repetitions differ, and the target offset (of the median repetition)."""
    if not results:
        return "-"
    values = [signed(r) for r in results]
    missing = sum(v is None for v in values)
    present = sorted((v, i) for i, v in enumerate(values) if v is not None)
    if not present:
        return gp.describe(results[0])
    _, mid_index = present[(len(present) - 1) // 2]
    text = f"{gp.describe(results[mid_index])} @{results[mid_index]['target_offset']:,}"
    low, high = present[0][0], present[-1][0]
    if low != high:
        text += f" [{_short(low)}..{_short(high)}]"
    if missing:
        text += f", no offset in {missing}/{len(values)}"
    return text


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def _short(value: int) -> str:
    return "0" if value == 0 else (f"-{-value:,}" if value < 0 else f"+{value:,}")


def _tool_summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "median_seconds": median([s["seconds"] for s in samples]),
        "median_cpu_seconds": median([s["cpu_seconds"] for s in samples]),
        "median_peak_rss_mib": median([s["peak_rss_mib"] for s in samples]),
        "samples": samples,
    }


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    move = raw.get("move") or {}
    if not move.get("ours"):
        return {}
    tools = {tool: _tool_summary(move[tool]) for tool in TOOLS}
    groups: dict[str, Any] = {}
    not_exact = 0
    for position in raw["positions"]:
        name = position["name"]
        entry: dict[str, Any] = {**position, "group": gp.GROUP_PREFIX + name}
        for tool in TOOLS:
            results = [s["positions"][name] for s in raw["groups"][tool]]
            values = [v for v in (signed(r) for r in results) if v is not None]
            entry[tool] = {
                "results": results,
                "median_signed": median(values) if values else None,
                "missing": len(results) - len(values),
                "cell": position_cell(results),
            }
            if tool == "ours":
                not_exact += sum(signed(r) != 0 for r in results)
        groups[name] = entry
    mm2_groups = raw["groups"]["mirrormaker"]
    return {
        NAME: {
            "records": sum(raw["bulk_ends"].values()),
            "partitions": PARTITIONS,
            "mirrormaker": {
                **tools["mirrormaker"],
                "median_first_commit_seconds": median(
                    [s["first_commit_seconds"] for s in move["mirrormaker"] if "first_commit_seconds" in s]
                ),
                "median_markers_on_target": median([s["markers_on_target"] for s in move["mirrormaker"]]),
                "counts_equal": all(s["counts_equal"] for s in move["mirrormaker"]) if move["mirrormaker"] else None,
                "median_groups_last_change_seconds": median([s["groups_last_change_seconds"] for s in mm2_groups]),
            },
            "ours": {
                **tools["ours"],
                "median_parts": median_parts(move["ours"]),
                "median_groups_run_and_sync_seconds": median(
                    [s["seconds"] + s["groups_sync_seconds"] for s in raw["groups"]["ours"]]
                ),
            },
            "ratio": ratio(tools["mirrormaker"]["median_seconds"], tools["ours"]["median_seconds"]),
            "mirrormaker_failures": raw.get("failures", []),
            "ours_not_exact": not_exact,
            "groups": groups,
            "mirrormaker_properties": raw["mirrormaker_properties"],
            "mirrormaker_heap_mb": HEAP_MB,
            "settle_seconds": SETTLE_SECONDS,
            "groups_wait_seconds": GROUPS_WAIT_SECONDS,
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    m, o = s["mirrormaker"], s["ours"]
    n = s["records"]
    lines = [
        table_row(f"7 vs MirrorMaker 2 {n:,}", "MirrorMaker 2 caught up", n, m["median_seconds"], m["median_seconds"]),
        table_row("", "kafka-migrate run verified", n, o["median_seconds"], o["median_seconds"]),
        f"{'':<28} MM2 s / ours s: {fmt(s['ratio'], 2)}x (target >= 1.0); CPU s MM2 {fmt(m['median_cpu_seconds'])}, "
        f"ours {fmt(o['median_cpu_seconds'])}; peak RSS MM2 {fmt(m['median_peak_rss_mib'], 0)} MiB, ours "
        f"{fmt(o['median_peak_rss_mib'], 0)} MiB",
        f"{'':<28} MM2's start-up (launch to its first commit) {fmt(m['median_first_commit_seconds'])} s; ours "
        + ", ".join(f"{k} {v:.1f}" for k, v in o["median_parts"].items() if k != "wall")
        + " s (its own timings)",
        f"{'':<28} MM2's target: counts equal to the source {_yes(m['counts_equal'])}, "
        f"{fmt(m['median_markers_on_target'], 0)} commit markers (exactly-once) in the target partitions",
        *(
            f"{'':<28} MM2 FAILED ({f['phase']}, repetition {f['repetition']}; left out): {f['error'][:200]}"
            for f in s["mirrormaker_failures"]
        ),
        "",
        f"{'7 group position':<32} {'source offset':>26}  {'kafka-migrate':<26} MirrorMaker 2",
    ]
    for entry in s["groups"].values():
        where = f"{entry['topic']}[{entry['partition']}]@{entry['offset']:,}"
        lines.append(f"{entry['what']:<32} {where:>26}  {entry['ours']['cell']:<26} {entry['mirrormaker']['cell']}")
    lines.append(
        f"{'':<38} groups on the target after (median s): MM2 {fmt(m['median_groups_last_change_seconds'])} from its "
        f"launch (last change); ours {fmt(o['median_groups_run_and_sync_seconds'])} (run + groups sync)"
    )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    return [
        "",
        "Scenario 7: MirrorMaker 2 (dedicated mode, same jars, exactly-once on, "
        f"{s['mirrormaker_properties'].get('tasks.max')} tasks, -Xmx{s['mirrormaker_heap_mb']}m) from its launch until "
        "its offsets topic shows every partition's last record committed, vs the whole verified kafka-migrate run, "
        "launch to exit; fresh target per run. Group cells: what a consumer switched to the target meets, from the "
        "offset each tool committed there (@offset): exact, re-reads N or skips N records; [low..high] the range "
        f"over repetitions (- re-read, + skipped). MM2 waited until the groups' target offsets were unchanged for "
        f"{s['settle_seconds']} s (at most {s['groups_wait_seconds']} s after catching up).",
    ]


# --- docs/benchmarks.md ---------------------------------------------------------------------------


def _cells(values: Sequence[str]) -> str:
    return " / ".join(values)


def markdown(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Scenario 7's two tables of docs/benchmarks.md from one or more results.json files ("run 1 / run 2")."""
    runs = [r[NAME] for r in results if NAME in r]
    if not runs:
        return []
    m = [r["mirrormaker"] for r in runs]
    o = [r["ours"] for r in runs]

    def both(key: str, digits: int, unit: str) -> tuple[str, str]:
        return (
            _cells([fmt(x[key], digits) for x in m]) + unit,
            _cells([fmt(x[key], digits) for x in o]) + unit,
        )

    seconds, cpu, rss = (
        both("median_seconds", 2, " s"),
        both("median_cpu_seconds", 1, " s"),
        both("median_peak_rss_mib", 0, " MiB"),
    )
    startup = _cells([fmt(x.get("median_first_commit_seconds", float("nan")), 1) for x in m]) + " s"
    spark = _cells([fmt((x.get("median_parts") or {}).get("startup", float("nan")), 1) for x in o]) + " s"
    cpu_ratio = _cells(
        [fmt(ratio(a["median_cpu_seconds"], b["median_cpu_seconds"]), 2) + "×" for a, b in zip(m, o, strict=True)]
    )
    lines = [
        "| what | MirrorMaker 2 | kafka-migrate | MM2 / ours | target |",
        "|---|---|---|---|---|",
        f"| moving {runs[0]['records']:,} × 200 B, {runs[0]['partitions']} partitions: MM2 launch → caught up; "
        f"ours launch → verified exit | {seconds[0]} | {seconds[1]} | "
        f"{_cells([fmt(r['ratio'], 2) + '×' for r in runs])} | ≥ 1.0× |",
        f"| CPU seconds of the process tree (MM2: until caught up) | {cpu[0]} | {cpu[1]} | {cpu_ratio} | – |",
        f"| peak RSS of the process tree | {rss[0]} | {rss[1]} | – | – |",
        f"| start-up: MM2 launch → its first commit; ours: Spark start-up not hidden by planning | {startup} | "
        f"{spark} | – | – |",
        "",
        "| group committed on the source | source offset | kafka-migrate | MirrorMaker 2 |",
        "|---|---|---|---|",
    ]
    for name, entry in runs[0]["groups"].items():
        where = f"`{entry['topic']}[{entry['partition']}]` @{entry['offset']:,}"
        ours = _cells([r["groups"][name]["ours"]["cell"] for r in runs])
        theirs = _cells([r["groups"][name]["mirrormaker"]["cell"] for r in runs])
        lines.append(f"| {entry['what']} | {where} | {ours} | {theirs} |")
    failures = [f for r in runs for f in r.get("mirrormaker_failures", [])]
    if failures:
        lines += ["", f"MirrorMaker 2 failed in {len(failures)} run(s), left out of the medians:"]
        lines += [f"- {f['phase']}, repetition {f['repetition']}: {f['error']}" for f in failures]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    import json
    import sys
    from pathlib import Path

    paths = list(argv if argv is not None else sys.argv[1:]) or [".bench/results.json"]
    print("\n".join(markdown([json.loads(Path(p).read_text()) for p in paths])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
