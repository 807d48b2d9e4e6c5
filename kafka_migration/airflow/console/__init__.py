"""The operator's console inside the Airflow UI: its JSON API (``api``) and React sources (``www/``)."""
