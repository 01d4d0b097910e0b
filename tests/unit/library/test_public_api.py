"""The public API: the pinned names of `orchestra_core.__all__`, each importable, and a cheap import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import orchestra_core

# Changing this list is a change of the public API: deliberate, documented in docs/library.md.
PUBLIC_NAMES = {
    # pipelines
    "Diagnostic", "Edge", "FunctionRule", "Graph", "LintRule", "Node", "Severity", "Transform",
    "load_pipeline", "parse_pipeline", "validate", "validate_or_raise",
    # running
    "AdapterArguments", "AgentRuntime", "BackendFactory", "Checkpoint", "Context", "Extensions", "Handler",
    "OrchestraSettings", "Outcome", "PortArguments", "RunEvent", "RunResult", "RunStatus", "StageRun",
    "StageStatus", "arun_pipeline", "astream_pipeline", "read_session", "replay_session", "resume_session",
    "run_pipeline", "stream_pipeline",
    # cost and budgets
    "Budget", "CostTally", "ModelPrice", "Money", "PriceTable", "Spending", "price_table", "session_spending",
    # ports
    "ArtifactStore", "ChatModelFactory", "Clock", "CodergenBackend", "CommandRunner", "CommitMessageGenerator",
    "Dispatcher", "FleetLedger", "FleetPorts", "Git", "GitRemotes", "Interviewer", "Notifier", "PromptLibrary", "RunDirectory", "RunDirectoryFactory", "SessionLocks",
    "SessionStore", "SessionTotals", "SessionTotalsReader", "SystemClock", "Tracer", "TurnRange", "TurnRangeReader",
    # records and events
    "AgentTurn", "Answer", "EngineEvent", "Notification", "NotificationFailed", "NotifyEvent", "Option", "Question", "QuestionType", "SessionInfo",
    "SessionMetadata", "SessionStatus", "Span", "StoredTurn", "TokenUsage", "ToolCall", "TurnCommit", "TurnView",
    "WorkspaceEvent", "events", "workspace_events",
    # errors
    "ConfigError", "GitError", "NothingToResumeError", "OrchestraError", "PipelineLoadError", "RemoteError",
    "SessionBusyError", "SessionNotFoundError", "StoreError", "TransformError", "TurnNotFoundError",
    "ValidationError", "WorkspaceError",
}


def test_the_public_names_are_pinned() -> None:
    assert set(orchestra_core.__all__) == PUBLIC_NAMES
    assert orchestra_core.__all__ == sorted(orchestra_core.__all__)
    assert dir(orchestra_core) == orchestra_core.__all__


@pytest.mark.parametrize("name", sorted(PUBLIC_NAMES))
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(orchestra_core, name) is not None


def test_a_private_name_is_not_reachable_from_the_top() -> None:
    with pytest.raises(AttributeError, match="no attribute 'PipelineRun'"):
        orchestra_core.PipelineRun  # noqa: B018


def test_every_error_is_an_orchestra_error() -> None:
    errors = [getattr(orchestra_core, name) for name in PUBLIC_NAMES if name.endswith("Error")]
    assert all(issubclass(error, orchestra_core.OrchestraError) for error in errors)


def test_importing_the_package_loads_nothing_until_a_name_is_used() -> None:
    code = (
        "import sys, orchestra_core\n"
        "print(sorted(m for m in sys.modules if m.startswith('orchestra_core.')))\n"
        "orchestra_core.run_pipeline\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('orchestra_adapters', 'orchestra_cli', 'langchain_core', 'langgraph', 'sqlite3', 'typer')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = result.stdout.splitlines()
    assert before == "['orchestra_core.model', 'orchestra_core.model.lazy_exports']"  # the PEP 562 helper only
    assert after == "[]"


def test_the_package_is_typed() -> None:
    assert (Path(orchestra_core.__file__).parent / "py.typed").is_file()
