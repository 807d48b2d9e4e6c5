"""spark-submit entry point: copy a plan's topics and verify each slice right after its copy, in one application."""

import sys

from kafka_migration.spark.driver import main

if __name__ == "__main__":
    sys.exit(main(["migrate", *sys.argv[1:]]))
