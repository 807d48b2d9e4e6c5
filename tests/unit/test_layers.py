"""The package's layers (docs/architecture.md), read from every import in its source, lazy ones included.

Each folder imports only folders of a lower layer; only airflow/ imports Airflow, only spark/ and
airflow/ import PySpark. A new capability gets a folder and a layer here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "kafka_migration"

# Folder (or root module) -> layer. An import must reach a lower layer, or stay in its own folder.
LAYERS = {
    "__init__": 0,
    "exceptions": 0,
    "model": 1,
    "kafka": 2,
    "ledger": 2,
    "reports": 2,
    "run": 3,
    "groups": 3,
    "cutover": 4,
    "spark": 4,
    "cli": 5,
    "airflow": 5,
}
THIRD_PARTY = {"airflow": {"airflow"}, "pyspark": {"spark", "airflow"}}


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts)


def test_every_part_has_a_layer() -> None:
    assert {_part(p) for p in SOURCES} <= set(LAYERS), "a new folder of kafka_migration needs a layer here"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_down_the_layers(path: Path) -> None:
    part = _part(path)
    wrong = []
    for name in _imports(path):
        top, _, rest = name.partition(".")
        if top == "kafka_migration" and rest:
            target = rest.split(".")[0]
            if target != part and LAYERS[target] >= LAYERS[part]:
                wrong.append(f"{name} (layer {LAYERS[target]}, from layer {LAYERS[part]})")
        elif top in THIRD_PARTY and part not in THIRD_PARTY[top]:
            wrong.append(f"{name} (only {', '.join(f'{p}/' for p in sorted(THIRD_PARTY[top]))} may import {top})")
    assert not wrong, f"{path.relative_to(PACKAGE)} imports {'; '.join(wrong)}"
