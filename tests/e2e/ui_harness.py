"""Debian's Chromium for the browser tests (driven by Playwright: tests/e2e/test_console_ui.py)."""

from __future__ import annotations

import os
import shutil


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None
