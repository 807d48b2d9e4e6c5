"""harness/registry without a registry running: where the release lives, the JVM command, ``up``'s refusals."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.registry import RegistryMissing, background, dist


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An unpacked release of nothing but its run jar, in a home of the test's own."""
    monkeypatch.setenv(dist.HOME_VARIABLE, str(tmp_path))
    dist.run_jar().parent.mkdir(parents=True)
    dist.run_jar().write_bytes(b"")
    return tmp_path


def test_the_version_comes_from_the_pom_and_the_release_lives_beside_it_per_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(dist.HOME_VARIABLE, raising=False)
    assert dist.registry_version() == "3.3.3"
    assert dist.app_dir() == dist.REPO / ".registry" / "3.3.3" / "quarkus-app"
    assert dist.stamp().name == f".fetched-{dist.pom_hash()}"
    ignored = (dist.REPO / ".gitignore").read_text().split()
    assert ".registry/" in ignored  # never committed, nor anything unpacked from it


def test_the_jvm_command_puts_the_settings_before_the_jar_and_uses_the_aot_cache_once_recorded(home: Path) -> None:
    command = dist.java_command({"quarkus.http.port": "1234"}, heap_mb=128)
    assert command[0] == dist.java() and Path(command[0]).name == "java"
    assert "-Xmx128m" in command and "-XX:+UseSerialGC" in command
    assert command[-3:] == ["-Dquarkus.http.port=1234", "-jar", str(dist.run_jar())]
    assert not any(option.startswith("-XX:AOTCache") for option in command)

    dist.aot_cache().write_bytes(b"")
    assert f"-XX:AOTCache={dist.aot_cache()}" in dist.java_command({})
    training = dist.java_command({}, record_cache=home / "new.aot")
    assert f"-XX:AOTCacheOutput={home / 'new.aot'}" in training
    assert not any(option.startswith("-XX:AOTCache=") for option in training)


def test_no_release_unpacked_is_registry_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(dist.HOME_VARIABLE, str(tmp_path))
    assert not dist.is_fetched()
    with pytest.raises(RegistryMissing, match="make registry"):
        dist.java_command({})


def test_up_refuses_a_port_in_use_and_down_without_registries_is_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert background.up(tmp_path, f"{port},1") == 2
    assert f"port {port} is in use" in capsys.readouterr().out
    assert not (tmp_path / "registry").exists()

    background.settings_path(tmp_path, "source").write_text("{}")  # left by a run that was killed
    assert background.down(tmp_path) == 0
    assert capsys.readouterr().out == ""
    assert not background.settings_path(tmp_path, "source").exists()
