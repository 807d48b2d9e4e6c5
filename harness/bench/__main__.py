"""``python -m harness.bench``: see harness/bench/__init__.py."""

import sys

from harness.bench.runner import main

sys.exit(main())
