"""What a run reads like afterwards: the sign-off report (``signoff``) and the per-topic summary (``summary``)."""

# The formats every report is written in (report.<format>), and the media type each is served with.
MEDIA_TYPES = {"html": "text/html; charset=utf-8", "json": "application/json", "md": "text/markdown; charset=utf-8"}
