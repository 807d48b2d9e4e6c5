"""``python -m harness.kafka``: fetch the jar set, or start clusters by hand.

    python -m harness.kafka jars                 # make kafka-jars: fetch once, then a no-op
    python -m harness.kafka up                   # make clusters: a source and target in the background
    python -m harness.kafka down                 # make clusters-stop
    python -m harness.kafka down --which target  # make clusters-stop WHICH=target: only the target, cleanly
    python -m harness.kafka up --which target    # make clusters WHICH=target: the target again, on its data
    python -m harness.kafka start                # a PLAINTEXT source and target until Ctrl-C
    python -m harness.kafka start --kind sasl    # SASL_SSL/SCRAM (also: plaintext, mtls, acl)
    python -m harness.kafka start --names a b c  # any number of clusters, started in parallel

``up`` starts the source on 127.0.0.1:19092 and the target on 127.0.0.1:29092 (``--ports`` to change them), so
that the tutorial's commands work as written; it returns once both serve, with their addresses (and, for the
secured kinds, the settings files to pass as --source-config / --target-config) in ``.clusters/``. With
``--kind acl`` it then seeds the source with users, ACL bindings and client quotas to move (harness.data.access).
A broker that ends leaves the other running, and ``.clusters/clusters.log`` says which ended, when, with what
exit code, and how to start it again (harness.kafka.supervisor).

Prints each cluster's bootstrap address and the file of its librdkafka settings (JSON, one line each; the
settings, which may hold a password, only in that file, readable by its owner), then waits; Ctrl-C stops the
brokers and removes their folder (unless --dir was given).
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

from harness.kafka import background, fetch
from harness.kafka.background import STATE
from harness.kafka.node import ClusterSpec, kafka_clusters
from harness.kafka.security import PLAINTEXT, SaslSsl, ScramUser, Security, Tls, write_private
from harness.kafka.supervisor import Doorbell, supervise

KINDS = ("plaintext", "mtls", "sasl", "acl")
DEFAULT_PORTS = "19092,29092"


def security_of(kind: str, directory: Path) -> Security:
    if kind == "plaintext":
        return PLAINTEXT
    from harness.kafka.certs import make_pki

    pki = make_pki(directory / "pki")
    if kind == "mtls":
        return Tls(pki)
    return SaslSsl(pki, users=(ScramUser("migrator", "migrator-secret"),), acls=kind == "acl")


def _ports(text: str | None, count: int) -> list[int | None]:
    if not text:
        return [None] * count
    ports = [int(p) for p in text.split(",")]
    if len(ports) != count:
        raise SystemExit(f"--ports gives {len(ports)} ports for {count} clusters")
    return ports  # type: ignore[return-value]


def _start(args: argparse.Namespace) -> int:
    fetch.ensure()
    directory = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp(prefix="kafka-clusters-"))
    directory.mkdir(parents=True, exist_ok=True)
    security = security_of(args.kind, directory)
    began = time.monotonic()
    specs = [
        ClusterSpec(n, security, port=p) for n, p in zip(args.names, _ports(args.ports, len(args.names)), strict=True)
    ]
    doorbell = Doorbell()  # before the clusters serve: a request's SIGUSR1 must never end this process
    try:
        with kafka_clusters(*specs, directory=directory) as clusters:
            print(f"{len(clusters)} {args.kind} cluster(s) ready in {time.monotonic() - began:.1f} s", flush=True)
            for cluster in clusters:
                # The settings may hold a password or a key's passphrase: they go to a file of the owner's only,
                # and the output (make clusters' log) names that file.
                settings = write_private(directory / f"{cluster.name}.json", json.dumps(cluster.client_config()))
                line = {"name": cluster.name, "cluster_id": cluster.cluster_id, "bootstrap.servers": cluster.bootstrap}
                print(json.dumps({**line, "settings": str(settings)}), flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
                supervise(clusters, directory, args.again, doorbell)
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
    start.add_argument("--ports", help="fixed client ports, one per cluster, comma-separated (default: free ones)")
    start.add_argument("--again", help="the command that starts a cluster again, for the log ({name}: the cluster)")
    up = commands.add_parser(
        "up", help="start a source and a target in the background and return once both serve (make clusters)"
    )
    up.add_argument("--kind", choices=KINDS, default="plaintext", help="plaintext (default), mtls, sasl or acl")
    up.add_argument("--ports", default=DEFAULT_PORTS, help=f"the source's and target's ports (default {DEFAULT_PORTS})")
    up.add_argument("--dir", default=str(STATE), help=f"their logs, data and settings files (default {STATE})")
    up.add_argument(
        "--which", help="start only this cluster (source or target) again, on its data (make clusters WHICH=)"
    )
    down = commands.add_parser("down", help="stop the clusters 'up' started (make clusters-stop)")
    down.add_argument("--dir", default=str(STATE), help=f"where 'up' put them (default {STATE})")
    down.add_argument("--which", help="stop only this cluster (source or target), cleanly; the other keeps running")
    args = parser.parse_args(argv)
    if args.command == "jars":
        fetch.ensure()
        return 0
    if args.command == "up":
        return background.up(Path(args.dir), args.kind, args.ports, which=args.which)
    if args.command == "down":
        return background.down(Path(args.dir), which=args.which)
    return _start(args)


if __name__ == "__main__":
    sys.exit(main())
