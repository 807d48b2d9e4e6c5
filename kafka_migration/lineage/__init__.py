"""A run in the lineage graph: OpenLineage events (``events``) with the run's evidence as a facet (``facets``),
named as other Kafka emitters name topics (``naming``), and sent, when configured, by openlineage-python's
client (``emit``). Layer 2: it knows plain values and the report's content, not the ledger or the run."""
