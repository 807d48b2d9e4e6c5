"""Schemas that move with the records (issue 48): the wire format's header, read and rewritten (``wire``), and the
canonical forms that decide whether two registries' schemas are the same (``canonical``). Pure logic: no registry,
no broker, so the copy and the verification below it can both call it."""
