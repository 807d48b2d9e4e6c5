"""The ``kafka-migrate`` argument parser: one subparser per command, each defined beside its handler."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from kafka_migration import __version__
from kafka_migration.cli import checkpoints, cutover, failback, groups, history, offsets, package_env, report, run
from kafka_migration.cli.options import EXIT_BAD_INPUT

# In the order ``kafka-migrate --help`` lists them.
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": run.run,
    "report": report.report,
    "package-env": package_env.package_env,
    "history": history.history,
    "cutover": cutover.cutover,
    "failback": failback.failback,
    "checkpoints": checkpoints.checkpoints,
    "offsets": offsets.offsets,
    "groups": groups.groups,
}
_MODULES = (run, report, package_env, history, cutover, failback, checkpoints, offsets, groups)


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error is one line on stderr and exit 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kafka-migrate", description="Bounded, verified Kafka cluster-to-cluster migration.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _MODULES:
        module.add_parser(sub)
    return parser
