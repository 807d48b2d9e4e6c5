#!/usr/bin/env bash
# Runs once, when the postgres service initialises an empty data volume: the migration
# ledger gets its own role and database next to Airflow's (POSTGRES_DB). The ledger's
# tables are made by kafka-migration itself (Alembic) the first time a task opens it.
set -euo pipefail
: "${LEDGER_DB_NAME:?}" "${LEDGER_DB_USER:?}" "${LEDGER_DB_PASSWORD:?}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v name="$LEDGER_DB_NAME" -v owner="$LEDGER_DB_USER" -v password="$LEDGER_DB_PASSWORD" <<'SQL'
CREATE ROLE :"owner" LOGIN PASSWORD :'password';
CREATE DATABASE :"name" OWNER :"owner";
SQL
