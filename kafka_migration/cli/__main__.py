"""``python -m kafka_migration.cli``: the ``kafka-migrate`` command."""

import sys

from kafka_migration.cli import console_main

sys.exit(console_main())
