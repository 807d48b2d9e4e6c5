"""The look every HTML report shares (run sign-off, cutover, failback): one stylesheet, one escape.

Each report is one self-contained file (inline CSS, no scripts, no fonts fetched), readable in a
browser, printable, and attachable to a ticket; a refused cutover looks like a verified run's report.
"""

from __future__ import annotations

import html
from typing import Any

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2430;margin:2rem auto;max-width:1100px;padding:0 1rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #dde3ea;padding-bottom:.3rem}
h3{font-size:1rem;margin:1.4rem 0 .4rem}table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid #dde3ea;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f3f6f9}
td.num{text-align:right;font-variant-numeric:tabular-nums}code{font:12px ui-monospace,Menlo,monospace}
.verdict{display:inline-block;padding:.25rem .8rem;border-radius:4px;font-weight:700;color:#fff}
.ok{background:#1f8a4c}.bad{background:#c0392b}.neutral{background:#6c7a89}
.pill{padding:0 .4rem;border-radius:3px;font-size:12px}.pill.ok{color:#fff}.pill.bad{color:#fff}.pill.neutral{color:#fff}
.muted{color:#5c6b7a}ul.warnings li{margin:.2rem 0}.chart text{font:12px system-ui,sans-serif;fill:#1d2430}
ul.reasons>li{margin:.4rem 0}ul.reasons ul{margin:.2rem 0}ul.checklist{list-style:none;padding-left:0}
ul.checklist li{margin:.3rem 0}.way-out{border-left:4px solid #3b7dd8;background:#f3f6f9;padding:.5rem .8rem .5rem 2.4rem}
@media print{body{margin:0;max-width:none;font-size:11px}h2{break-after:avoid}table{break-inside:auto}tr{break-inside:avoid}}
"""


def escape(value: Any) -> str:
    """Text for HTML; a missing value reads as an en dash, never "None"."""
    return html.escape("–" if value is None else str(value))


def head(title: str) -> str:
    """The document's start up to and including ``<body>``."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title>\n<style>{CSS}</style></head><body>"
    )
