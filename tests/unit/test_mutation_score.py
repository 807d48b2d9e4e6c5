"""tests/mutation/score.py, make mutate's verdict: the score per module, the survivors, and the equivalent list
(entries that match, that are stale, that belong to a module left out), on hand-made results; no mutmut run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mutation.score import (
    EQUIVALENT,
    Mutant,
    added_lines,
    judge,
    mutated_modules,
    parse_equivalent,
    read_results,
    render,
)

LOSSES = "kafka_migration/run/losses.py"
DIFF = "--- a\n+++ a\n@@ -1 +1 @@\n-    x = get(p, 0)\n+    x = get(p, 1)"


def mutant(n: int, status: str, module: str = LOSSES) -> Mutant:
    return Mutant(f"kafka_migration.run.losses.x_f__mutmut_{n}", module, status)


ENTRY = """
# a comment
kafka_migration.run.losses.x_f__mutmut_2
    + x = get(p, 1)
    why: p is always there,
    so the default is never used.
"""


def test_an_entry_is_a_name_its_lines_and_a_reason_over_several_lines() -> None:
    (entry,) = parse_equivalent(ENTRY)
    assert entry.name == "kafka_migration.run.losses.x_f__mutmut_2"
    assert entry.lines == ("x = get(p, 1)",)
    assert entry.why == "p is always there, so the default is never used."
    assert added_lines(DIFF) == ("x = get(p, 1)",)


@pytest.mark.parametrize(
    "text",
    ["name_only\n", "a.b\n    + x\n", "a.b\n    why: no line\n", "a.b\n    why: r\n    + x after the reason\n"],
)
def test_an_entry_without_its_lines_or_its_reason_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="needs its '\\+ line' lines, then 'why: reason'"):
        parse_equivalent(text)


def test_survivors_not_listed_fail_and_listed_ones_count_as_equivalent() -> None:
    mutants = [mutant(1, "killed"), mutant(2, "survived"), mutant(3, "no unit test"), mutant(4, "not checked")]
    scores, unlisted, stale = judge(mutants, parse_equivalent(ENTRY), {mutants[1].name: DIFF, mutants[2].name: DIFF})
    (score,) = scores
    assert (score.mutants, score.killed, score.equivalent, score.survivors) == (3, 1, 1, 1)
    assert score.score == 50.0  # killed / (mutants - equivalent)
    assert unlisted == [mutants[2]] and stale == []
    text = render(scores, unlisted, stale, {mutants[2].name: DIFF})
    assert "kafka_migration.run.losses.x_f__mutmut_3 (no unit test)" in text
    assert "+    x = get(p, 1)" in text


def test_an_entry_whose_mutant_changed_or_died_or_vanished_is_stale() -> None:
    entries = parse_equivalent(ENTRY)
    other = "--- a\n+++ a\n-    x = get(p, 0)\n+    x = get(p, 2)"
    _, unlisted, stale = judge([mutant(2, "survived")], entries, {mutant(2, "survived").name: other})
    assert stale == ["kafka_migration.run.losses.x_f__mutmut_2: its mutant now writes other lines"]
    assert unlisted == [mutant(2, "survived")]
    _, _, stale = judge([mutant(2, "killed")], entries, {})
    assert stale == ["kafka_migration.run.losses.x_f__mutmut_2: killed now (remove the entry)"]
    _, _, stale = judge([mutant(1, "killed")], entries, {})
    assert stale == ["kafka_migration.run.losses.x_f__mutmut_2: no such mutant"]
    _, _, stale = judge([mutant(1, "killed", "kafka_migration/run/verify.py")], entries, {})
    assert stale == []  # its module was left out of this run (--only): not judged


def test_results_are_read_from_mutmuts_meta_files(tmp_path: Path) -> None:
    meta = tmp_path / f"{LOSSES}.meta"
    meta.parent.mkdir(parents=True)
    codes = {"kafka_migration.run.losses.x_f__mutmut_1": 1, "kafka_migration.run.losses.x_f__mutmut_2": 0}
    meta.write_text(json.dumps({"exit_code_by_key": {**codes, "kafka_migration.run.losses.x_f__mutmut_3": 36}}))
    assert [m.status for m in read_results(tmp_path, [LOSSES, "kafka_migration/run/verify.py"])] == [
        "killed",
        "survived",
        "killed",  # a timeout: the mutant made its tests hang
    ]


def test_the_repositorys_list_parses_and_names_only_modules_that_are_mutated() -> None:
    modules = {m.removesuffix(".py").replace("/", ".") for m in mutated_modules(Path("pyproject.toml"))}
    for entry in parse_equivalent(EQUIVALENT.read_text(encoding="utf-8")):
        assert any(entry.name.startswith(f"{module}.") for module in modules), entry.name
