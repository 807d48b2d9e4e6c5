"""Consumer group offset sync: ``rules`` (pure translation rules), ``sync`` (end to end; its Kafka calls are
``kafka/groups``)."""
