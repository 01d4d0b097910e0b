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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestra_adapters.backends.cli_agent.adapter import CliAgentAdapter
from orchestra_adapters.backends.cli_agent.call_writes import CallWrites
from orchestra_adapters.backends.cli_agent.execution import SERVER_NAME, AgentChoice, AgentFailed, Execution
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.backends.usage import UsageLedger
from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.process.sandbox import AgentSandbox
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.model.activity import OnActivity
from orchestra_core.model.agent_resume import AgentResume, AgentStateLost, agent_resume_for
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.pricing import PriceTable
from orchestra_core.model.settings import CliAgentSettings
from orchestra_core.ports.codergen_backend import OnFailover, OnTurn
from orchestra_core.runs.ports import AgentRuntime

DEFAULT_TIMEOUT_S = 3600.0
WORKDIR_ATTR = "agent.workdir"  # the repo whose worktree the agent works in (default: the first repo)


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
        prices: Prices its turns (the last one settled at the agent's own total cost, when it reports one);
            None: the run's meter prices them.
    """

    execution_class: type[Execution] = Execution  # how one node's run talks to the agent

    def gives_agents_a_shell(self, node: Node) -> bool:
        """Yes: the agent reads the repo itself, so a parallel branch of its nodes gets full checkouts."""
        return True

    def __init__(
        self,
        adapter: CliAgentAdapter,
        runtime: AgentRuntime,
        settings: CliAgentSettings | None = None,
        sandbox: AgentSandbox | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.adapter = adapter
        self.prices = prices
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
        on_failover: OnFailover | None = None,
        on_activity: OnActivity | None = None,
    ) -> str | Outcome:
        """Run the node's task with the CLI agent; its final answer is the response. `on_activity` hears the
        agent's text and tool calls as its output stream shows them. `cancel` kills the agent's
        process group (the agent, its MCP servers, whatever they started) at once. The agent calls its models
        itself: the node's fallbacks of the agent's own provider are handed to an agent that can switch (Claude
        Code's `--fallback-model`), and `on_failover` hears when it did (docs/backends.md).

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
                fallback_models=choice.fallbacks,
            )
            watch = self._runtime.watch_worktrees(context)
            execution = self.execution_class(
                self.adapter, self.sandbox, node, choice, toolbox, calls, on_turn, watch, host, cancel,
                on_failover=on_failover, prices=self.prices, on_activity=on_activity,
            )
            execution.confine_to(repos.values() if repos else [RepoContext("project", self._runtime.project_root)])
            self._configure(execution)
            if session is not None and resume is not None:
                execution.number_turns_from(resume.turn_number + 1)
            try:
                return execution.run(spec, prompt, Path(scratch))
            finally:
                self.usage.add(node.id, execution.usage)

    def _configure(self, execution: Execution) -> None:
        """What a subclass sets on one node's execution before it runs (nothing here)."""

    def _session_to_resume(self, resume: AgentResume | None) -> str | None:
        """The CLI session an interactive node's next message continues (None: not such a call)."""
        if resume is None or not resume.message:
            return None
        owner, _, session = (resume.agent_state_ref or "").partition(":")
        if not self.adapter.resumes_sessions or owner != self.adapter.name or not session:
            raise AgentStateLost(f"{self.adapter.name} does not resume its own session here", warn=False)
        return session

    def _choice(self, node: Node, context: Context) -> AgentChoice:
        resolver = self._runtime.resolver
        tool_names = resolver.tool_names_for(node)
        try:
            chosen = resolver.model_for(node, None, context.snapshot())
        except OrchestraError:
            chosen = None  # no providers configured: the CLI agent uses its own
        explicit = chosen is not None and chosen.model_source != "default"
        model = chosen.model if explicit and chosen is not None else self._settings.model or ""
        fallbacks = (
            tuple(t.model for t in chosen.fallbacks if t.provider == self.adapter.provider)
            if explicit and chosen is not None
            else ()
        )
        return AgentChoice(self.adapter.provider, model, tool_names, fallbacks)

    def _tools(self, node: Node, choice: AgentChoice, context: Context, tracker: WriteTracker) -> list[Any]:
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
