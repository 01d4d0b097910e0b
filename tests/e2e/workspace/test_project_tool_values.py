"""An agent's values for project tools through `orchestra run`: never code, never an option, however the
author wrote the template (quotes around a placeholder, placeholders side by side, several commands)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.workspace.attack_projects import attack_project, call, commit_all, run_attack
from tests.support.orchestra_project import orchestra

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("template", ['echo "{msg}"', "echo '{msg}'", 'git commit -m "Fix: {msg}"'])
def test_a_placeholder_inside_quotes_is_refused_when_the_configuration_is_read(tmp_path: Path, template: str) -> None:
    # `"{msg}"` with msg=$(touch ...) was run as `echo "'$(touch ...)'"`: the shell ran the value
    root = attack_project(
        tmp_path, {}, [call("say", msg=f"$(touch {tmp_path / 'PWNED'})")],
        tools={"say": {"command": template, "parameters": {"msg": {}}}},
    )  # fmt: skip
    ran = orchestra("run", "pipeline.dot", "--json", cwd=root)
    assert ran.returncode == 2, ran.stderr
    error = json.loads(ran.stdout)["error"]
    assert "workspace.tools.project.say.command: {msg} stands inside" in error["message"]
    assert error["key"] == "workspace.tools.project.say.command" and error["line"] > 0
    assert not (tmp_path / "PWNED").exists()


def test_a_value_that_begins_a_word_is_no_option_in_any_template(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    tools = {
        "side": {"command": "git log -1 {a}{rev}", "parameters": {"a": {}, "rev": {}}},
        "two": {"command": "git diff -- {path}; git log -1 {rev}", "parameters": {"path": {}, "rev": {}}},
        "grep": {"command": "git grep -n -- {pattern}", "parameters": {"pattern": {}}},
    }
    calls = [
        call("side", a="", rev=f"--output={out / 'side'}"),
        call("two", path="x", rev=f"--output={out / 'two'}"),
        call("grep", pattern="-hello"),
    ]
    root = attack_project(tmp_path / "project", {"a.txt": "say -hello\n"}, calls, tools=tools)
    commit_all(root)
    run = run_attack(root)
    assert [answer.error is not None for answer in run.answers] == [True, True, False]
    assert all("starts with '-' and would be read as an option" in str(a.error) for a in run.answers[:2])
    assert "a.txt:1:say -hello" in str(run.answers[2].result)  # after `--`, a leading dash is data
    assert list(out.iterdir()) == []
