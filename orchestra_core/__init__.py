"""Orchestra's public API: load, validate, run, resume and replay pipelines; the ports, records and events.

Everything listed in `__all__` is public and kept stable (a test pins the list); every other module is
private. Names are imported on first use, so `import orchestra_core` costs nothing until they are used.
See docs/library.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestra_core.model.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    # Pipelines
    "Edge": "orchestra_core.model.graph",
    "Graph": "orchestra_core.model.graph",
    "Node": "orchestra_core.model.graph",
    "Diagnostic": "orchestra_core.validation",
    "FunctionRule": "orchestra_core.validation",
    "LintRule": "orchestra_core.validation",
    "Severity": "orchestra_core.validation",
    "Transform": "orchestra_core.transforms",
    "load_pipeline": "orchestra_core.api",
    "parse_pipeline": "orchestra_core.api",
    "validate": "orchestra_core.api",
    "validate_or_raise": "orchestra_core.api",
    # Running
    "BackendFactory": "orchestra_core.runs.ports",
    "AgentRuntime": "orchestra_core.runs.ports",
    "Extensions": "orchestra_core.runs.extensions",
    "AdapterArguments": "orchestra_core.api",
    "PortArguments": "orchestra_core.api",
    "RunEvent": "orchestra_core.runs.events",
    "arun_pipeline": "orchestra_core.api",
    "astream_pipeline": "orchestra_core.api",
    "read_session": "orchestra_core.api",
    "replay_session": "orchestra_core.api",
    "resume_session": "orchestra_core.api",
    "run_pipeline": "orchestra_core.api",
    "stream_pipeline": "orchestra_core.api",
    "Handler": "orchestra_core.engine.stage",
    "StageRun": "orchestra_core.engine.stage",
    "Context": "orchestra_core.model.context",
    "Outcome": "orchestra_core.model.outcome",
    "StageStatus": "orchestra_core.model.outcome",
    "Checkpoint": "orchestra_core.model.checkpoint",
    "RunResult": "orchestra_core.model.checkpoint",
    "RunStatus": "orchestra_core.model.checkpoint",
    "OrchestraSettings": "orchestra_core.model.settings",
    # Cost and budgets
    "Budget": "orchestra_core.model.budget",
    "CostTally": "orchestra_core.model.money",
    "ModelPrice": "orchestra_core.model.pricing",
    "Money": "orchestra_core.model.money",
    "PriceTable": "orchestra_core.model.pricing",
    "Spending": "orchestra_core.model.budget",
    "price_table": "orchestra_core.model.builtin_prices",
    "session_spending": "orchestra_core.session.spending",
    # Ports
    "ArtifactStore": "orchestra_core.ports.artifact_store",
    "ChatModelFactory": "orchestra_core.ports.chat_models",
    "Clock": "orchestra_core.ports.clock",
    "SystemClock": "orchestra_core.ports.clock",
    "CodergenBackend": "orchestra_core.ports.codergen_backend",
    "CommandRunner": "orchestra_core.ports.command_runner",
    "CommitMessageGenerator": "orchestra_core.ports.commit_messages",
    "Dispatcher": "orchestra_core.ports.dispatcher",
    "FleetLedger": "orchestra_core.ports.fleet",
    "FleetPorts": "orchestra_core.runs.ports",
    "Git": "orchestra_core.ports.git",
    "GitRemotes": "orchestra_core.ports.git_remotes",
    "Interviewer": "orchestra_core.ports.interviewer",
    "Notifier": "orchestra_core.ports.notifier",
    "PromptLibrary": "orchestra_core.ports.prompt_library",
    "RunDirectory": "orchestra_core.ports.run_directory",
    "RunDirectoryFactory": "orchestra_core.ports.run_directory",
    "SessionLocks": "orchestra_core.ports.session_locks",
    "SessionStore": "orchestra_core.ports.session_store",
    "SessionTotals": "orchestra_core.ports.session_store",
    "SessionTotalsReader": "orchestra_core.ports.session_store",
    "TurnRange": "orchestra_core.ports.session_store",
    "TurnRangeReader": "orchestra_core.ports.session_store",
    "Tracer": "orchestra_core.ports.tracer",
    # Records and events
    "AgentTurn": "orchestra_core.model.turn",
    "TokenUsage": "orchestra_core.model.turn",
    "ToolCall": "orchestra_core.model.turn",
    "TurnCommit": "orchestra_core.model.turn",
    "Answer": "orchestra_core.model.interview",
    "Option": "orchestra_core.model.interview",
    "Question": "orchestra_core.model.interview",
    "QuestionType": "orchestra_core.model.interview",
    "Notification": "orchestra_core.model.notifications",
    "NotifyEvent": "orchestra_core.model.notifications",
    "NotificationFailed": "orchestra_core.model.records",
    "SessionInfo": "orchestra_core.ports.session_store",
    "SessionMetadata": "orchestra_core.ports.session_store",
    "SessionStatus": "orchestra_core.ports.session_store",
    "StoredTurn": "orchestra_core.ports.session_store",
    "TurnView": "orchestra_core.session.turn_view",
    "Span": "orchestra_core.model.spans",
    "events": "orchestra_core.model.events",
    "workspace_events": "orchestra_core.model.workspace_events",
    "EngineEvent": "orchestra_core.model.events",
    "WorkspaceEvent": "orchestra_core.model.workspace_events",
    # Errors
    "OrchestraError": "orchestra_core.model.errors",
    "PipelineLoadError": "orchestra_core.model.errors",
    "ValidationError": "orchestra_core.validation",
    "TransformError": "orchestra_core.transforms",
    "ConfigError": "orchestra_core.model.settings",
    "StoreError": "orchestra_core.model.store_errors",
    "SessionNotFoundError": "orchestra_core.model.store_errors",
    "TurnNotFoundError": "orchestra_core.model.store_errors",
    "GitError": "orchestra_core.ports.git",
    "RemoteError": "orchestra_core.ports.git_remotes",
    "SessionBusyError": "orchestra_core.ports.session_locks",
    "NothingToResumeError": "orchestra_core.runs.start",
    "WorkspaceError": "orchestra_core.workspace.errors",
}

__all__ = [
    "AdapterArguments",
    "AgentRuntime",
    "AgentTurn",
    "Answer",
    "ArtifactStore",
    "BackendFactory",
    "Budget",
    "ChatModelFactory",
    "Checkpoint",
    "Clock",
    "CodergenBackend",
    "CommandRunner",
    "CommitMessageGenerator",
    "ConfigError",
    "Context",
    "CostTally",
    "Diagnostic",
    "Dispatcher",
    "Edge",
    "EngineEvent",
    "Extensions",
    "FleetLedger",
    "FleetPorts",
    "FunctionRule",
    "Git",
    "GitError",
    "GitRemotes",
    "Graph",
    "Handler",
    "Interviewer",
    "LintRule",
    "ModelPrice",
    "Money",
    "Node",
    "NothingToResumeError",
    "Notification",
    "NotificationFailed",
    "Notifier",
    "NotifyEvent",
    "Option",
    "OrchestraError",
    "OrchestraSettings",
    "Outcome",
    "PipelineLoadError",
    "PortArguments",
    "PriceTable",
    "PromptLibrary",
    "Question",
    "QuestionType",
    "RemoteError",
    "RunDirectory",
    "RunDirectoryFactory",
    "RunEvent",
    "RunResult",
    "RunStatus",
    "SessionBusyError",
    "SessionInfo",
    "SessionLocks",
    "SessionMetadata",
    "SessionNotFoundError",
    "SessionStatus",
    "SessionStore",
    "SessionTotals",
    "SessionTotalsReader",
    "Severity",
    "Span",
    "Spending",
    "StageRun",
    "StageStatus",
    "StoreError",
    "StoredTurn",
    "SystemClock",
    "TokenUsage",
    "ToolCall",
    "Tracer",
    "Transform",
    "TransformError",
    "TurnCommit",
    "TurnNotFoundError",
    "TurnRange",
    "TurnRangeReader",
    "TurnView",
    "ValidationError",
    "WorkspaceError",
    "WorkspaceEvent",
    "arun_pipeline",
    "astream_pipeline",
    "events",
    "load_pipeline",
    "parse_pipeline",
    "price_table",
    "read_session",
    "replay_session",
    "resume_session",
    "run_pipeline",
    "session_spending",
    "stream_pipeline",
    "validate",
    "validate_or_raise",
    "workspace_events",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from orchestra_core.api import (
        AdapterArguments,
        PortArguments,
        arun_pipeline,
        astream_pipeline,
        load_pipeline,
        parse_pipeline,
        read_session,
        replay_session,
        resume_session,
        run_pipeline,
        stream_pipeline,
        validate,
        validate_or_raise,
    )
    from orchestra_core.engine.stage import Handler, StageRun
    from orchestra_core.model import events, workspace_events
    from orchestra_core.model.budget import Budget, Spending
    from orchestra_core.model.builtin_prices import price_table
    from orchestra_core.model.checkpoint import Checkpoint, RunResult, RunStatus
    from orchestra_core.model.context import Context
    from orchestra_core.model.errors import OrchestraError, PipelineLoadError
    from orchestra_core.model.events import EngineEvent
    from orchestra_core.model.graph import Edge, Graph, Node
    from orchestra_core.model.interview import Answer, Option, Question, QuestionType
    from orchestra_core.model.money import CostTally, Money
    from orchestra_core.model.notifications import Notification, NotifyEvent
    from orchestra_core.model.outcome import Outcome, StageStatus
    from orchestra_core.model.pricing import ModelPrice, PriceTable
    from orchestra_core.model.records import NotificationFailed
    from orchestra_core.model.settings import ConfigError, OrchestraSettings
    from orchestra_core.model.spans import Span
    from orchestra_core.model.store_errors import SessionNotFoundError, StoreError, TurnNotFoundError
    from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
    from orchestra_core.model.workspace_events import WorkspaceEvent
    from orchestra_core.ports.artifact_store import ArtifactStore
    from orchestra_core.ports.chat_models import ChatModelFactory
    from orchestra_core.ports.clock import Clock, SystemClock
    from orchestra_core.ports.codergen_backend import CodergenBackend
    from orchestra_core.ports.command_runner import CommandRunner
    from orchestra_core.ports.commit_messages import CommitMessageGenerator
    from orchestra_core.ports.dispatcher import Dispatcher
    from orchestra_core.ports.fleet import FleetLedger
    from orchestra_core.ports.git import Git, GitError
    from orchestra_core.ports.git_remotes import GitRemotes, RemoteError
    from orchestra_core.ports.interviewer import Interviewer
    from orchestra_core.ports.notifier import Notifier
    from orchestra_core.ports.prompt_library import PromptLibrary
    from orchestra_core.ports.run_directory import RunDirectory, RunDirectoryFactory
    from orchestra_core.ports.session_locks import SessionBusyError, SessionLocks
    from orchestra_core.ports.session_store import (
        SessionInfo,
        SessionMetadata,
        SessionStatus,
        SessionStore,
        SessionTotals,
        SessionTotalsReader,
        StoredTurn,
        TurnRange,
        TurnRangeReader,
    )
    from orchestra_core.ports.tracer import Tracer
    from orchestra_core.runs.events import RunEvent
    from orchestra_core.runs.extensions import Extensions
    from orchestra_core.runs.ports import AgentRuntime, BackendFactory, FleetPorts
    from orchestra_core.runs.start import NothingToResumeError
    from orchestra_core.session.spending import session_spending
    from orchestra_core.session.turn_view import TurnView
    from orchestra_core.transforms import Transform, TransformError
    from orchestra_core.validation import Diagnostic, FunctionRule, LintRule, Severity, ValidationError
    from orchestra_core.workspace.errors import WorkspaceError
