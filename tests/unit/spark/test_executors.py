"""kafka_migration.spark.executors: the settings a cluster's executors start with, and what they leave alone."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.spark.executors import CLUSTER_DEFAULTS, EXECUTOR_JAVA_OPTIONS, executor_conf
from kafka_migration.spark.submit import SparkSettings


@pytest.mark.parametrize("master", ["spark://h:7077", "spark://a:7077,b:7077", "yarn", "k8s://https://api:443"])
def test_every_cluster_manager_gets_the_same_settings(master: str) -> None:
    conf = executor_conf({"spark.executor.cores": "4"}, master)
    assert conf == {
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.dynamicAllocation.enabled": "false",
        EXECUTOR_JAVA_OPTIONS: "-XX:TieredStopAtLevel=1",
        "spark.executor.cores": "4",
    }


@pytest.mark.parametrize("master", ["local", "local[4]", "local[*]", "local-cluster[2,1,1024]"])
def test_local_mode_is_left_alone(master: str) -> None:
    assert executor_conf({"spark.ui.enabled": "false"}, master) == {"spark.ui.enabled": "false"}


def test_the_users_settings_win() -> None:
    theirs = {key: "theirs" for key in CLUSTER_DEFAULTS}
    conf = executor_conf({**theirs, EXECUTOR_JAVA_OPTIONS: "-Dx=1"}, "yarn")
    assert {k: conf[k] for k in CLUSTER_DEFAULTS} == theirs
    assert conf[EXECUTOR_JAVA_OPTIONS] == "-XX:TieredStopAtLevel=1 -Dx=1"  # theirs after ours: theirs win
    own = executor_conf({EXECUTOR_JAVA_OPTIONS: "-XX:TieredStopAtLevel=4 -Dx=1"}, "yarn")
    assert own[EXECUTOR_JAVA_OPTIONS] == "-XX:TieredStopAtLevel=4 -Dx=1"


def test_the_driver_adds_them_under_what_the_submit_and_spark_defaults_set() -> None:
    from pyspark import SparkConf

    from kafka_migration.spark.driver import with_executor_settings

    submitted = {"spark.master": "spark://h:7077", "spark.dynamicAllocation.enabled": "true"}  # theirs
    conf = with_executor_settings(SparkConf(loadDefaults=False).setAll(list(submitted.items())))
    assert conf.get("spark.dynamicAllocation.enabled") == "true"
    assert conf.get("spark.scheduler.minRegisteredResourcesRatio") == "1.0"
    assert conf.get(EXECUTOR_JAVA_OPTIONS) == "-XX:TieredStopAtLevel=1"
    local = with_executor_settings(SparkConf(loadDefaults=False).set("spark.master", "local[4]"))
    assert dict(local.getAll()) == {"spark.master": "local[4]"}
    # The submit itself carries none of them: spark-defaults.conf would lose to its --conf arguments.
    assert SparkSettings(master="spark://h:7077", executor_env="").submit_conf() == {}


@pytest.mark.parametrize("value", ["true", "True", " 1"])
def test_speculation_is_refused_before_anything_runs(value: str) -> None:
    with pytest.raises(ConfigurationError, match=r"spark\.speculation"):
        SparkSettings(master="yarn", conf={"spark.speculation": value}, executor_env="")
    SparkSettings(master="yarn", conf={"spark.speculation": "false"}, executor_env="")
