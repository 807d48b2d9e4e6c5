"""The console API's OpenAPI description, from which the console's TypeScript types are generated.

``python -m kafka_migration.airflow.console.openapi PATH`` writes it (``make console-types`` then runs
openapi-typescript on it); ``make console`` writes both to a scratch directory and fails when they differ
from the checked-in ``www/openapi.json`` and ``www/src/api/openapi.ts``, so the pages cannot drift from the
pydantic models (``console/models.py``). The app comes from the plugin's own factory with nothing
configured: only its routes and models are read, no ledger and no cluster.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def describe() -> dict[str, Any]:
    """The schema the plugin serves at ``/kafka-migrations/openapi.json``."""
    from kafka_migration.airflow.webapp import create_app

    return create_app().openapi()


def render() -> str:
    """Stable text for a checked-in file: two-space indents, the app's own key order, a final newline."""
    return json.dumps(describe(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m kafka_migration.airflow.console.openapi PATH  (- for stdout)", file=sys.stderr)
        return 2
    text = render()
    if args[0] == "-":
        sys.stdout.write(text)
    else:
        Path(args[0]).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
