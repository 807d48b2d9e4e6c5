"""Consumer group offset sync: ``rules`` (pure translation rules), ``admin`` (Kafka calls), ``sync`` (end to end)."""
