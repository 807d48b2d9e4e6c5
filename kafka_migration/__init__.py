"""kafka-migration: bounded, verified, auditable data migration between Kafka clusters.

The core package holds the domain logic. It imports neither Airflow nor Spark at
module level: the Airflow glue lives in ``kafka_migration.airflow`` and the Spark
functions in ``kafka_migration.spark``. One folder per capability, each on a layer that imports
only the layers below it: docs/architecture.md.
"""

__version__ = "0.1.0"
