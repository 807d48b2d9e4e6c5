"""The Spark operator against the newest release of apache-airflow-providers-apache-spark on PyPI.

The lock pins the provider; a later release must not break the DAGs (issue 38). This installs the newest
release into a throwaway directory, puts it before the installed one, and runs the operator's tests
(tests/unit/airflow/test_operators.py: both submit paths, the one through the provider's public hook with a
spark-submit stand-in) against it. It needs the package registry: without it, it fails and says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PROVIDER = "apache-airflow-providers-apache-spark"

# Importing airflow imports every installed provider (its providers manager), and Airflow's package puts its
# own directory first on its __path__: a finder placed before the others, before anything is imported, takes
# the provider's package from the newest release's directory (and its modules follow their package).
RUN = """
import importlib.machinery
import sys

class NewestRelease:
    def find_spec(self, name, path=None, target=None):
        if name == "airflow.providers.apache.spark":
            return importlib.machinery.PathFinder.find_spec(name, [{apache_dir!r}])
        return None

sys.meta_path.insert(0, NewestRelease())
import airflow.providers.apache.spark as provider
print("PROVIDER", provider.__version__, provider.__file__, flush=True)
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests/unit/airflow/test_operators.py"]))
"""


def test_the_operator_runs_with_the_newest_spark_provider(tmp_path: Path) -> None:
    target = tmp_path / "provider"
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check",
               "--retries", "2", "--timeout", "20", "--target", str(target), PROVIDER]  # fmt: skip
    env = {**os.environ, "PIP_FIND_LINKS": ""}  # from the registry (or the PIP_INDEX_URL mirror), no local wheel
    try:
        installed = subprocess.run(command, check=False, capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        installed = None
    if installed is None or installed.returncode != 0:
        output = "timed out after 300 s" if installed is None else (installed.stdout + installed.stderr)[-2000:]
        pytest.fail(
            f"Cannot install the newest {PROVIDER} from the package registry: this test needs it (network, or "
            f"PIP_INDEX_URL for a mirror). pip said:\n{output}",
            pytrace=False,
        )
    (dist,) = target.glob("apache_airflow_providers_apache_spark-*.dist-info")
    version = dist.name.removesuffix(".dist-info").split("-")[1]

    script = RUN.format(apache_dir=str(target / "airflow" / "providers" / "apache"))
    run = subprocess.run(
        [sys.executable, "-c", script], check=False, cwd=REPO, capture_output=True, text=True, timeout=600
    )
    output = run.stdout + run.stderr
    assert f"PROVIDER {version} {target}" in run.stdout, output[-3000:]  # the newest release was the one used
    assert run.returncode == 0, f"The operator's tests fail with {PROVIDER} {version}:\n{output[-6000:]}"
    assert " passed" in run.stdout and " failed" not in run.stdout
