"""Writing records: the copy's producer, made from the target cluster's settings, and what its failed deliveries say.

The copy (``run/copy.py``) keeps its loops and its per-worker cache of producers; this module only builds the
librdkafka client and hands it back, so a record costs nothing more than ``Producer.produce`` itself. The readers'
consumers are ``kafka.reader`` (one partition) and ``kafka.ranges`` (several at once).

Imported by a Spark worker before its first task (``spark/executor_tasks.import_task_modules``): confluent-kafka is
loaded here, at import, so that a forked worker finds it loaded.
"""

from __future__ import annotations

from confluent_kafka import KafkaError, Message, Producer

from kafka_migration.kafka.settings import check_producer_promises, producer_settings
from kafka_migration.kafka.tls import check_tls_settings
from kafka_migration.model.config import Endpoint

__all__ = ["KEY_OF", "VALUE_OF", "DeliveryErrors", "Producer", "copy_producer"]

# A read record's key and value, as functions to map over a batch: C-level, cheaper per record than a Python
# loop's method calls or ``operator.methodcaller``.
KEY_OF = Message.key
VALUE_OF = Message.value

# librdkafka's codes of a record that got no acknowledgement in time (message.timeout.ms), as opposed to one the
# target refused: the copy reports the first as a cluster timeout.
_TIMEOUTS = (KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT)


class DeliveryErrors:
    """The producer's delivery callback: counts failed deliveries and keeps the first one's message; successful
    ones are not reported (``delivery.report.only.error``)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: str | None = None
        self.timed_out = False

    def reset(self) -> None:
        self.count = 0
        self.first = None
        self.timed_out = False

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.count += 1
            if self.first is None:
                self.first = f"{err.str()} (target {msg.topic()}[{msg.partition()}])"
                self.timed_out = err.code() in _TIMEOUTS


def copy_producer(target: Endpoint, max_message_bytes: int, errors: DeliveryErrors) -> Producer:
    """A new idempotent producer for the copy, its deliveries reported to ``errors``: the target's settings
    with the copy's (``kafka.settings.producer_settings``), records up to ``max_message_bytes``.

    The promises under "nothing doubled" are checked again on what the producer is really built with, so that
    no setting added here can break one unseen.
    """
    check_tls_settings(target.role, target.settings)
    settings = {
        **producer_settings(target.settings, max_message_bytes, target.role),
        "delivery.report.only.error": True,
        "on_delivery": errors,
    }
    check_producer_promises(settings, target.role, required=True)
    return Producer(settings)
