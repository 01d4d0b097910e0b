"""`orchestra doctor` in a real process: the CLI agents configured or selected in orchestra.yaml."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.orchestra_project import orchestra


def test_doctor_reports_each_configured_or_selected_cli_agent(tmp_path: Path) -> None:
    agent = tmp_path / "tools" / "claude"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
    agent.chmod(0o755)
    (tmp_path / "orchestra.yaml").write_text(
        f"backend: claude-code\nclaude_code:\n  command: {agent}\ncodex:\n  command: /nowhere/codex\n"
    )
    result = orchestra("doctor", "--json", cwd=tmp_path)
    checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    assert checks["cli agent claude-code"] == {
        "name": "cli agent claude-code",
        "status": "ok",
        "detail": f"2.1.332 (Claude Code) ({agent})",
    }
    assert checks["cli agent codex"]["status"] == "warning"
    assert "'/nowhere/codex' not found (configured but not selected by any backend)" in checks["cli agent codex"]["detail"]
    names = list(checks)
    assert names.index("sandbox") < names.index("cli agent claude-code") < names.index("cli agent codex")
