"""Airflow glue: hooks, operators and task bodies. The only part of the package that imports airflow."""
