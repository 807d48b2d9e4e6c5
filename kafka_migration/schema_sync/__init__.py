"""Schemas moved with a run's records (issue 48): the registry sync end to end (``sync``)."""
