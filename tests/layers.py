"""The repository's import graph, read with ``ast``, and the layer rules it must keep (docs/architecture.md).

``check(root)`` returns every broken rule as a `Problem`; tests/unit/test_layers.py runs it on the real tree
and on planted fixtures. Every import statement is an arrow, lazy ones inside functions included: the module
depends on its target whenever that code runs. Relative imports and ``from package import submodule`` are
resolved to the module they load (an arrow to a package is one to its ``__init__``; its parents' are left out,
as every submodule would otherwise sit in a circle with a package that re-exports it). Imports under
``if TYPE_CHECKING:`` count too, for the layers and for circles: the type checker and the reader follow them, and
a guard that hides a circle from the interpreter does not remove it (import the type from a lower module instead).
"""

from __future__ import annotations

import ast
import itertools
from collections import deque
from dataclasses import dataclass
from pathlib import Path

# Top-level folders, lowest first. A folder imports its own modules and those of a lower rank, never one beside
# or above it: the product imports no entry point, harness or test; the harness drives the product; tests use all.
RANKS = {"kafka_migration": 0, "dags": 1, "plugins": 1, "spark_jobs": 1, "harness": 2, "tests": 3}

# The entry points are glue: each reaches the product only through its front door, and stays a screen long.
FRONT_DOORS = {
    "dags": "kafka_migration.airflow",
    "plugins": "kafka_migration.airflow",
    "spark_jobs": "kafka_migration.spark",
}
SCREEN = 60  # lines

# Folders that are themselves on sys.path (Airflow's dags and plugins folders): their modules import each other by
# bare name.
PATH_FOLDERS = {"dags", "plugins"}

# kafka_migration's folders and root modules ("__init__" is the package's own) -> layer. An import reaches a lower
# layer or stays in its own folder. A new capability gets a folder and a layer here.
LAYERS = {
    "__init__": 0,
    "exceptions": 0,
    "model": 1,
    "kafka": 2,
    "ledger": 2,
    "registry": 2,  # the door to a schema registry: the only importer of confluent_kafka.schema_registry
    "lineage": 2,
    "schemas": 2,  # pure: below run/, whose copy and verification rewrite and prove each record's schema id
    "reports": 3,  # read the ledger (a typed Ledger, issue 49): above ledger/, below the capabilities that report
    "run": 4,
    "groups": 4,
    "access": 4,
    "schema_sync": 4,  # schemas moved with a run's records: both registries read, versions registered and proven
    "cutover": 5,
    "spark": 5,
    "cli": 6,
    "airflow": 6,
}

# Third-party library (a dotted prefix: the longest listed one decides) -> the only parts that may import it. Only
# glue imports Airflow or PySpark; every other library has one door in the package (issue 49), so that a change of
# client touches one folder and the rest is tested on the package's own values.
FRAMEWORKS = {
    "airflow": {"kafka_migration.airflow", "dags", "plugins", "harness", "tests"},
    "pyspark": {"kafka_migration.spark", "kafka_migration.airflow", "spark_jobs", "harness", "tests"},
    # The brokers: confluent-kafka and kafka-python ("kafka") only through kafka/; the registry only through registry/.
    "confluent_kafka": {"kafka_migration.kafka", "harness", "tests"},
    "confluent_kafka.schema_registry": {"kafka_migration.registry", "harness", "tests"},
    "kafka": {"kafka_migration.kafka", "harness", "tests"},
    # The ledger's database and its migrations.
    "sqlalchemy": {"kafka_migration.ledger", "harness", "tests"},
    "alembic": {"kafka_migration.ledger", "harness", "tests"},
    # The console's web framework: airflow/ serves it, plugins/ mounts it in Airflow's API server (its Depends).
    "fastapi": {"kafka_migration.airflow", "plugins", "harness", "tests"},
    # openlineage-python builds and sends the events in lineage/; airflow/ sends through Airflow's provider
    # (airflow.providers.openlineage, an "airflow" import) with the events lineage/ builds.
    "openlineage": {"kafka_migration.lineage", "harness", "tests"},
}


@dataclass(frozen=True)
class Module:
    name: str  # dotted, from the repository root: kafka_migration.run.planner, dags.kafka_migration_dag
    path: Path  # relative to the repository root
    is_package: bool


@dataclass(frozen=True)
class Arrow:
    source: Module
    target: str  # a module of the tree, or a third-party dotted name
    line: int
    typing_only: bool

    def where(self) -> str:
        return f"{self.source.path}:{self.line}" + (" (under TYPE_CHECKING)" if self.typing_only else "")


@dataclass(frozen=True)
class Problem:
    key: str  # without line numbers, so that a known exception survives edits around it
    message: str


def modules(root: Path) -> dict[str, Module]:
    """Every Python module under the ranked top-level folders, by dotted name."""
    found = {}
    for top in RANKS:
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root)
            if any(part.startswith(".") or part == "node_modules" for part in relative.parts):
                continue
            parts = relative.with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            found[name] = Module(name, relative, is_package)
    return found


def _typing_only_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}:
            ids |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return ids


def _known(name: str, tree: dict[str, Module]) -> str:
    """The longest prefix of ``name`` that is a module of the tree (what importing ``name`` loads last), or ``name``."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in tree:
            return ".".join(parts[:end])
    return name


def _targets(module: Module, node: ast.Import | ast.ImportFrom, tree: dict[str, Module]) -> list[str]:
    top = module.name.split(".")[0]
    local = top in PATH_FOLDERS

    def resolve(name: str) -> str:
        if local and f"{top}.{name.partition('.')[0]}" in tree:
            return _known(f"{top}.{name}", tree)
        return _known(name, tree)

    if isinstance(node, ast.Import):
        return [resolve(alias.name) for alias in node.names]
    if node.level:
        package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    # ``from package import name`` loads package.name when the tree has that module, else only package.
    return [
        resolve(f"{base}.{alias.name}") if resolve(f"{base}.{alias.name}") in tree else resolve(base)
        for alias in node.names
    ]


def _top_level_names(path: Path) -> set[str] | None:
    """The names a module defines at its top level (through ifs and trys, not inside functions or classes);
    None when it can define more at run time (``import *``, a module ``__getattr__``)."""
    names: set[str] = set()
    body = list(ast.parse(path.read_text(), str(path)).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return None
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for inner in getattr(node, field, []):
                    body.extend(inner.body if isinstance(inner, ast.ExceptHandler) else [inner])
    return None if "__getattr__" in names else names


def missing(root: Path, tree: dict[str, Module]) -> list[Problem]:
    """Imports of the tree's own modules or names that do not exist: a rename that missed a caller. Python finds
    them only when that line runs, and a lazy import inside a function runs late; ruff does not look."""
    problems = {}
    defined: dict[str, set[str] | None] = {}
    for module in tree.values():
        syntax = ast.parse((root / module.path).read_text(), str(module.path))
        top = module.name.split(".")[0]
        for node in ast.walk(syntax):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.Import):
                wanted = [(alias.name, None) for alias in node.names]
            elif node.level:
                package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
                wanted = [(base, alias.name) for alias in node.names]
            else:
                wanted = [(node.module or "", alias.name) for alias in node.names]
            for base, name in wanted:
                if top in PATH_FOLDERS and f"{top}.{base.partition('.')[0]}" in tree:
                    base = f"{top}.{base}"
                if base.split(".")[0] not in RANKS or name == "*":
                    continue
                if base not in tree:
                    found = f"{module.path}:{node.lineno}: {module.name} imports {base}, which is no module of the tree"
                elif name is not None and f"{base}.{name}" not in tree:
                    if base not in defined:
                        defined[base] = _top_level_names(root / tree[base].path)
                    names = defined[base]
                    if names is None or name in names:
                        continue
                    found = f"{module.path}:{node.lineno}: {module.name} imports {name} from {base}, which has none"
                else:
                    continue
                key = f"missing {module.name} -> {base}" + (f".{name}" if name else "")
                problems[key] = Problem(key, found)
    return list(problems.values())


def arrows(root: Path, tree: dict[str, Module]) -> list[Arrow]:
    """Every import of every module, resolved."""
    found = []
    for module in tree.values():
        syntax = ast.parse((root / module.path).read_text(), str(module.path))
        typing_only = _typing_only_nodes(syntax)
        for node in ast.walk(syntax):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(module, node, tree):
                    if target != module.name:
                        found.append(Arrow(module, target, node.lineno, id(node) in typing_only))
    return sorted(found, key=lambda a: (a.source.name, a.line, a.target))


def part(name: str) -> str:
    """A kafka_migration module's folder or root module (``kafka_migration.run``), else its top-level folder."""
    parts = name.split(".")
    if parts[0] != "kafka_migration":
        return parts[0]
    return f"kafka_migration.{parts[1] if len(parts) > 1 else '__init__'}"


def _layer(name: str) -> int | None:
    return LAYERS.get(part(name).partition(".")[2])


def _framework(target: str) -> str | None:
    """The FRAMEWORKS entry a third-party import falls under: the longest dotted prefix of ``target`` listed there."""
    parts = target.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in FRAMEWORKS:
            return ".".join(parts[:end])
    return None


def _arrow_problem(arrow: Arrow) -> str | None:
    source, target = arrow.source.name, arrow.target
    top, target_top = source.split(".")[0], target.split(".")[0]
    if target_top not in RANKS:
        library = _framework(target)
        if library is not None and part(source) not in FRAMEWORKS[library]:
            return f"only {', '.join(sorted(FRAMEWORKS[library]))} may import {library}"
        return None
    if target_top != top and RANKS[target_top] >= RANKS[top]:
        lower = ", ".join(f"{t}/" for t in RANKS if RANKS[t] < RANKS[top]) or "nothing else of the tree"
        return f"{target_top}/ is not below {top}/ ({top}/ may import {lower})"
    door = FRONT_DOORS.get(top)
    if door and target_top == "kafka_migration" and target != door and not target.startswith(f"{door}."):
        return f"{top}/ is an entry point: it reaches the product only through {door}"
    if top == target_top == "kafka_migration" and part(source) != part(target):
        layer, target_layer = _layer(source), _layer(target)
        if layer is not None and target_layer is not None and target_layer >= layer:
            return f"{part(target)} is layer {target_layer}, not below {part(source)}'s layer {layer}"
    return None


def _components(edges: dict[str, dict[str, Arrow]]) -> list[list[str]]:
    """The modules that reach each other, by Tarjan's algorithm: a set of more than one holds a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def connect(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for target in edges[name]:
            if target not in index:
                connect(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while not component or component[-1] != name:
                component.append(stack.pop())
            components.append(sorted(component))

    for name in sorted(edges):
        if name not in index:
            connect(name)
    return [component for component in components if len(component) > 1]


def _shortest_circle(edges: dict[str, dict[str, Arrow]], members: list[str]) -> list[str]:
    """The shortest circle from the first of ``members`` back to it (breadth first), both ends included."""
    start = members[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while start not in came_from:
        name = queue.popleft()
        for target in sorted(edges[name]):
            if target in members and target not in came_from:
                came_from[target] = name
                queue.append(target)
    path = [start, came_from[start]]
    while path[-1] != start:
        path.append(came_from[path[-1]])
    return path[::-1]


def _circles(tree: dict[str, Module], found: list[Arrow]) -> list[Problem]:
    """One problem per set of modules that import each other, keyed by the set, showing one circle of it."""
    edges: dict[str, dict[str, Arrow]] = {name: {} for name in tree}
    for arrow in found:
        if arrow.target in tree:
            edges[arrow.source.name].setdefault(arrow.target, arrow)
    problems = []
    for members in _components(edges):
        path = _shortest_circle(edges, members)
        steps = "; ".join(f"{edges[a][b].where()} imports {b}" for a, b in itertools.pairwise(path))
        problems.append(Problem(f"circle {' '.join(members)}", f"circle {' -> '.join(path)} ({steps})"))
    return problems


def check(root: Path) -> list[Problem]:
    """Every broken rule of the tree under ``root``, sorted by key."""
    tree = modules(root)
    problems = {}
    for module in tree.values():
        if module.name.split(".")[0] == "kafka_migration" and _layer(module.name) is None:
            key = f"no layer {part(module.name)}"
            message = f"{module.path}: {part(module.name)} has no layer in LAYERS of tests/layers.py"
            problems.setdefault(key, Problem(key, message))
        lines = len((root / module.path).read_text().splitlines())
        if module.name.split(".")[0] in FRONT_DOORS and lines > SCREEN:
            key = f"long {module.name}"
            problems[key] = Problem(key, f"{module.path} is {lines} lines: an entry point is glue, at most {SCREEN}")
    found = arrows(root, tree)
    for arrow in found:
        reason = _arrow_problem(arrow)
        key = f"{arrow.source.name} -> {arrow.target}"
        if reason and key not in problems:
            problems[key] = Problem(key, f"{arrow.where()}: {arrow.source.name} imports {arrow.target}: {reason}")
    problems |= {problem.key: problem for problem in _circles(tree, found)}
    problems |= {problem.key: problem for problem in missing(root, tree)}
    return sorted(problems.values(), key=lambda p: p.key)


# -- the house as docs/architecture.md draws it ------------------------------------------------------------------

WIDTH = 116  # the drawing's lines, within the page's code block


def _holds_python(folder: Path) -> bool:
    """Whether ``folder`` holds Python of the project's own: a dependency's (the console's node_modules, present only
    once npm installed it) or a hidden folder's does not count, so the drawing is the same on every clone."""
    return folder.is_dir() and any(
        not any(part.startswith(".") or part == "node_modules" for part in p.relative_to(folder).parts)
        for p in folder.rglob("*.py")
    )


def _contents(folder: Path) -> list[str]:
    """A folder's modules (by name, ``__init__`` left out), then each subfolder holding Python with what it holds
    (a folder deeper down only named): ``console/ (access, api)``."""
    modules = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    folders = sorted(p for p in folder.iterdir() if _holds_python(p))
    inside = []
    for sub in folders:
        names = sorted(p.stem for p in sub.glob("*.py") if p.stem != "__init__")
        names += [f"{p.name}/" for p in sorted(sub.iterdir()) if _holds_python(p)]
        inside.append(f"{sub.name}/ ({', '.join(names)})")
    return modules + inside


def house(root: Path) -> str:
    """kafka_migration's layers, top down, each folder (in ``LAYERS``' order) with its modules: the drawing of
    docs/architecture.md, which tests/unit/test_layers.py holds to it. ``python -m tests.layers`` prints it."""
    by_layer: dict[int, list[str]] = {}
    for name, layer in LAYERS.items():
        if name != "__init__":
            by_layer.setdefault(layer, []).append(name)
    lines = []
    for layer in sorted(by_layer, reverse=True):
        for i, name in enumerate(by_layer[layer]):
            folder = root / "kafka_migration" / name
            head = f"{f'layer {layer}' if i == 0 else '':<8}  {f'{name}/' if folder.is_dir() else f'{name}.py':<13}"
            items = _contents(folder) if folder.is_dir() else []
            line = head
            for n, item in enumerate(items):
                word = item + ("," if n < len(items) - 1 else "")
                if len(line) + 1 + len(word) > WIDTH and line.strip() != head.strip():
                    lines.append(line.rstrip())
                    line = " " * len(head)
                line = f"{line} {word}"
            lines.append(line.rstrip())
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(house(Path(__file__).resolve().parents[1]), end="")
