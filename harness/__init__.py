"""Test and demo harness: embedded Kafka-protocol brokers and sample data.

Nothing here is product code. Quirks of the embedded broker (Tansu, see
``../shared/notes/embedded-kafka.md``) are handled here and only here.
"""
