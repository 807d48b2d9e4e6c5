"""``python -m harness.registry``: fetch Apicurio Registry, or start registries by hand.

    python -m harness.registry fetch                  # make registry: fetch once, then a no-op
    python -m harness.registry up                     # make clusters REGISTRY=1: a source and target registry
    python -m harness.registry down                   # make clusters-stop
    python -m harness.registry start                  # a source and target registry until Ctrl-C
    python -m harness.registry start --names a b c    # any number, started in parallel

``up`` starts the source's registry on 127.0.0.1:18081 and the target's on 127.0.0.1:28081 (``--ports`` to change
them) in the background, beside the clusters of ``make clusters``; it returns once both answer, with their
settings (``{"url": ...}``, what confluent-kafka's SchemaRegistryClient takes) in ``.clusters/``.

``start`` prints each registry's name and Confluent-compatible URL (JSON, one line each), then waits; Ctrl-C (or
SIGTERM, or removing ``--dir``) stops them, and the folder is removed unless --dir was given.
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

from harness.registry import fetch
from harness.registry.background import READY_LINE
from harness.registry.server import RegistrySpec, registries

STATE = Path(".clusters")
DEFAULT_PORTS = "18081,28081"


def _ports(text: str | None, count: int) -> list[int | None]:
    if not text:
        return [None] * count
    ports = [int(p) for p in text.split(",")]
    if len(ports) != count:
        raise SystemExit(f"--ports gives {len(ports)} ports for {count} registries")
    return list(ports)


def _start(args: argparse.Namespace) -> int:
    fetch.ensure()
    directory = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp(prefix="registries-"))
    directory.mkdir(parents=True, exist_ok=True)
    specs = [RegistrySpec(n, port=p) for n, p in zip(args.names, _ports(args.ports, len(args.names)), strict=True)]
    began = time.monotonic()
    try:
        with registries(*specs, directory=directory) as started:
            print(
                f"{len(started)} registr{'y' if len(started) == 1 else 'ies'} ready in {time.monotonic() - began:.1f} s"
            )
            for registry in started:
                print(json.dumps({"name": registry.name, **registry.client_config()}), flush=True)
            print(f"{READY_LINE}{directory}; Ctrl-C stops them", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
                while directory.is_dir() and all(registry.running() for registry in started):
                    time.sleep(0.5)
    finally:
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.registry", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="fetch the pinned Apicurio Registry with Maven (once) and record its AOT cache")
    start = commands.add_parser("start", help="start registries until Ctrl-C")
    start.add_argument("--names", nargs="+", default=["source", "target"])
    start.add_argument("--dir", help="keep their logs here; removing it stops them (default: a temporary folder)")
    start.add_argument("--ports", help="fixed HTTP ports, one per registry, comma-separated (default: free ones)")
    up = commands.add_parser("up", help="start a source and a target registry in the background (make clusters)")
    up.add_argument("--ports", default=DEFAULT_PORTS, help=f"the source's and target's ports (default {DEFAULT_PORTS})")
    up.add_argument("--dir", default=str(STATE), help=f"where their settings files go (default {STATE})")
    down = commands.add_parser("down", help="stop the registries 'up' started (make clusters-stop)")
    down.add_argument("--dir", default=str(STATE), help=f"where 'up' put them (default {STATE})")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch.ensure()
        return 0
    if args.command == "up":
        from harness.registry.background import up as start_up

        return start_up(Path(args.dir), args.ports)
    if args.command == "down":
        from harness.registry.background import down as stop

        return stop(Path(args.dir))
    return _start(args)


if __name__ == "__main__":
    sys.exit(main())
