"""The ACP client methods Orchestra serves an agent: the file system and permission answers (no terminal, no
elicitation), handed to the node's execution (ClientMethods)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)


class ClientMethods(Protocol):
    """What the agent may ask of Orchestra (the node's execution answers)."""

    def started(self, session_id: str, model: str, agent_name: str) -> None:
        """The session is open: its id, the model the agent says it uses and the agent's name (either may be "")."""
        ...

    def permission(self, tool_call: Mapping[str, Any]) -> str | None:
        """None to allow the call, else why it is denied (the denial is recorded)."""
        ...

    def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        """A file's text (raises RequestError when refused)."""
        ...

    def write_text_file(self, path: str, content: str) -> None:
        """Write a file through Orchestra's tools (raises RequestError when refused)."""
        ...


class OrchestraClient:
    """The client side Orchestra serves: the file system and permission answers; no terminal.

    A failure answering (a turn's commit failed, the run asked to stop at this turn) is no error of the agent's: it
    ends the conversation (`fail`), and the agent hears an internal error.
    """

    def __init__(self, methods: ClientMethods, fail: Callable[[BaseException], None]) -> None:
        self._methods = methods
        self._fail = fail

    def _answer(self, answer: Callable[[], Any]) -> Any:
        try:
            return answer()
        except RequestError:
            raise
        except BaseException as error:
            self._fail(error)
            raise RequestError.internal_error({"details": "Orchestra stopped this session"}) from None

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        denied = self._answer(lambda: self._methods.permission(call))
        wanted = ("reject_once", "reject_always") if denied is not None else ("allow_once", "allow_always")
        for kind in wanted:
            chosen = next((option for option in options if option.kind == kind), None)
            if chosen is not None:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
                )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None  # read in the order it came, before the library dispatched it (Conversation._message)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self._answer(lambda: self._methods.write_text_file(path, content))
        return WriteTextFileResponse()

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        return ReadTextFileResponse(
            content=self._answer(lambda: self._methods.read_text_file(path, line, limit))
        )

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/output")

    async def release_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/kill")

    async def create_elicitation(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None
