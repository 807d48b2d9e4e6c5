"""What ``kafka-migrate <command> --help`` ends with: the exit codes the command can return and examples.

Each subcommand is made by ``subcommand``: its epilog lists its codes (meanings from ``options``) and one
or two examples that a unit test parses with the real parser, so that they cannot drift from the options.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from kafka_migration.cli.options import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED

EXIT_CODES_TITLE = "Exit codes:"
EXAMPLES_TITLE = "Examples:"

# What every command may return besides its own codes.
BAD_INPUT = "bad input or configuration, refused before anything was written (one line on stderr)"
FAILED = "any other failure (a cluster, the ledger, Spark); the message on stderr says what to do"
INTERRUPTED = "interrupted (Ctrl-C)"


def exit_codes(own: Mapping[int, str]) -> dict[int, str]:
    """A command's own codes, then the ones every command shares (a code of its own wins)."""
    shared = {EXIT_BAD_INPUT: BAD_INPUT, EXIT_FAILED: FAILED, EXIT_INTERRUPTED: INTERRUPTED}
    return dict(sorted({**shared, **own}.items()))


def epilog(codes: Mapping[int, str], examples: Sequence[str]) -> str:
    """The text after the options: ``Exit codes:`` then ``Examples:``; an example line starting with ``#``
    is its comment."""
    lines = [EXIT_CODES_TITLE]
    lines += [f"  {code:<3} {meaning}" for code, meaning in codes.items()]
    lines += ["", EXAMPLES_TITLE]
    lines += [f"  {line}" for line in examples]
    return "\n".join(lines)


def subcommand(
    sub: Any, name: str, help: str, codes: Mapping[int, str], examples: Sequence[str], **kwargs: Any
) -> argparse.ArgumentParser:
    """``sub.add_parser`` with the help text kept as written and the exit codes and examples at the end."""
    return sub.add_parser(
        name,
        help=help,
        description=kwargs.pop("description", help[:1].upper() + help[1:] + "."),
        epilog=epilog(exit_codes(codes), examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )


def example_commands(text: str) -> list[str]:
    """The example command lines of a help text (for the test that parses them): the lines after
    ``Examples:`` that start with ``kafka-migrate``."""
    _before, found, after = text.partition(EXAMPLES_TITLE)
    if not found:
        return []
    return [line.strip() for line in after.splitlines() if line.strip().startswith("kafka-migrate ")]
