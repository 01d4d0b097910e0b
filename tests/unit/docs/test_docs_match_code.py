"""The documentation names only what exists: every `orchestra` command and option it shows, every
repository file it cites; docs/cli.md documents every command; session ids look as they really do."""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.main import get_command

from orchestra_cli.app import app
from tests.unit.docs.doc_texts import DOCS, ROOT, code_spans, command_lines, prose

CLI: Any = get_command(app)  # typer's own click: groups are the commands with `commands`
SAME_AS_RUN = "same options as run"


def is_group(cmd: Any) -> bool:
    return hasattr(cmd, "commands")


def command(words: list[str]) -> tuple[Any, list[str]]:
    """The command `orchestra words...` names (None when it names none) and the words after it."""
    current = CLI
    rest = list(words)
    while is_group(current) and rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
        found = current.commands.get(rest[0])
        if found is None:
            return None, rest
        current, rest = found, rest[1:]
    return (None if current is CLI and words else current), rest


def option_names(cmd: Any) -> set[str]:
    names = {"--help", "-h"}
    for param in cmd.params:
        if param.param_type_name != "option":
            continue
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


def options_in(segment: str) -> list[str]:
    return [match.group(1) for match in re.finditer(r"(?:^|[\s\[|(])(--?[a-zA-Z][\w-]*)", segment)]


def invocations() -> list[Any]:
    return [pytest.param(doc, line, id=f"{doc.name}:{line}") for doc in DOCS for line in command_lines(doc)]


@pytest.mark.parametrize(("doc", "segment"), invocations())
def test_every_orchestra_command_and_option_in_the_docs_exists(doc: Any, segment: str) -> None:
    words = segment.split()[1:]
    if not words or words[0].startswith("-"):  # `orchestra --version`: the root's own options
        unknown = [opt for opt in options_in(segment) if opt not in option_names(CLI)]
        assert not unknown, f"{doc.name}: `{segment}`: no such option {unknown}"
        return
    cmd, _ = command(words)
    assert cmd is not None, f"{doc.name}: `{segment}` names no orchestra command"
    if is_group(cmd):
        return
    known = option_names(cmd)
    if SAME_AS_RUN in segment:
        known |= option_names(CLI.commands["run"])
    unknown = [opt for opt in options_in(segment) if opt not in known]
    assert not unknown, f"{doc.name}: `{segment}`: `orchestra {cmd.name}` has no option {unknown}"


def test_the_docs_show_some_commands() -> None:
    assert len(invocations()) > 50


def test_cli_md_documents_every_command() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^## `orchestra ([a-z ]+)`", text, flags=re.MULTILINE))
    expected = set()
    for name, cmd in CLI.commands.items():
        if is_group(cmd):
            expected |= {f"{name} {sub}" for sub in cmd.commands}
        else:
            expected.add(name)
    assert headings == expected


def test_replay_and_resume_take_every_option_run_does() -> None:
    run = option_names(CLI.commands["run"])
    for name in ("replay", "resume"):
        missing = run - option_names(CLI.commands[name])
        assert not missing, f"orchestra {name} lacks {sorted(missing)}"


_PATH = re.compile(
    r"^(?:orchestra_core|orchestra_adapters|orchestra_cli|tests|bench|examples|docs)/[\w./-]*$"
)
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
WRITTEN = {"REVIEW.md"}  # what the example pipelines write in their repositories, not documents of this one


def cited_paths() -> list[Any]:
    cited = []
    for doc in DOCS:
        for span in code_spans(doc):
            for token in span.split():
                token = token.rstrip(".,:;")
                if _PATH.match(token):
                    cited.append((doc, token))
        for line in prose(doc).splitlines():  # README.md, DESIGN.md: a document of this repository
            if "repository)" not in line:
                cited += [
                    (doc, name) for name in re.findall(r"(?<![/\w])([A-Z][A-Z_]+\.md)\b", line) if name not in WRITTEN
                ]
        cited += [(doc, link) for link in _LINK.findall(prose(doc)) if "://" not in link]
    return [pytest.param(doc, path, id=f"{doc.name}:{path}") for doc, path in cited]


@pytest.mark.parametrize(("doc", "path"), cited_paths())
def test_every_file_the_docs_cite_is_in_the_repository(doc: Any, path: str) -> None:
    candidates = [ROOT / path, doc.parent / path, ROOT / "docs" / path]
    assert any(candidate.exists() for candidate in candidates), (
        f"{doc.name} cites {path}, which does not exist"
    )


def test_session_ids_look_as_they_really_do() -> None:
    uuid = re.compile(
        r"Orchestra-Session: \S*[0-9a-f]{8}-[0-9a-f]{4}|session[ -]id[^.\n]*\b[0-9a-f]{8}-[0-9a-f]{4}-"
    )
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        assert not uuid.search(text), f"{doc.name} shows a UUID session id"
        for branch in re.findall(r"orchestra/[\w-]+/([\w-]+)", text):
            assert branch.isdigit() or branch in ("abandoned",) or not re.fullmatch(r"[0-9a-f]{8}", branch), (
                f"{doc.name}: session branch orchestra/.../{branch} (session ids are small integers)"
            )
