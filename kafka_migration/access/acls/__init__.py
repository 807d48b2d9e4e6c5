"""ACL bindings: ``rules`` (carried to the target, planned, decided as Kafka's authorizer does), ``sync`` (the
sync's part that reads, writes, proves and records them through ``kafka/access``)."""
