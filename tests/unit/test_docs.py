"""The documentation (docs/, mkdocs.yml, README.md) against the code it documents.

``make docs-check`` builds the site with ``mkdocs build --strict``: a broken link, an anchor
that does not exist or a page left out of the nav fails it. These tests check what a build
cannot: that the commands, options, Params, make targets and files the pages name are the ones
the code has, so a renamed option or a moved file cannot leave the docs behind.
"""

from __future__ import annotations

import argparse
import re
import runpy
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml

from kafka_migration.cli.parser import build_parser

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
DOCUMENTS = [REPO / "README.md", *PAGES]

_FENCE = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.S | re.M)
_INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
# Files of the repository as the pages name them (a leading folder of the repository, or a root file).
_REPO_PATH = re.compile(
    r"^(?:(?:kafka_migration|harness|tests|dags|plugins|spark_jobs|docker|docs|\.ci)/[\w./-]*"
    r"|Dockerfile|docker-compose\.yaml|Makefile|mkdocs\.yml|pyproject\.toml|requirements(?:-lock)?\.txt|\.env)$"
)
_LINK = re.compile(r"\]\((?!https?:|mailto:)([^)#\s]*)(?:#([^)\s]+))?\)")


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


def _fenced(text: str) -> list[str]:
    """Every line of every fenced code block, continuation lines (ending in a backslash) joined."""
    lines: list[str] = []
    for block in _FENCE.findall(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            lines.append(line.strip())
    return lines


def _inline(text: str) -> list[str]:
    """Every inline code span, outside fenced blocks, with its whitespace (line breaks) made single spaces."""
    return [" ".join(span.split()) for span in _INLINE.findall(_FENCE.sub("", text))]


def _commands(text: str) -> Iterator[str]:
    """Every kafka-migrate command line: in code blocks (after an optional `$ ` prompt or a path to the
    program), and in inline code unless elided with '...'."""
    for line in _fenced(text):
        found = re.match(r"^(?:\$ )?(?:\S*/)?(kafka-migrate(?: .*)?)$", line)
        if found:
            yield found.group(1)
    for span in _inline(text):
        at = span.find("kafka-migrate ")
        if at >= 0 and "..." not in span and (at == 0 or span[at - 1] in " /"):
            yield span[at:]


def _argv(command: str) -> list[str]:
    """A documented command as the shell would pass it: optional [...] groups kept (each option in one
    must exist too), <placeholders> given a value, # comments and what follows a pipe dropped."""
    command = re.sub(r"<[^>]+>", "X", command)
    command = re.sub(r"(?<!\S)\[|\](?!\S)", " ", command)
    words = shlex.split(command, comments=True)[1:]
    # What a pipe after it gets, or a command run after it (|| or &&), is not its argv.
    ends = [at for at, word in enumerate(words) if word in ("|", "||", "&&")]
    return words[: ends[0]] if ends else words


@cache
def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """'run', 'groups sync', ... -> the parser of that command."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and words:
            found[" ".join(words)] = parser
        for action in subs:
            for name, sub in action.choices.items():
                walk(sub, (*words, name))

    walk(build_parser(), ())
    return found


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """The long form of every option (the short one when there is no long one), --help left out."""
    return {
        max(a.option_strings, key=len)
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction)
    }


def _sections(text: str, level: str = "##") -> dict[str, str]:
    """Heading -> the text under it, up to the next heading of the same level or above."""
    parts = re.split(rf"^({level} .*)$", _FENCE.sub(lambda m: m.group(0).replace("#", "\0"), text), flags=re.M)
    return {parts[i][len(level) + 1 :].strip(): parts[i + 1].replace("\0", "#") for i in range(1, len(parts), 2)}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# -- the site ----------------------------------------------------------------------------------------


def test_every_page_is_in_the_nav_once_and_the_quick_start_comes_first() -> None:
    config = yaml.safe_load(_read(REPO / "mkdocs.yml"))
    nav = [next(iter(entry.values())) for entry in config["nav"]]
    assert nav[0] == "index.md"
    assert len(nav) == len(set(nav)), f"pages twice in the nav: {nav}"
    assert sorted(nav) == sorted(str(p.relative_to(DOCS)) for p in PAGES), (
        "mkdocs.yml's nav and the pages of docs/ differ: add a new page to the nav, or remove the entry"
    )


def test_where_a_reader_starts_lists_every_page() -> None:
    # The README's table of the docs and the quick start's "Where to go next" each name every page (issue 50: the
    # tutorial, the console, access control, lineage, maintenance and sizing were missing from them).
    pages = {p.name for p in PAGES} - {"index.md"}
    readme = set(re.findall(r"\]\(docs/([a-z-]+\.md)\)", _read(REPO / "README.md")))
    start = _read(DOCS / "index.md").split("## Where to go next", 1)[1]
    index = set(re.findall(r"\]\(([a-z-]+\.md)\)", start))
    assert pages - readme == set(), "pages the README's table leaves out"
    assert pages - index == set(), "pages docs/index.md's 'Where to go next' leaves out"


@pytest.mark.parametrize("path", [REPO / "README.md"], ids=_name)
def test_the_readme_links_to_pages_and_headings_that_exist(path: Path) -> None:
    """The site's strict build checks the links between pages; the README is not part of the site. A heading's
    anchor is its slug, or the id it gives itself (attr_list: `### Heading {#id}`)."""
    from markdown.extensions.toc import slugify

    def anchor_of(heading: str) -> str:
        given = re.search(r"\{:?\s*#([\w-]+)[^}]*\}\s*$", heading)
        return given.group(1) if given else slugify(heading, "-")

    broken = []
    for target, anchor in _LINK.findall(_read(path)):
        if not target.startswith("docs/"):
            continue
        page = REPO / target
        if not page.exists():
            broken.append(target)
        elif anchor:
            headings = re.findall(r"^#+ (.*)$", _FENCE.sub("", _read(page)), flags=re.M)
            if anchor not in {anchor_of(h) for h in headings}:
                broken.append(f"{target}#{anchor}")
    assert not broken, f"{_name(path)} links to pages or headings that do not exist: {broken}"


# -- commands, options and targets -------------------------------------------------------------------


@pytest.mark.parametrize("path", DOCUMENTS, ids=_name)
def test_every_documented_command_parses(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = []
    for command in _commands(_read(path)):
        try:
            build_parser().parse_args(_argv(command))
        except SystemExit as exc:
            if exc.code == 0:  # --help, --version
                continue
            refused.append(f"{command}\n    {capsys.readouterr().err.strip()}")
    assert not refused, f"{_name(path)} shows commands kafka-migrate refuses:\n" + "\n".join(refused)


def test_the_docs_show_commands_at_all() -> None:
    """The extraction above finds what it should (a test that finds nothing cannot fail)."""
    found = [c for page in PAGES for c in _commands(_read(page))]
    assert len(found) > 20
    commands = {" ".join(_argv(c)[:2]) for c in found}
    for expected in ("run --source", "groups sync", "offsets translate", "checkpoints forget", "report verify"):
        assert expected in commands


def test_the_cli_reference_documents_every_option_of_every_command() -> None:
    sections = _sections(_read(DOCS / "cli.md"))
    problems = []
    for command, parser in _subcommands().items():
        heading = next((h for h in sections if re.search(rf"(?<![\w-]){re.escape(command)}(?![\w-])", h)), None)
        if heading is None:
            problems.append(f"no section of cli.md for '{command}'")
            continue
        text = sections[heading]
        known = _options(parser)
        problems += [f"{command}: {o} not documented" for o in sorted(known) if not re.search(rf"`{o}[` ]", text)]
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))
        problems += [f"{command}: the section names {o}, which the command does not have" for o in named - known]
    assert not problems, "docs/cli.md and the parser differ:\n" + "\n".join(problems)


def test_every_make_target_named_exists() -> None:
    targets = set(re.findall(r"^([a-z0-9-]+):", _read(REPO / "Makefile"), flags=re.M))
    missing = []
    for path in DOCUMENTS:
        text = _read(path)
        for code in (*_fenced(text), *_inline(text)):
            missing += [f"{_name(path)}: make {t}" for t in re.findall(r"(?<![\w-])make ([a-z][a-z0-9-]*)", code)]
    missing = [m for m in missing if m.rsplit(" ", 1)[1] not in targets]
    assert not missing, f"make targets that the Makefile does not have: {missing}"


def test_every_file_named_exists() -> None:
    missing = []
    for path in DOCUMENTS:
        for span in _inline(_read(path)):
            for word in span.split():
                word = word.strip("(),;:")
                if _REPO_PATH.match(word) and not (REPO / word).exists():
                    missing.append(f"{_name(path)}: {word}")
    assert not missing, f"files and folders named in the docs that the repository does not have: {missing}"


def test_every_python_module_named_exists() -> None:
    import importlib.util

    named = set()
    for path in DOCUMENTS:
        text = _read(path)
        for code in (*_fenced(text), *_inline(text)):
            named |= {(_name(path), m) for m in re.findall(r"python -m ([\w.]+)", code)}
    assert {m for _, m in named} >= {"harness.servers.spark_cluster", "kafka_migration.cli"}
    missing = [f"{page}: {module}" for page, module in sorted(named) if importlib.util.find_spec(module) is None]
    assert not missing, f"modules named in the docs that do not exist: {missing}"


# -- Airflow -----------------------------------------------------------------------------------------


@cache
def _params(dag_id: str) -> dict[str, object]:
    """Param name -> default, from the DAG as its file builds it (no metadata database needed)."""
    dag = runpy.run_path(str(REPO / "dags" / f"{dag_id}_dag.py"))["dag"]
    return {name: dag.params.get_param(name).value for name in dag.params}


def _shown(default: object) -> str:
    if default is None or default == "":
        return "empty"
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, str):
        return f"`{default}`"
    return str(default)


def test_the_airflow_page_lists_every_param_of_kafka_migration_with_its_default() -> None:
    text = _sections(_read(DOCS / "airflow.md"))["kafka_migration"]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", text, flags=re.M))
    expected = {name: _shown(default) for name, default in _params("kafka_migration").items()}
    assert rows == expected


def test_the_nightly_sync_takes_the_params_of_kafka_migration_as_the_page_says() -> None:
    assert "Its Params are those\nof `kafka_migration`" in _sections(_read(DOCS / "airflow.md"))["kafka_nightly_sync"]
    assert _params("kafka_nightly_sync") == _params("kafka_migration")  # with airflow.cfg's defaults unset


@pytest.mark.parametrize("dag_id", ["kafka_cutover", "kafka_failback"])
def test_the_airflow_page_names_every_param_of_the_cutover_dags(dag_id: str) -> None:
    text = _sections(_read(DOCS / "airflow.md"))["kafka_cutover and kafka_failback"]
    paragraph = next(p for p in text.split("\n\n") if p.startswith(f"`{dag_id}`"))
    named = set(re.findall(r"`(\w+)`", paragraph.split("Params:", 1)[1].split(".", 1)[0]))
    assert named == set(_params(dag_id))


@pytest.mark.parametrize("dag_id", ["kafka_cutover", "kafka_failback"])
def test_the_runbook_names_only_params_the_dag_has(dag_id: str) -> None:
    text = " ".join(_read(DOCS / "cutover.md").split())
    listed = re.search(rf"trigger the DAG `{dag_id}` \(Params ([^)]*)\)", text)
    assert listed, f"cutover.md no longer says which Params {dag_id} takes"
    assert set(re.findall(r"`(\w+)`", listed.group(1))) <= set(_params(dag_id))


def test_the_airflow_page_documents_every_connection_and_variable_the_code_reads() -> None:
    text = _read(DOCS / "airflow.md")
    for name in ("kafka_source", "kafka_target", "spark_default", "kafka_migration_ledger"):
        assert f"`{name}`" in text
    code = "\n".join(_read(p) for p in (REPO / "kafka_migration" / "airflow").glob("*.py"))
    variables = set(re.findall(r"^\w+_VARIABLE = \"(\w+)\"", code, flags=re.M))
    assert variables, "no Airflow Variable name found: the pattern above no longer matches the code"
    assert {v for v in variables if f"`{v}`" not in text} == set()
