# syntax=docker/dockerfile:1
#
# kafka-migration: one image for every Airflow component and every Spark node of
# docker-compose.yaml. The Spark driver runs inside Airflow's tasks and the executors on the
# Spark workers; built from one image, both have the same Python, the same packages and the
# same kafka-migration, so nothing has to be shipped to the executors.
#
#   docker build -t kafka-migration:0.1.0 .
#
# The Airflow version below must be the one pinned in requirements-lock.txt
# (tests/unit/test_compose.py checks it). No secrets are baked in: connections and passwords
# reach the containers as environment variables (see docker-compose.yaml and .env).

# Java 17 for Spark, from the Eclipse Temurin image (independent of the Debian release under Airflow).
FROM eclipse-temurin:17.0.16_8-jre-jammy AS java

# The operator's console: its React bundle, built from the lockfile (what `make console` does), for the plugin.
FROM node:22.12.0-bookworm-slim AS console
WORKDIR /console
COPY kafka_migration/airflow/console/www/package.json kafka_migration/airflow/console/www/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY kafka_migration/airflow/console/www/ ./
RUN npm run --silent build

# The slim image holds Airflow core only: the complete dependency set comes from the lock
# below, so no preinstalled provider is left depending on versions the lock replaced.
FROM apache/airflow:slim-3.3.2-python3.11

USER root
COPY --from=java /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk \
    PATH="/opt/java/openjdk/bin:${PATH}"
# The project's source tree (pip builds in it) and the mount point of the CA volume.
RUN mkdir -p /opt/kafka-migration/ca && chown -R airflow:0 /opt/kafka-migration

USER airflow
WORKDIR /opt/kafka-migration

# Dependencies first (a layer that changes only with the lock). --no-deps: the lock is the
# complete resolved set; it leaves out pyspark-client on purpose (see requirements.txt).
COPY --chown=airflow:0 requirements-lock.txt ./
RUN pip install --no-cache-dir --no-deps -r requirements-lock.txt

# The project itself, then a check that the environment imports.
COPY --chown=airflow:0 pyproject.toml README.md ./
COPY --chown=airflow:0 kafka_migration ./kafka_migration
COPY --chown=airflow:0 spark_jobs ./spark_jobs
COPY --from=console --chown=airflow:0 /console/dist ./kafka_migration/airflow/console/www/dist
RUN pip install --no-cache-dir --no-deps . \
    && python -c "import pyspark, confluent_kafka, kafka_migration, spark_jobs" \
    && python -c "import kafka_migration.airflow.webapp as w; assert (w.BUNDLE_DIR / w.BUNDLE).is_file()" \
    && java -version

# The DAGs and the plugin, where Airflow looks for them; the harness for the seeding service.
COPY --chown=airflow:0 dags /opt/airflow/dags
COPY --chown=airflow:0 plugins /opt/airflow/plugins
COPY --chown=airflow:0 harness ./harness

# Mount points of the named volumes, owned by airflow so that new volumes are writable.
RUN mkdir -p /opt/airflow/kafka-migration /opt/airflow/auth

WORKDIR /opt/airflow
