"""``python -m harness.kafka``: fetch the jar set, or start clusters by hand.

    python -m harness.kafka jars                 # make kafka-jars: fetch once, then a no-op
    python -m harness.kafka start                # a PLAINTEXT source and target until Ctrl-C
    python -m harness.kafka start --kind sasl    # SASL_SSL/SCRAM (also: plaintext, mtls, acl)
    python -m harness.kafka start --names a b c  # any number of clusters, started in parallel

Prints each cluster's bootstrap address and librdkafka settings (JSON, one line each), then
waits; Ctrl-C stops the brokers and removes their folder (unless --dir was given).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from harness.kafka import fetch
from harness.kafka.node import ClusterSpec, kafka_clusters
from harness.kafka.security import PLAINTEXT, SaslSsl, ScramUser, Security, Tls

KINDS = ("plaintext", "mtls", "sasl", "acl")


def security_of(kind: str, directory: Path) -> Security:
    if kind == "plaintext":
        return PLAINTEXT
    from harness.kafka.certs import make_pki

    pki = make_pki(directory / "pki")
    if kind == "mtls":
        return Tls(pki)
    return SaslSsl(pki, users=(ScramUser("migrator", "migrator-secret"),), acls=kind == "acl")


def _start(args: argparse.Namespace) -> int:
    fetch.ensure()
    directory = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kafka-clusters-"))
    directory.mkdir(parents=True, exist_ok=True)
    security = security_of(args.kind, directory)
    began = time.monotonic()
    try:
        with kafka_clusters(*(ClusterSpec(name, security) for name in args.names), directory=directory) as clusters:
            print(f"{len(clusters)} {args.kind} cluster(s) ready in {time.monotonic() - began:.1f} s", flush=True)
            for cluster in clusters:
                line = {"name": cluster.name, "cluster_id": cluster.cluster_id, **cluster.client_config()}
                print(json.dumps(line), flush=True)
            print(f"logs and data in {directory}; Ctrl-C stops them", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
                while all(c.process is not None and c.process.poll() is None for c in clusters):
                    time.sleep(0.5)
    finally:
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.kafka", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("jars", help="fetch the pinned jar set with Maven (once) and record its class archive")
    start = commands.add_parser("start", help="start clusters until Ctrl-C")
    start.add_argument("--kind", choices=KINDS, default="plaintext")
    start.add_argument("--names", nargs="+", default=["source", "target"])
    start.add_argument("--dir", help="keep logs and data here (default: a temporary folder, removed)")
    args = parser.parse_args(argv)
    if args.command == "jars":
        fetch.ensure()
        return 0
    return _start(args)


if __name__ == "__main__":
    sys.exit(main())
