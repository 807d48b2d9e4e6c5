"""spark-submit entry point: the census of the schema ids in a plan's source ranges (a driver that cannot wait)."""

import sys

from kafka_migration.spark.driver import main

if __name__ == "__main__":
    sys.exit(main(["census", *sys.argv[1:]]))
