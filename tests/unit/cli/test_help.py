"""Every ``kafka-migrate`` command explains itself: each option has help, each ``--help`` ends with the exit
codes the command returns and examples, and every example parses with the real parser (so none can rot)."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator

import pytest

from kafka_migration.cli.helptext import EXAMPLES_TITLE, EXIT_CODES_TITLE, example_commands, exit_codes
from kafka_migration.cli.options import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_MISMATCH, EXIT_OK
from kafka_migration.cli.parser import build_parser

KNOWN_CODES = {EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED}


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield (*path, name)
                yield from _subparsers(child, (*path, name))


def _parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


COMMANDS = list(_subparsers(build_parser()))
IDS = [" ".join(p) for p in COMMANDS]


def test_the_walk_finds_every_command() -> None:
    assert {"run", "history", "report", "groups sync", "groups show", "cutover", "failback"} <= set(IDS)
    assert {"checkpoints forget", "offsets translate", "package-env"} <= set(IDS)


@pytest.mark.parametrize("path", COMMANDS, ids=IDS)
def test_every_option_has_help(path: tuple[str, ...]) -> None:
    parser = _parser_of(path)
    missing = [
        "/".join(a.option_strings) or a.dest
        for a in parser._actions
        if not isinstance(a, argparse._SubParsersAction) and not (a.help and a.help.strip())
    ]
    assert not missing, f"kafka-migrate {' '.join(path)}: no help for {missing}"


@pytest.mark.parametrize("path", COMMANDS, ids=IDS)
def test_help_ends_with_exit_codes_then_examples(path: tuple[str, ...]) -> None:
    text = _parser_of(path).format_help()
    assert EXIT_CODES_TITLE in text and EXAMPLES_TITLE in text
    codes_at, examples_at = text.index(EXIT_CODES_TITLE), text.index(EXAMPLES_TITLE)
    assert codes_at < examples_at, "exit codes come before the examples"
    assert text.rstrip().splitlines()[-1].strip().startswith(("kafka-migrate ", "#")), "the examples end the help"
    listed = {int(c) for c in re.findall(r"^\s+(\d+)\s+\S", text[codes_at:examples_at], re.MULTILINE)}
    assert {EXIT_OK, EXIT_BAD_INPUT, EXIT_FAILED} <= listed <= KNOWN_CODES


@pytest.mark.parametrize("path", COMMANDS, ids=IDS)
def test_every_example_parses_as_the_command_it_documents(path: tuple[str, ...]) -> None:
    examples = example_commands(_parser_of(path).format_help())
    assert 1 <= len(examples) <= 3
    for line in examples:
        argv = shlex.split(line)[1:]
        assert argv[: len(path)] == list(path), f"{line!r} is not an example of {' '.join(path)}"
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"example {line!r} does not parse (exit {exc.code})")


def test_commands_that_print_results_take_output_json() -> None:
    for path in [("run",), ("history",), ("report",), ("groups", "sync"), ("groups", "show"), ("cutover",)]:
        options = {o for a in _parser_of(path)._actions for o in a.option_strings}
        assert "--output" in options, path
    args = build_parser().parse_args(["failback", "--cutover", "c", "--output", "json"])
    assert args.output == "json"
    assert build_parser().parse_args(["history"]).output == "text"


def test_output_takes_only_text_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["history", "--output", "yaml"])
    assert exc.value.code == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "invalid choice: 'yaml'" in err


def test_a_command_code_replaces_the_shared_meaning() -> None:
    codes = exit_codes({EXIT_OK: "done", EXIT_BAD_INPUT: "refused"})
    assert list(codes) == [EXIT_OK, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED]
    assert codes[EXIT_BAD_INPUT] == "refused"


def test_example_commands_are_the_lines_after_the_examples_title() -> None:
    text = "usage\n  kafka-migrate not-this\nExamples:\n  # a comment\n  kafka-migrate run --dry-run\n"
    assert example_commands(text) == ["kafka-migrate run --dry-run"]


@pytest.mark.parametrize("path", COMMANDS, ids=IDS)
def test_usage_names_each_argument_once(path: tuple[str, ...]) -> None:
    # argparse writes an nargs="+" metavar as "X [X ...]": for report's "RUN_ID | verify FILE" that garbled the line.
    usage = " ".join(_parser_of(path).format_usage().split())
    assert "RUN_ID | verify FILE [" not in usage and usage.count("RUN_ID") <= 1, usage
    if path == ("report",):
        assert usage.endswith("[--output {text,json}] (RUN_ID | verify FILE)"), usage
