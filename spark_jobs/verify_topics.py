"""spark-submit entry point: verify a plan's topics from independent reads of both clusters."""

import sys

from kafka_migration.spark.driver import main

if __name__ == "__main__":
    sys.exit(main(["verify", *sys.argv[1:]]))
