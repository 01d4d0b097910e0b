"""`orchestra doctor` reports each orchestra.yaml backend Orchestra does not have, as compile does."""

from __future__ import annotations

from pathlib import Path

from orchestra_cli.doctor_check import ERROR
from orchestra_cli.doctor_checks import _backends, run_checks
from orchestra_core.model.settings import OrchestraSettings, PipelineSettings


def test_known_backends_give_no_line() -> None:
    settings = OrchestraSettings(backend="simulate", pipelines={"p": PipelineSettings(backend="codex")})
    assert _backends(settings) == []
    assert _backends(OrchestraSettings()) == []


def test_each_unknown_backend_is_an_error_naming_its_key(tmp_path: Path) -> None:
    (tmp_path / "orchestra.yaml").write_text(
        "backend: codx\npipelines:\n  review:\n    backend: langgraf\n", encoding="utf-8"
    )
    checks = [check for check in run_checks(None, tmp_path) if check.name == "backends"]
    assert [check.status for check in checks] == [ERROR, ERROR]
    assert checks[0].detail.startswith(
        "orchestra.yaml backend: 'codx' is not a backend (did you mean 'codex'?)"
    )
    assert checks[1].detail.startswith(
        "orchestra.yaml pipelines.review.backend: 'langgraf' is not a backend (did you mean 'langgraph'?)"
    )
