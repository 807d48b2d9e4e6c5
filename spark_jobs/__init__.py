"""Spark entry points: what ``spark-submit`` runs. Each parses arguments and calls the core package."""
