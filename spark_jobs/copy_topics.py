"""spark-submit entry point: copy the planned offset ranges of a plan's topics."""

import sys

from kafka_migration.spark.driver import main

if __name__ == "__main__":
    sys.exit(main(["copy", *sys.argv[1:]]))
