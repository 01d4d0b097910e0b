"""CLIAgentBackend: a codergen node run by a CLI coding agent whose tools are Orchestra's, served over MCP.

The agent's own file-writing tools are withheld; Orchestra's tools reach it through the MCP tool server,
which forwards every call to this process, so writes go through the node's WriteTracker exactly as with
the LangGraph backend. The agent's event stream is read line by line while it runs: each model response
and its tool results make one AgentTurn, committed as soon as it is read. The agent does not wait for that
commit, so each write is captured (stored as a blob) when the tool makes it and kept with its tool call
(`CallWrites`); the turn takes the writes of the calls it shows, as they were written. Changes that did not
come through Orchestra's tools are committed apart, with a warning (the untracked-writes safety net).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from orchestra_adapters.backends.cli_agent.adapter import CliAgentAdapter
from orchestra_adapters.backends.cli_agent.call_writes import CallWrites
from orchestra_adapters.backends.cli_agent.events import AgentStarted
from orchestra_adapters.backends.cli_agent.process import AgentProcess
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.backends.cli_agent.turns import TurnAssembler, TurnDraft
from orchestra_adapters.backends.usage import NodeUsage, UsageLedger
from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.process.sandbox import AgentSandbox, SandboxUnavailable
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.model.agent_resume import AgentResume, AgentStateLost, agent_resume_for
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.settings import CliAgentSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.codergen_backend import OnTurn
from orchestra_core.runs.ports import AgentRuntime
from orchestra_core.workspace.worktree_watch import WorktreeWatch

DEFAULT_TIMEOUT_S = 3600.0
WORKDIR_ATTR = "agent.workdir"  # the repo whose worktree the agent works in (default: the first repo)
SERVER_NAME = "orchestra"
UNTRACKED_NOTE = "Files changed in the worktree by means other than Orchestra's tools (committed apart)."
UNCLAIMED_NOTE = "Files written through Orchestra's tools in calls the agent's event stream did not show."


class AgentFailed(OrchestraError):
    """The agent could not be started or did not finish its work."""


@frozen
class _AgentChoice:
    """What the tool registry needs of a node's agent: its tool names (and the model it runs)."""

    provider: str
    model: str
    tool_names: tuple[str, ...]


class CLIAgentBackend:
    """Runs codergen nodes with a CLI agent (Claude Code, Codex) through its adapter.

    An interactive node's next human message (a resume point with a message, model/agent_resume.py)
    continues the CLI's own session when the adapter `resumes_sessions` (Claude Code: `--resume`, with only
    the message on stdin); when it cannot (another CLI, or the session is unknown to it: a new machine, its
    files gone) the call raises AgentStateLost and the node replays the conversation in a new prompt. Any
    other resume point (`resume --turn`) is ignored: the node runs again from its start on the turn's code.

    Args:
        adapter: The CLI agent's flags and stream format.
        runtime: The run: the node's agent, tools, hooks, repos and worktree watch.
        settings: orchestra.yaml's section for this agent (command, args, model, tools, timeout, env).
        sandbox: Runs the agent in bubblewrap (`sandbox: {kind: bubblewrap}`): it writes only the run's
            worktrees (not their `.git` and Orchestra's state), its own state directories and a scratch
            directory.
    """

    def __init__(
        self,
        adapter: CliAgentAdapter,
        runtime: AgentRuntime,
        settings: CliAgentSettings | None = None,
        sandbox: AgentSandbox | None = None,
    ) -> None:
        self.adapter = adapter
        self.name = adapter.name
        self.usage = UsageLedger()
        self._runtime = runtime
        self._settings = settings or CliAgentSettings()
        self.sandbox = sandbox

    def executable(self) -> tuple[str, ...]:
        """The agent's command with its configured leading arguments.

        Raises:
            AgentFailed: The executable is not found.
        """
        command = self._settings.command or self.adapter.default_command
        if os.sep in command:
            path = Path(command).expanduser()
            path = path if path.is_absolute() else self._runtime.project_root / path
            found = str(path) if os.access(path, os.X_OK) else None
        else:
            found = shutil.which(command)
        if found is None:
            key = self.adapter.name.replace("-", "_")
            raise AgentFailed(
                f"{self.adapter.name}: executable {command!r} not found; install it or set {key}.command "
                "in orchestra.yaml"
            )
        return (found,)

    def run(
        self,
        node: Node,
        prompt: str,
        context: Context,
        on_turn: OnTurn | None = None,
        *,
        cancel: Cancellation | None = None,
    ) -> str | Outcome:
        """Run the node's task with the CLI agent; its final answer is the response. `cancel` kills the agent's
        process group (the agent, its MCP servers, whatever they started) at once.

        Raises:
            AgentStateLost: Asked to continue the agent's session (an interactive node's next message), it
                cannot: the adapter resumes no session, or the CLI does not know the session.
        """
        resume = agent_resume_for(node.id, context)
        session = self._session_to_resume(resume)
        if session is not None and resume is not None:
            prompt = resume.message
        try:
            executable = self.executable()
            choice = self._choice(node, context)
            tracker = self._runtime.write_tracker(context)
            toolbox = Toolbox(self._tools(node, choice, context, tracker))
            repos = self._runtime.repos(context)
            cwd = _workdir(node, repos, self._runtime.project_root)
        except OrchestraError as error:
            return Outcome.fail(f"node {node.id}: {error}")
        calls = CallWrites(tracker)
        with (
            ToolHost(toolbox, server_name=SERVER_NAME, on_call=calls.on_call) as host,
            tempfile.TemporaryDirectory(prefix="orchestra-agent-") as scratch,
        ):
            spec = CliAgentSpec(
                executable=executable,
                model=choice.model or None,
                allowed_tools=self._settings.tools,
                disallowed_tools=self._settings.disallowed_tools,
                mcp_servers=(host.server_spec(),),
                cwd=cwd,
                timeout_s=node.timeout or self._settings.timeout or DEFAULT_TIMEOUT_S,
                extra_args=self._settings.args,
                env=self._settings.env,
                resume_session=session,
            )
            watch = self._runtime.watch_worktrees(context)
            execution = _Execution(self, node, choice, toolbox, calls, on_turn, watch, host, cancel)
            execution.confine_to(repos.values() if repos else [RepoContext("project", self._runtime.project_root)])
            if session is not None and resume is not None:
                execution.number_turns_from(resume.turn_number + 1)
            try:
                return execution.run(spec, prompt, Path(scratch))
            finally:
                self.usage.add(node.id, execution.usage)

    def _session_to_resume(self, resume: AgentResume | None) -> str | None:
        """The CLI session an interactive node's next message continues (None: not such a call)."""
        if resume is None or not resume.message:
            return None
        owner, _, session = (resume.agent_state_ref or "").partition(":")
        if not self.adapter.resumes_sessions or owner != self.adapter.name or not session:
            raise AgentStateLost(f"{self.adapter.name} does not resume its own session here", warn=False)
        return session

    def _choice(self, node: Node, context: Context) -> _AgentChoice:
        resolver = self._runtime.resolver
        tool_names = resolver.tool_names_for(node)
        try:
            chosen = resolver.model_for(node, None, context.snapshot())
        except OrchestraError:
            chosen = None  # no providers configured: the CLI agent uses its own
        explicit = chosen is not None and chosen.model_source != "default"
        model = chosen.model if explicit and chosen is not None else self._settings.model or ""
        return _AgentChoice(self.adapter.provider, model, tool_names)

    def _tools(self, node: Node, choice: _AgentChoice, context: Context, tracker: WriteTracker) -> list[Any]:
        tools = list(self._runtime.tools_for(node, choice, context, tracker))
        hooks = self._runtime.tool_hooks(node, context)
        return hooks.wrap(tools) if hooks is not None else tools


def _workdir(node: Node, repos: Mapping[str, RepoContext], project_root: Path) -> Path:
    wanted = node.attrs.get(WORKDIR_ATTR, "")
    if wanted and wanted in repos:
        return repos[wanted].root
    if wanted:
        raise AgentFailed(f"{WORKDIR_ATTR}={wanted!r} names no repo (repos: {', '.join(repos) or 'none'})")
    return next(iter(repos.values())).root if repos else project_root


class _Execution:
    """One node's run of the agent: the stream read into turns, each turn committed, the result."""

    def __init__(
        self,
        backend: CLIAgentBackend,
        node: Node,
        choice: _AgentChoice,
        toolbox: Toolbox,
        calls: CallWrites,
        on_turn: OnTurn | None,
        watch: WorktreeWatch | None,
        host: ToolHost,
        cancel: Cancellation | None = None,
    ) -> None:
        self._cancel = cancel
        self._adapter = backend.adapter
        self._node = node
        self._choice = choice
        self._toolbox = toolbox
        self._calls = calls
        self._on_turn = on_turn
        self._watch = watch
        self._host = host
        self._turn_number = 0
        self._resumed = ""
        self._model = choice.model
        self._session = ""
        self.usage = NodeUsage()
        self._sandbox = backend.sandbox
        self._roots: list[RepoContext] = []

    def confine_to(self, repos: Iterable[RepoContext]) -> None:
        """The repos whose worktrees the agent may write in the sandbox."""
        self._roots = list(repos)

    def number_turns_from(self, number: int) -> None:
        """A continued session numbers its turns on from the node's last recorded turn."""
        self._turn_number = number

    def run(self, spec: CliAgentSpec, prompt: str, scratch: Path) -> str | Outcome:
        self._resumed = spec.resume_session or ""
        started = time.monotonic()
        assembler = TurnAssembler(self._report, self._orchestra_name)
        try:
            return self._run(spec, prompt, scratch, assembler)
        finally:
            turns = self._turn_number
            self.usage = NodeUsage(turns, turns, assembler.usage, time.monotonic() - started)

    def _run(self, spec: CliAgentSpec, prompt: str, scratch: Path, assembler: TurnAssembler) -> str | Outcome:
        argv = self._adapter.command(spec, scratch)
        env = {**os.environ, **self._adapter.environment(spec), **spec.env}
        parser = self._adapter.parser()
        try:
            if self._sandbox is not None:
                argv = self._sandboxed(argv, spec, env, scratch)
            if self._cancel is not None:
                self._cancel.raise_if_cancelled()
            process = AgentProcess(
                argv, cwd=spec.cwd, env=env, stdin_text=prompt, timeout_s=spec.timeout_s, cancel=self._cancel
            )
            with process:
                for line in process.lines():
                    for event in parser.parse(line):
                        assembler.feed(event)
                        if isinstance(event, AgentStarted):
                            self._started(event)
                status = process.wait()
                assembler.close()
        except (OSError, SandboxUnavailable) as error:
            return Outcome.fail(f"node {self._node.id}: could not start {self._adapter.name}: {error}")
        except AgentFailed as error:
            return Outcome.fail(f"node {self._node.id}: {error}; {_tail(process)}")
        finally:
            try:
                self._commit_unclaimed()
            finally:
                self._sweep()
        return self._result(assembler, process, status)

    def _sandboxed(self, argv: list[str], spec: CliAgentSpec, env: Mapping[str, str], scratch: Path) -> list[str]:
        """The agent's command line in the sandbox: the repos' worktrees and its own state writable."""
        assert self._sandbox is not None
        state = self._adapter.state_paths(env)
        for directory in state.directories:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        writable = [str(repo.root) for repo in self._roots] + [str(path) for path in (*state.directories, *state.files)]
        protected = [str(path) for repo in self._roots for path in repo.protected]
        return self._sandbox.wrap(argv, cwd=str(spec.cwd), writable=writable, protected=protected, scratch=str(scratch))

    def _started(self, event: AgentStarted) -> None:
        self._session = event.session_id
        self._model = self._model or event.model
        status = event.mcp_servers.get(SERVER_NAME)
        if status is not None and status != "connected":
            raise AgentFailed(f"{self._adapter.name} could not connect to Orchestra's tool server ({status})")

    def _result(self, assembler: TurnAssembler, process: AgentProcess, status: int) -> str | Outcome:
        node = self._node.id
        name = self._adapter.name
        if process.cancelled:
            reason = self._cancel.reason if self._cancel is not None else "cancelled"
            return Outcome.fail(f"node {node}: {reason}; {name} and its processes were killed")
        if process.timed_out:
            return Outcome.fail(
                f"node {node}: {name} did not finish within {process_timeout(process)}; {_tail(process)}"
            )
        result = assembler.result
        if self._resumed and not self._session:  # no init line: the CLI never took the session up
            detail = (result.detail or result.text) if result is not None else _tail(process)
            raise AgentStateLost(f"{name} could not resume its session {self._resumed}: {detail}")
        if result is None:
            return Outcome.fail(
                f"node {node}: {name} exited with status {status} without a result; {_tail(process)}"
            )
        if result.is_error:
            reason = result.text or result.detail or f"exit status {status}"
            return Outcome.fail(f"node {node}: {name} failed: {reason}; {_tail(process)}")
        outcome = self._host.reported_outcome
        if outcome is not None:
            return outcome if outcome.notes else evolve(outcome, notes=result.text)
        return result.text

    def _report(self, draft: TurnDraft) -> None:
        writes = self._calls.claim(draft.tool_calls())
        turn = AgentTurn(
            node_id=self._node.id,
            turn_number=self._turn_number,
            model=self._model or "unknown",
            provider=self._adapter.provider,
            messages=draft.messages(),
            tool_calls=draft.tool_calls(),
            files_written=writes.files,
            file_versions=writes.versions,
            token_usage=draft.usage,
            agent_state_ref=self._state_ref(),
            duration_s=time.monotonic() - draft.started,
        )
        self._turn_number += 1
        if self._on_turn is not None:
            self._on_turn(turn)
        if draft.used_native_tools:
            self._sweep()

    def _state_ref(self) -> str | None:
        """`claude-code:<session id>`: the CLI's own session these turns belong to."""
        return f"{self._adapter.name}:{self._session}" if self._session else None

    def _sweep(self) -> None:
        """Commit, apart and with a warning, whatever changed in the worktrees outside Orchestra's tools."""
        if self._watch is None:
            return
        # No tool call may be half done while we look: a file it wrote but has not recorded yet would
        # pass for an untracked write. Writes recorded for the turn in progress are its own.
        with self._host.paused():
            pending = self._calls.pending()
            changed = [entry for entry in self._watch.changed() if entry not in pending]
            if changed:
                self._commit_untracked(changed)

    def _commit_unclaimed(self) -> None:
        """Commit, as a turn of their own, writes through Orchestra's tools that no turn of the stream showed."""
        with self._host.paused():
            writes = self._calls.unclaimed()
        if not writes.files:
            return
        turn = AgentTurn(
            node_id=self._node.id,
            turn_number=self._turn_number,
            model=self._model or "unknown",
            provider=self._adapter.provider,
            messages=[{"role": "system", "content": UNCLAIMED_NOTE}],
            files_written=writes.files,
            file_versions=writes.versions,
            agent_state_ref=self._state_ref(),
        )
        self._turn_number += 1
        if self._on_turn is not None:
            self._on_turn(turn)

    def _commit_untracked(self, changed: list[str]) -> None:
        assert self._watch is not None
        turn = AgentTurn(
            node_id=self._node.id,
            turn_number=self._turn_number,
            model=self._model or "unknown",
            provider=self._adapter.provider,
            messages=[{"role": "system", "content": UNTRACKED_NOTE}],
            files_written=changed,
            agent_state_ref=self._state_ref(),
            untracked=True,
        )
        self._turn_number += 1
        try:
            if self._on_turn is not None:
                self._on_turn(turn)
        finally:
            self._watch.rebaseline()

    def _orchestra_name(self, agent_name: str) -> str:
        """`mcp__orchestra__project__write-file` → `project:write-file`; the agent's own tools keep their name."""
        prefix = f"mcp__{SERVER_NAME}__"
        if not agent_name.startswith(prefix):
            return agent_name
        return self._toolbox.orchestra_name(self._toolbox.safe_name_of(agent_name.removeprefix(prefix)))


def _tail(process: AgentProcess) -> str:
    tail = process.stderr_tail()
    return f"its stderr ends: {tail[-2000:]}" if tail else "it wrote nothing to stderr"


def process_timeout(process: AgentProcess) -> str:
    return f"{process.timeout_s:g} s" if process.timeout_s is not None else "its time limit"
