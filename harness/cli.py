"""``kafka-migrate`` for the embedded broker: the real CLI with harness/quirks.py applied.

Tansu labels topic configs as defaults (see harness/quirks.py); against it the
product would copy none and then, correctly, report the drift on the next run.
Tests and demos that run the CLI against embedded brokers use this entry point.
"""

from __future__ import annotations

import sys

from harness.quirks import topic_configs_marked_as_set
from kafka_migration.cli import main

if __name__ == "__main__":
    with topic_configs_marked_as_set():
        sys.exit(main())
