"""The ``kafka-migrate`` argument parser: one subparser per command, each defined beside its handler."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from kafka_migration import __version__
from kafka_migration.cli import (
    access,
    checkpoints,
    cutover,
    failback,
    groups,
    history,
    offsets,
    package_env,
    report,
    run,
)
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
    "access": access.access,
}
_MODULES = (run, report, package_env, history, cutover, failback, checkpoints, offsets, groups, access)


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error is one line on stderr and exit 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        # Python 3.11's argparse names the choices but not the one meant: 'rnu' gets "did you mean 'run'?".
        typo = re.match(r"argument [^:]+: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if typo is not None:
            choices = re.findall(r"'([^']*)'", typo.group(2))
            meant = difflib.get_close_matches(typo.group(1), choices, n=1, cutoff=0.6)
            if meant:
                message += f"; did you mean {meant[0]!r}?"
        self.exit(EXIT_BAD_INPUT, f"error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """An unknown option is refused by the command it was given to, naming that command's help and the
        option meant when one is close (``--inclde``: did you mean --include?)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = _command_parser(self, parsed)
            message = f"unrecognized arguments: {' '.join(extras)}"
            options = [o for action in command._actions for o in action.option_strings]
            first = next((e.split("=", 1)[0] for e in extras if e.startswith("-")), None)
            meant = difflib.get_close_matches(first, options, n=1, cutoff=0.7) if first else []
            command.error(message + (f"; did you mean {meant[0]}?" if meant else ""))
        return parsed


def _command_parser(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser the arguments reached: ``kafka-migrate groups sync`` for ``groups sync ...``."""
    while True:
        chooser = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(parsed, chooser.dest, None) if chooser is not None else None
        if chooser is None or chosen not in chooser.choices:
            return parser
        parser = chooser.choices[chosen]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kafka-migrate", description="Bounded, verified Kafka cluster-to-cluster migration.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _MODULES:
        module.add_parser(sub)
    return parser
