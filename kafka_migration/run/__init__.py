"""A migration run: discover, plan, create topics, copy, verify, record (``pipeline`` is the run end to end)."""
