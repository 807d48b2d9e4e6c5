"""``make mutate``'s verdict on mutmut's results: the score per module, each survivor, and the gate.

mutmut (3.8.1, pinned) leaves one ``mutants/<module>.meta`` JSON file per mutated module with an exit code per
mutant. A mutant the unit tests did not kill is a survivor: it ran its tests and they passed ("survived"), or no
unit test reached the function ("no unit test"), or the run of its tests crashed or hung in a way mutmut could not
classify ("suspicious", "segfault"). A survivor that ``tests/mutation/equivalent.txt`` lists, with the line mutmut
wrote and a reason, is equivalent (no test can tell it from the original); any other fails the gate, and so does an
entry whose mutant no longer exists or no longer writes that line (the code moved on: look at it again).

The score is killed / (mutants - equivalent), per module and in all.

    python -m tests.mutation.score [--only GLOB]   # from the repository's root, after mutmut run
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

EQUIVALENT = Path(__file__).with_name("equivalent.txt")
KILLED = "killed"
# mutmut's exit codes (mutmut/stats.py status_by_exit_code), in the words of this report.
STATUS = {
    1: KILLED,
    3: KILLED,  # pytest's internal error: a kill
    36: KILLED,  # timeout: the mutant made the tests hang
    24: KILLED,
    -24: KILLED,
    152: KILLED,
    255: KILLED,
    37: KILLED,  # caught by the type checker
    0: "survived",
    5: "no unit test",
    33: "no unit test",
    34: "skipped",
    None: "not checked",
    2: "interrupted",
    -11: "segfault",
    -9: "segfault",
}
NOT_COUNTED = ("skipped", "not checked", "interrupted")  # not a verdict on the tests


@dataclass(frozen=True)
class Mutant:
    name: str  # as ``mutmut show NAME`` takes it
    module: str  # the mutated file, e.g. kafka_migration/run/losses.py
    status: str


@dataclass(frozen=True)
class Equivalent:
    name: str
    lines: tuple[str, ...]  # the lines mutmut wrote (the diff's "+" lines), stripped
    why: str


@dataclass(frozen=True)
class ModuleScore:
    module: str
    mutants: int
    killed: int
    equivalent: int
    survivors: int

    @property
    def score(self) -> float:
        judged = self.mutants - self.equivalent
        return 100.0 * self.killed / judged if judged else 100.0


def status(exit_code: int | None) -> str:
    return STATUS.get(exit_code, "suspicious")


def mutated_modules(pyproject: Path) -> list[str]:
    """The files ``[tool.mutmut] only_mutate`` names: the modules whose verdicts users sign."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["mutmut"]
    return list(config["only_mutate"])


def read_results(mutants_dir: Path, modules: Iterable[str]) -> list[Mutant]:
    found = []
    for module in modules:
        meta = mutants_dir / f"{module}.meta"
        if not meta.exists():
            continue
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        found += [Mutant(name, module, status(code)) for name, code in sorted(codes.items())]
    return found


def parse_equivalent(text: str) -> list[Equivalent]:
    """Entries separated by blank lines: the mutant's name, its ``+ line`` lines, then ``why: reason`` (which may go
    on over the following lines)."""
    entries = []
    block: list[str] = []
    for raw in [*text.splitlines(), ""]:
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line:
            block.append(line)
            continue
        if not block:
            continue
        name, rest = block[0], block[1:]
        reason = next((i for i, item in enumerate(rest) if item.startswith("why:")), len(rest))
        lines = tuple(item[1:].strip() for item in rest[:reason] if item.startswith("+"))
        why = " ".join(rest[reason:]).removeprefix("why:").strip()
        if not lines or not why or len(lines) != reason or " " in name:
            raise ValueError(f"{EQUIVALENT.name}: the entry of {name} needs its '+ line' lines, then 'why: reason'")
        entries.append(Equivalent(name, lines, why))
        block = []
    return entries


def added_lines(diff: str) -> tuple[str, ...]:
    return tuple(line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def judge(
    mutants: Sequence[Mutant], equivalent: Sequence[Equivalent], diffs: Mapping[str, str]
) -> tuple[list[ModuleScore], list[Mutant], list[str]]:
    """(scores per module, survivors not listed, stale entries). ``diffs``: the diff of each survivor. An entry of
    a module this report leaves out (``--only``) is not judged."""
    present = {m.name: m for m in mutants}
    judged = {dotted(m.module) for m in mutants}
    accepted: set[str] = set()
    stale = []
    for entry in equivalent:
        mutant = present.get(entry.name)
        if mutant is None:
            if any(entry.name.startswith(f"{module}.") for module in judged):
                stale.append(f"{entry.name}: no such mutant")
        elif mutant.status == KILLED:
            stale.append(f"{entry.name}: killed now (remove the entry)")
        elif entry.lines != added_lines(diffs.get(entry.name, "")):
            stale.append(f"{entry.name}: its mutant now writes other lines")
        else:
            accepted.add(entry.name)
    scores = []
    for module in dict.fromkeys(m.module for m in mutants):
        mine = [m for m in mutants if m.module == module and m.status not in NOT_COUNTED]
        scores.append(
            ModuleScore(
                module,
                len(mine),
                sum(m.status == KILLED for m in mine),
                sum(m.name in accepted for m in mine),
                sum(m.status != KILLED and m.name not in accepted for m in mine),
            )
        )
    unlisted = [m for m in mutants if m.status not in (KILLED, *NOT_COUNTED) and m.name not in accepted]
    return scores, unlisted, stale


def dotted(module: str) -> str:
    """kafka_migration/run/losses.py -> kafka_migration.run.losses, the prefix of its mutants' names."""
    return module.removesuffix(".py").replace("/", ".")


def render(
    scores: Sequence[ModuleScore], unlisted: Sequence[Mutant], stale: Sequence[str], diffs: Mapping[str, str]
) -> str:
    width = max((len(s.module) for s in scores), default=10)
    out = ["Mutation score: killed / (mutants - equivalent)"]
    for s in scores:
        out.append(
            f"  {s.module:<{width}}  {s.score:5.1f}%  {s.killed:>4} killed of {s.mutants:>4}, "
            f"{s.equivalent} equivalent, {s.survivors} survivors"
        )
    total = ModuleScore(
        "all",
        sum(s.mutants for s in scores),
        sum(s.killed for s in scores),
        sum(s.equivalent for s in scores),
        sum(s.survivors for s in scores),
    )
    out.append(
        f"  {'all':<{width}}  {total.score:5.1f}%  {total.killed:>4} killed of {total.mutants:>4}, "
        f"{total.equivalent} equivalent, {total.survivors} survivors"
    )
    if unlisted:
        out += ["", f"Survivors not listed in tests/mutation/{EQUIVALENT.name} ({len(unlisted)}):"]
        for m in unlisted:
            out.append(f"  {m.name} ({m.status})")
            out += [f"      {line}" for line in diffs.get(m.name, "").splitlines()[2:] if line[:1] in "+-"]
    if stale:
        out += ["", f"Stale entries of tests/mutation/{EQUIVALENT.name} ({len(stale)}):"]
        out += [f"  {line}" for line in stale]
    return "\n".join(out)


def survivor_diffs(names: Iterable[str]) -> dict[str, str]:
    """Each mutant's diff, as ``mutmut show`` prints it (read from mutants/, in this process)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    diffs = {}
    for name in names:
        try:
            diffs[name] = get_diff_for_mutant(name)
        except FileNotFoundError:
            continue
    return diffs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="judge only the mutants whose names match this glob (what mutmut run was given)")
    args = parser.parse_args(argv)
    mutants = read_results(Path("mutants"), mutated_modules(Path("pyproject.toml")))
    if args.only:
        mutants = [m for m in mutants if fnmatch.fnmatch(m.name, args.only)]
    if not mutants:
        print("No mutmut results under mutants/: run make mutate.", file=sys.stderr)
        return 2
    equivalent = parse_equivalent(EQUIVALENT.read_text(encoding="utf-8"))
    wanted = {m.name for m in mutants if m.status not in (KILLED, *NOT_COUNTED)} | {
        e.name for e in equivalent if e.name in {m.name for m in mutants}
    }
    diffs = survivor_diffs(sorted(wanted))
    scores, unlisted, stale = judge(mutants, equivalent, diffs)
    print(render(scores, unlisted, stale, diffs))
    unchecked = sum(m.status in NOT_COUNTED for m in mutants)
    if unchecked:
        print(f"\n{unchecked} mutants were not checked (an interrupted or partial run): run make mutate again.")
    return 1 if unlisted or stale or unchecked else 0


if __name__ == "__main__":
    sys.exit(main())
