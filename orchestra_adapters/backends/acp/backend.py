"""AcpBackend: a codergen node run by an agent speaking the Agent Client Protocol (ACP) on stdio.

Orchestra is the ACP client: it starts the agent (`acp.command`) in its own process group, opens a session in
the node's worktree with Orchestra's MCP tool server, sends the node's prompt and reads the agent's session
updates into turns (acp/execution.py). Everything else (the tools, the tool host, the writes each turn claims,
the untracked-writes net, resume points, budgets) is the CLI agents' (cli_agent/backend.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from orchestra_adapters.backends.acp.execution import AcpExecution
from orchestra_adapters.backends.cli_agent.adapter import AgentStatePaths
from orchestra_adapters.backends.cli_agent.backend import CLIAgentBackend
from orchestra_adapters.backends.cli_agent.execution import AgentFailed, Execution
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.process.sandbox import AgentSandbox
from orchestra_core.model.pricing import PriceTable
from orchestra_core.model.settings import AcpSettings, CliAgentSettings
from orchestra_core.runs.ports import AgentRuntime


class AcpAgent:
    """What the CLI agents' backend needs to know of an ACP agent: its name and command line (the rest of
    CliAgentAdapter is the output stream's, which ACP replaces with the conversation)."""

    name = "acp"
    default_command = ""
    provider = "acp"  # the agent calls its models itself; Orchestra does not learn their provider
    resumes_sessions = False  # a node's next human message replays the conversation in a new session

    def command(self, spec: CliAgentSpec, workdir: Path) -> list[str]:
        return [*spec.executable, *spec.extra_args]

    def environment(self, spec: CliAgentSpec) -> Mapping[str, str]:
        return {}

    def parser(self) -> None:
        raise NotImplementedError("an ACP agent's output is a conversation, read by AcpExecution")

    def state_paths(self, env: Mapping[str, str]) -> AgentStatePaths:
        return AgentStatePaths()  # unknown: the sandbox's `writable` paths give the agent its own


class AcpBackend(CLIAgentBackend):
    """Runs codergen nodes with the ACP agent `acp.command` names.

    Args:
        settings: orchestra.yaml's `acp:` section.
        runtime: The run: the node's agent, tools, hooks, repos and worktree watch.
        sandbox: Runs the agent in bubblewrap, as the CLI agents.
        prices: Prices its turns by the model the agent names, when it names one.
    """

    execution_class: type[Execution] = AcpExecution

    def __init__(
        self,
        settings: AcpSettings | None,
        runtime: AgentRuntime,
        sandbox: AgentSandbox | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.acp = settings or AcpSettings()
        command = self.acp.command
        agent = CliAgentSettings(
            command=command[0] if command else None,
            args=command[1:],
            env=self.acp.env,
            timeout=self.acp.timeout,
        )
        super().__init__(AcpAgent(), runtime, agent, sandbox, prices)  # type: ignore[arg-type]

    def _configure(self, execution: Execution) -> None:
        if isinstance(execution, AcpExecution):
            execution.auth_method = self.acp.auth_method
            execution.set_model = self.acp.model or ""

    def executable(self) -> tuple[str, ...]:
        """The agent's program, found.

        Raises:
            AgentFailed: `acp.command` is empty, or its program is not found.
        """
        if not self.acp.command:
            raise AgentFailed(
                "acp: no agent to start; set acp.command in orchestra.yaml (e.g. [gemini, --experimental-acp])"
            )
        return super().executable()
