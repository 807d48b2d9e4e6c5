"""Spark side of the pipeline: functions that take a SparkSession, and the job entry logic."""
