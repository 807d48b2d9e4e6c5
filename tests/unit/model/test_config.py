"""kafka_migration.model.config: cluster settings, patterns, run options."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import (
    DEFAULT_INCLUDE,
    DEFAULT_RENAME,
    ClusterConfig,
    ClusterPair,
    Endpoint,
    MigrationOptions,
    compile_topic_pattern,
    env_var,
    is_secret_setting,
    load_settings_file,
    parse_start,
    redact,
    writable_dir,
)
from tests.leaks import leaked


class TestSecrets:
    @pytest.mark.parametrize(
        "name",
        ["sasl.password", "ssl.key.password", "sasl.oauthbearer.client.secret", "ssl.keystore.location", "TOKEN"],
    )
    def test_secret_names(self, name: str) -> None:
        assert is_secret_setting(name)

    @pytest.mark.parametrize("name", ["bootstrap.servers", "security.protocol", "sasl.mechanism", "client.id"])
    def test_plain_names(self, name: str) -> None:
        assert not is_secret_setting(name)

    def test_redact_hides_only_secret_values_and_does_not_mutate(self) -> None:
        settings = {"bootstrap.servers": "b:9092", "sasl.password": "hunter2", "sasl.username": "alice"}
        shown = redact(settings)
        assert shown == {"bootstrap.servers": "b:9092", "sasl.password": "***", "sasl.username": "alice"}
        assert settings["sasl.password"] == "hunter2"
        assert leaked("hunter2", repr(shown)) == []


class TestClusterConfig:
    def test_missing_bootstrap_names_the_role(self) -> None:
        with pytest.raises(ConfigurationError, match=r"target cluster has no 'bootstrap\.servers'") as info:
            ClusterConfig("target", {"security.protocol": "SSL"})
        assert "--target" in str(info.value)

    def test_blank_bootstrap_is_missing(self) -> None:
        with pytest.raises(ConfigurationError, match="bootstrap"):
            ClusterConfig("source", {"bootstrap.servers": "   "})

    @pytest.mark.parametrize("value", [{"nested": 1}, ["a", "b"], None])
    def test_non_flat_value_rejected_with_its_key(self, value: object) -> None:
        with pytest.raises(ConfigurationError, match=r"source cluster setting 'sasl\.jaas\.config'"):
            ClusterConfig("source", {"bootstrap.servers": "b:9092", "sasl.jaas.config": value})

    def test_scalar_values_accepted(self) -> None:
        cfg = ClusterConfig("source", {"bootstrap.servers": "b:9092", "linger.ms": 5, "enable.idempotence": True})
        assert cfg.bootstrap == "b:9092"

    def test_env_round_trip(self) -> None:
        cfg = ClusterConfig("source", {"bootstrap.servers": "b:9092", "sasl.password": "p"})
        assert ClusterConfig.from_env("source", cfg.to_env()) == cfg
        assert json.loads(cfg.to_env()) == {"bootstrap.servers": "b:9092", "sasl.password": "p"}

    @pytest.mark.parametrize("value", [None, ""])
    def test_from_env_missing_names_variable(self, value: str | None) -> None:
        with pytest.raises(ConfigurationError, match="KAFKA_MIGRATION_SOURCE_CONFIG"):
            ClusterConfig.from_env("source", value)

    def test_env_var_name(self) -> None:
        assert env_var("target") == "KAFKA_MIGRATION_TARGET_CONFIG"

    def test_build_merges_file_and_command_line_bootstrap_wins(self, tmp_path: Path) -> None:
        path = tmp_path / "src.json"
        path.write_text(json.dumps({"bootstrap.servers": "from-file:9092", "security.protocol": "SASL_SSL"}))
        cfg = ClusterConfig.build("source", "from-cli:9092", path)
        assert dict(cfg.settings) == {"bootstrap.servers": "from-cli:9092", "security.protocol": "SASL_SSL"}
        assert ClusterConfig.build("source", None, path).bootstrap == "from-file:9092"

    def test_build_without_any_bootstrap_fails(self) -> None:
        with pytest.raises(ConfigurationError, match="source cluster has no"):
            ClusterConfig.build("source", None, None)


class TestSettingsFile:
    def test_missing_file(self, tmp_path: Path) -> None:
        path = tmp_path / "nope.json"
        with pytest.raises(ConfigurationError, match=r"--source-config file .*nope\.json does not exist"):
            load_settings_file("source", path)

    def test_invalid_json_gives_line(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.json"
        path.write_text('{\n  "a": 1,\n  oops\n}')
        with pytest.raises(ConfigurationError, match=r"--target-config file .*bad\.json is not valid JSON \(line 3"):
            load_settings_file("target", path)

    def test_unreadable_file(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        # Simulated: the tests run as root, who can read a file whatever its mode.
        path = tmp_path / "secret.json"
        path.write_text("{}")

        def denied(*_: object, **__: object) -> str:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(Path, "read_text", denied)
        with pytest.raises(ConfigurationError, match=r"secret\.json cannot be read \(permission denied\)"):
            load_settings_file("source", path)

    def test_not_an_object(self, tmp_path: Path) -> None:
        path = tmp_path / "list.json"
        path.write_text('["bootstrap.servers"]')
        with pytest.raises(ConfigurationError, match="must hold one JSON object"):
            load_settings_file("source", path)


class TestPatterns:
    def test_valid_pattern_compiles(self) -> None:
        assert compile_topic_pattern("include", r"orders\..*").fullmatch("orders.eu")

    def test_invalid_pattern_names_kind_and_pattern(self) -> None:
        with pytest.raises(ConfigurationError, match=r"The exclude pattern '\[a-' is not a valid regular expression"):
            compile_topic_pattern("exclude", "[a-")


class TestMigrationOptions:
    def test_defaults(self) -> None:
        options = MigrationOptions()
        assert (options.include, options.exclude, options.rename) == (DEFAULT_INCLUDE, None, DEFAULT_RENAME)
        assert options.replication_factor is None
        assert options.topics_per_job == 25

    def test_invalid_include_names_pattern(self) -> None:
        with pytest.raises(ConfigurationError, match=r"include pattern 'orders\(' is not a valid"):
            MigrationOptions(include="orders(")

    def test_invalid_exclude_names_pattern(self) -> None:
        with pytest.raises(ConfigurationError, match=r"exclude pattern '\*bad' is not a valid"):
            MigrationOptions(exclude="*bad")

    def test_rename_without_topic_rejected(self) -> None:
        with pytest.raises(ConfigurationError, match=r"Rename template 'static-name' must contain the placeholder"):
            MigrationOptions(rename="static-name")

    @pytest.mark.parametrize("rf", [0, -1])
    def test_replication_factor_at_least_one(self, rf: int) -> None:
        with pytest.raises(ConfigurationError, match=f"replication factor must be at least 1, got {rf}"):
            MigrationOptions(replication_factor=rf)

    def test_topics_per_job_at_least_one(self) -> None:
        with pytest.raises(ConfigurationError, match="topics per job must be at least 1, got 0"):
            MigrationOptions(topics_per_job=0)

    def test_from_mapping_blanks_are_defaults(self) -> None:
        options = MigrationOptions.from_mapping(
            {"include": None, "exclude": "", "rename": None, "replication_factor": "", "topics_per_job": None}
        )
        assert options == MigrationOptions()

    def test_from_mapping_blank_include_is_refused_not_widened_to_every_topic(self) -> None:
        with pytest.raises(ConfigurationError, match="include pattern is empty"):
            MigrationOptions.from_mapping({"include": "  "})

    def test_from_mapping_converts_loose_types(self) -> None:
        options = MigrationOptions.from_mapping(
            {
                "include": "orders.*",
                "exclude": r".*\.dlq",
                "rename": "eu.{topic}",
                "dry_run": True,
                "replication_factor": "2",
                "topics_per_job": "7",
            }
        )
        assert options == MigrationOptions(
            include="orders.*",
            exclude=r".*\.dlq",
            rename="eu.{topic}",
            dry_run=True,
            replication_factor=2,
            topics_per_job=7,
        )

    def test_from_mapping_zero_replication_factor_is_refused(self) -> None:
        with pytest.raises(ConfigurationError, match="replication factor must be at least 1, got 0"):
            MigrationOptions.from_mapping({"replication_factor": 0})

    def test_from_mapping_still_validates(self) -> None:
        with pytest.raises(ConfigurationError, match="include pattern"):
            MigrationOptions.from_mapping({"include": "("})


class TestParseStart:
    @pytest.mark.parametrize("value", ["earliest", "latest"])
    def test_keywords(self, value: str) -> None:
        assert parse_start(value) == value

    def test_epoch_millis(self) -> None:
        assert parse_start("1700000000000") == 1_700_000_000_000

    def test_iso_with_zone(self) -> None:
        expected = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp() * 1000)
        assert parse_start("2026-11-01T00:00:00Z") == expected
        assert parse_start("2026-11-01T01:00:00+01:00") == expected

    def test_naive_iso_is_utc(self) -> None:
        assert parse_start("2026-11-01T00:00:00") == parse_start("2026-11-01T00:00:00Z")

    def test_invalid_names_value(self) -> None:
        with pytest.raises(ConfigurationError, match=r"--start 'yesterday' must be 'earliest', 'latest'"):
            parse_start("yesterday")

    def test_options_validate_start(self) -> None:
        with pytest.raises(ConfigurationError, match="--start 'soon'"):
            MigrationOptions(start="soon")


class TestWritableDir:
    def test_missing_directory_under_a_writable_parent_is_fine_and_not_created(self, tmp_path: Path) -> None:
        assert writable_dir(tmp_path / "a" / "b", "--state-dir") == tmp_path / "a" / "b"
        assert not (tmp_path / "a").exists()

    def test_a_file_in_the_way(self, tmp_path: Path) -> None:
        (tmp_path / "f").write_text("")
        with pytest.raises(ConfigurationError, match=r"--state-dir .*f/runs is not a directory"):
            writable_dir(tmp_path / "f" / "runs", "--state-dir")

    def test_not_writable(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        # Simulated: the tests run as root, for whom every directory is writable.
        monkeypatch.setattr("os.access", lambda *_: False)
        with pytest.raises(ConfigurationError, match="is not writable by this user"):
            writable_dir(tmp_path / "state", "--state-dir")


class TestSecretsInMessages:
    def test_scrub_replaces_every_secret_value(self) -> None:
        from kafka_migration.model.config import scrub

        settings = {"sasl.password": "hunter22", "ssl.key.password": "k3y-pass", "sasl.username": "alice"}
        text = "login alice with hunter22 failed; key k3y-pass unreadable"
        assert scrub(text, settings) == "login alice with *** failed; key *** unreadable"

    def test_repr_of_a_cluster_config_hides_secret_values(self) -> None:
        cfg = ClusterConfig("source", {"bootstrap.servers": "b:9092", "sasl.password": "hunter22"})
        assert leaked("hunter22", repr(cfg)) == [] and "'sasl.password': '***'" in repr(cfg)

    def test_repr_of_what_the_tasks_get_hides_secret_values(self) -> None:
        pair = ClusterPair.of_settings(
            {"bootstrap.servers": "s:9092"}, {"bootstrap.servers": "t:9092", "sasl.password": "hunter22"}
        )
        assert leaked("hunter22", repr(pair)) == [] and "'sasl.password': '***'" in repr(pair.target)

    def test_oauthbearer_config_is_secret(self) -> None:
        assert is_secret_setting("sasl.oauthbearer.config")


class TestClusterPair:
    """What a run's Spark tasks are given: both clusters, roles included."""

    def test_roles_are_the_runs_also_in_a_failback(self) -> None:
        # A failback runs from the cutover's target back to its source with the same two configs, swapped:
        # its messages name the clusters by the role they play in this run.
        original = ClusterConfig("source", {"bootstrap.servers": "old:9092"})
        switched_to = ClusterConfig("target", {"bootstrap.servers": "new:9092"})
        pair = ClusterPair.of(switched_to, original)
        assert (pair.source.role, pair.source.settings) == ("source", {"bootstrap.servers": "new:9092"})
        assert (pair.target.role, pair.target.settings) == ("target", {"bootstrap.servers": "old:9092"})

    def test_a_swapped_pair_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"\(source, target\)"):
            ClusterPair(Endpoint("target", {}), Endpoint("source", {}))

    def test_it_pickles_as_plain_settings_without_secret_references(self) -> None:
        import pickle

        from kafka_migration.model.config import SecretSource

        config = ClusterConfig("source", {"bootstrap.servers": "s:9092"}, secrets=SecretSource(settings_file="/x"))
        pair = ClusterPair.of(config, ClusterConfig("target", {"bootstrap.servers": "t:9092"}))
        assert type(pair.source.settings) is dict and pickle.loads(pickle.dumps(pair)) == pair
        assert b"SecretSource" not in pickle.dumps(pair)
