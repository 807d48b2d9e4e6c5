"""``airflow <args>`` with the in-process Execution API initialised before the command runs.

``airflow dags test`` builds the Execution API its tasks talk to inside the first task: the FastAPI
app, then on its first request Cadwyn's versioned routers (about 4-5 s of CPU here). A deployed
Airflow's api-server does that once when it starts, not when a user triggers a run. The bench runs
``dags test`` through this module as well as plainly, so that a DAG run's trigger-to-summary can be
read both with and without that one-off cost; the command itself is Airflow's own, unchanged.

Usage: ``python -m harness.servers.airflow_api_up dags test kafka_migration -c '{...}'``
"""

from __future__ import annotations

import sys
import time


def initialise_execution_api() -> float:
    """Build the process's in-process Execution API and serve one request; seconds it took."""
    import httpx
    from airflow.sdk.execution_time.supervisor import in_process_api_server

    started = time.monotonic()
    api = in_process_api_server()  # cached for the process: the tasks of ``dags test`` use this one
    with httpx.Client(transport=api.transport, base_url="http://in-process.invalid") as client:
        response = client.get("/health")
    if response.status_code != 200:
        raise SystemExit(f"the in-process Execution API answered /health with {response.status_code}")
    return time.monotonic() - started


def main() -> None:
    seconds = initialise_execution_api()
    print(f"[airflow_api_up] Execution API initialised in {seconds:.1f} s", file=sys.stderr, flush=True)
    from airflow.__main__ import main as airflow_main

    sys.argv = ["airflow", *sys.argv[1:]]
    airflow_main()


if __name__ == "__main__":
    main()
