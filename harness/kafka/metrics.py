"""A broker's own request counts, read over JMX with Apache Kafka's JmxTool (org.apache.kafka.tools.JmxTool).

What every client sent to a cluster, counted where nothing is missed: the broker's
``kafka.network:type=RequestMetrics`` meters, per request type (Produce, Fetch, Metadata,
ListOffsets, CreateTopics, ...), summed over the API versions, with the broker's total time
spent on each type (count x mean of its TotalTimeMs histogram). The clients are not touched, so
the product pays nothing for being counted. For clusters started with ``ClusterSpec(jmx=True)``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from typing import Any

from harness.kafka import jars

REQUESTS = "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=*,version=*"
TOTAL_TIME = "kafka.network:type=RequestMetrics,name=TotalTimeMs,request=*"
_REQUEST = re.compile(r"request=([A-Za-z]+)")
# Requests of the cluster's own broker and controller to each other (the KRaft control plane): not a client's;
# and the meters that count a type again.
INTERNAL = frozenset(
    {
        "AddRaftVoter",
        "AllocateProducerIds",
        "AlterPartition",
        "AssignReplicasToDirs",
        "BeginQuorumEpoch",
        "BrokerHeartbeat",
        "BrokerRegistration",
        "ControllerRegistration",
        "EndQuorumEpoch",
        "Envelope",
        "FetchConsumer",  # FetchConsumer and FetchFollower: the Fetch requests again, by who sent them
        "FetchFollower",
        "FetchSnapshot",
        "RemoveRaftVoter",
        "UnregisterBroker",
        "UpdateRaftVoter",
        "Vote",
    }
)


def jmx_url(port: int) -> str:
    return f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{port}/jmxrmi"


def read(port: int, object_names: list[str], attributes: str, timeout: float = 120.0) -> dict[str, float]:
    """One JmxTool sample: ``{"<object name>:<attribute>": value}`` for every MBean matching ``object_names``."""
    command = [
        *jars.java_command("org.apache.kafka.tools.JmxTool", heap_mb=128),
        "--jmx-url",
        jmx_url(port),
        *(arg for name in object_names for arg in ("--object-name", name)),
        "--attributes",
        attributes,
        "--one-time",
        "true",
        "--report-format",
        "csv",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"JmxTool on port {port} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    out: dict[str, float] = {}
    for line in done.stdout.splitlines():  # one `<object name>:<attribute>,"<value>"` line per attribute
        key, _, value = line.rpartition(",")
        if key and key != "time":
            try:
                out[key] = float(value.strip('"'))
            except ValueError:
                continue
    return out


def request_totals(port: int) -> dict[str, dict[str, float]]:
    """Per request type of clients: ``{"count": requests since the broker started, "ms": broker time spent on
    them}`` (the control plane's own requests, INTERNAL, left out)."""
    sample = read(port, [REQUESTS, TOTAL_TIME], "Count,Mean")
    totals: dict[str, dict[str, float]] = {}
    for key, value in sample.items():
        found = _REQUEST.search(key)
        if found and found.group(1) not in INTERNAL and "name=RequestsPerSec" in key and key.endswith(":Count"):
            entry = totals.setdefault(found.group(1), {"count": 0.0, "ms": 0.0})
            entry["count"] += value
    for kind, entry in totals.items():  # TotalTimeMs: count x mean (Yammer's mean is sum / count)
        time_key = f"kafka.network:type=RequestMetrics,name=TotalTimeMs,request={kind}"
        entry["ms"] = round(sample.get(f"{time_key}:Count", 0.0) * sample.get(f"{time_key}:Mean", 0.0), 1)
    return totals


def difference(after: Mapping[str, Mapping[str, float]], before: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """What happened between two samples, per request type with any request (most frequent first)."""
    out = {}
    for kind, now in after.items():
        then = before.get(kind, {})
        count = int(now.get("count", 0) - then.get("count", 0))
        if count > 0:
            out[kind] = {"count": count, "ms": round(now.get("ms", 0.0) - then.get("ms", 0.0), 1)}
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["count"]))
