"""Client quotas: ``rules`` (carried to the target, planned, compared), ``sync`` (the sync's part that reads,
writes, proves and records them through ``kafka/quotas``)."""
