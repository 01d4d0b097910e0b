"""One node's run of a CLI agent: its process, its event stream read into turns, each turn committed."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from attrs import evolve, frozen

from orchestra_adapters.backends.cli_agent.adapter import CliAgentAdapter
from orchestra_adapters.backends.cli_agent.call_writes import CallWrites
from orchestra_adapters.backends.cli_agent.events import AgentStarted, ModelSwitched
from orchestra_adapters.backends.cli_agent.live import LiveActivity
from orchestra_adapters.backends.cli_agent.process import AgentProcess
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.backends.cli_agent.turns import TurnAssembler, TurnDraft
from orchestra_adapters.backends.usage import NodeUsage
from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.process.sandbox import AgentSandbox, SandboxUnavailable
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.model.activity import OnActivity
from orchestra_core.model.agent_resume import AgentStateLost
from orchestra_core.model.cancellation import Cancellation, TurnsStopped
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.failover import UNAVAILABLE, ModelFailover
from orchestra_core.model.graph import Node
from orchestra_core.model.money import Money
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.pricing import PriceTable
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.codergen_backend import OnFailover, OnTurn
from orchestra_core.workspace.worktree_watch import WorktreeWatch

SERVER_NAME = "orchestra"
UNTRACKED_NOTE = "Files changed in the worktree by means other than Orchestra's tools (committed apart)."
UNCLAIMED_NOTE = "Files written through Orchestra's tools in calls the agent's event stream did not show."


class AgentFailed(OrchestraError):
    """The agent could not be started or did not finish its work."""


@frozen
class AgentChoice:
    """What the tool registry needs of a node's agent: its tool names (and the model it runs, with the models of its
    provider it may fall back to)."""

    provider: str
    model: str
    tool_names: tuple[str, ...]
    fallbacks: tuple[str, ...] = ()


class Execution:
    """One node's run of the agent: the stream read into turns, each turn committed, the result."""

    def __init__(
        self,
        adapter: CliAgentAdapter,
        sandbox: AgentSandbox | None,
        node: Node,
        choice: AgentChoice,
        toolbox: Toolbox,
        calls: CallWrites,
        on_turn: OnTurn | None,
        watch: WorktreeWatch | None,
        host: ToolHost,
        cancel: Cancellation | None = None,
        on_failover: OnFailover | None = None,
        prices: PriceTable | None = None,
        on_activity: OnActivity | None = None,
    ) -> None:
        self._cancel = cancel
        self._live = LiveActivity(on_activity, self._orchestra_name, lambda: self._turn_number)
        self._on_failover = on_failover
        self._switch = ""  # why the agent went on with a fallback model (its own words)
        self._fallbacks_used: set[str] = set()
        self._prices = prices
        self._priced = Money()  # the known costs of the turns reported so far
        self._settled = False  # the agent's own total was given to a turn
        self._assembler: TurnAssembler | None = None
        self._adapter = adapter
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
        self._sandbox = sandbox
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
        assembler = self._assembler = TurnAssembler(self._report, self._orchestra_name)
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
                self._cancel.raise_if_stopped()
            process = AgentProcess(
                argv, cwd=spec.cwd, env=env, stdin_text=prompt, timeout_s=spec.timeout_s, cancel=self._cancel
            )
            with process:
                for line in process.lines():
                    for event in parser.parse(line):
                        self._live.feed(event)
                        assembler.feed(event)
                        if isinstance(event, AgentStarted):
                            self._started(event)
                        elif isinstance(event, ModelSwitched):
                            self._switch = event.text
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
        self._model = event.model or self._model  # the model that answers (`sonnet` asked is a dated id)
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
        model, requested, reason = self._answering(draft)
        turn = AgentTurn(
            node_id=self._node.id,
            turn_number=self._turn_number,
            model=model,
            provider=self._adapter.provider,
            requested_model=requested,
            fallback_reason=reason,
            messages=draft.messages(),
            tool_calls=draft.tool_calls(),
            files_written=writes.files,
            file_versions=writes.versions,
            token_usage=draft.usage,
            agent_state_ref=self._state_ref(),
            duration_s=time.monotonic() - draft.started,
            cost_usd=self._cost(model, draft.usage),
        )
        self._turn_number += 1
        if self._on_turn is not None:
            self._on_turn(turn)
        if draft.used_native_tools:
            self._sweep()
        self._stop_if_asked()

    def _cost(self, model: str, usage: TokenUsage) -> float | None:
        """The turn's cost: its tokens at the answering `model`'s price; the last turn's settles the node at the agent's own total
        (Claude Code's `total_cost_usd`), when the agent reports one. None when the model has no price (the run's
        meter then says so)."""
        priced = self._prices.cost(model, usage) if self._prices is not None and model != "unknown" else None
        result = self._assembler.result if self._assembler is not None else None
        if result is not None and result.cost_usd is not None and not self._settled:
            self._settled = True
            settled = max(Money.usd(result.cost_usd) - self._priced, Money())
            self._priced = self._priced + settled
            return settled.to_float()
        if priced is None:
            return None
        self._priced = self._priced + priced
        return priced.to_float()

    def _stop_if_asked(self) -> None:
        """A budget was reached (the stage asked to stop at the turn boundary): the turn just reported is in; the
        agent is stopped before its next turn, unless it has already given its final answer."""
        stop = self._cancel.turn_stop if self._cancel is not None else None
        if stop is not None and (self._assembler is None or self._assembler.result is None):
            raise TurnsStopped(stop)

    def _answering(self, draft: TurnDraft) -> tuple[str, str, str]:
        """(model, requested model, fallback reason) of a turn: a response given by one of the node's fallback
        models (the agent switched on its own) names it, and the first such response is announced."""
        requested = self._model or "unknown"
        if not draft.model or draft.model not in self._choice.fallbacks:
            return requested, "", ""
        provider = self._adapter.provider
        why = self._switch or f"{self._adapter.name} went on with its fallback model"
        if draft.model not in self._fallbacks_used and self._on_failover is not None:
            self._on_failover(
                ModelFailover(
                    node_id=self._node.id, from_provider=provider, from_model=requested, to_provider=provider,
                    to_model=draft.model, cause=UNAVAILABLE, reason=why,
                )
            )  # fmt: skip
        self._fallbacks_used.add(draft.model)
        return draft.model, requested, f"{provider} {requested}: {why}"

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
