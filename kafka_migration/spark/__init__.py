"""Spark side of the pipeline: functions that take a SparkContext, and the job entry logic."""
