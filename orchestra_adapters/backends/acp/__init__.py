"""Agents speaking the Agent Client Protocol (ACP) as a CodergenBackend (`backend: acp`, docs/backends.md).

Nothing here imports the `acp` library (the `acp` extra) until a node of the backend runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestra_adapters.backends.acp.backend import AcpBackend
    from orchestra_adapters.process.sandbox import AgentSandbox
    from orchestra_core.model.pricing import PriceTable
    from orchestra_core.model.settings import AcpSettings
    from orchestra_core.runs.ports import AgentRuntime


def create_acp_backend(
    settings: AcpSettings | None,
    runtime: AgentRuntime,
    sandbox: AgentSandbox | None = None,
    prices: PriceTable | None = None,
) -> AcpBackend:
    """The ACP backend for one run (`acp:` of orchestra.yaml; in `sandbox` when given; its turns priced with `prices`).

    Raises:
        OrchestraError: The `acp` library is not installed (`pip install 'orchestra[acp]'`).
    """
    from orchestra_core.model.errors import OrchestraError

    try:
        import acp  # noqa: F401
    except ImportError:
        raise OrchestraError(
            "the acp backend needs the agent-client-protocol library: pip install 'orchestra[acp]'"
        ) from None
    from orchestra_adapters.backends.acp.backend import AcpBackend

    return AcpBackend(settings, runtime, sandbox, prices)
