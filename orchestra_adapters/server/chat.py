"""The chat of interactive nodes over HTTP: `GET /pipelines/{id}/chat` (the conversation so far and whether it
waits for the human) and `POST /pipelines/{id}/chat` (`{"message": TEXT}`, the human's next message).

A run started here talks through its interviewer's ChatBox. A run started elsewhere (`orchestra run` in a
terminal) shows its conversation from the session store, and a message posted to it goes through the attach
channel its console polls (orchestra_adapters/console/run_channel.py), as `orchestra attach` sends one.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from orchestra_adapters.server.body import json_object
from orchestra_adapters.server.chat_box import ChatBox, HttpChatInterviewer
from orchestra_adapters.server.service import PipelineService, RequestError

MAX_MESSAGE_CHARS = 32 * 1024
MAX_CHAT_BODY_BYTES = 4 * MAX_MESSAGE_CHARS + 1024


def routes(service: PipelineService) -> list[Route]:
    """The chat endpoints."""
    endpoints = _ChatEndpoints(service)
    return [
        Route("/pipelines/{id}/chat", endpoints.show, methods=["GET"]),
        Route("/pipelines/{id}/chat", endpoints.send, methods=["POST"]),
    ]


class _ChatEndpoints:
    def __init__(self, service: PipelineService) -> None:
        self.service = service

    async def show(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self._show, request.path_params["id"]))

    async def send(self, request: Request) -> Response:
        body = await json_object(request, MAX_CHAT_BODY_BYTES)
        message = body.get("message")
        if not isinstance(message, str) or not message.strip():
            raise RequestError(400, '"message" must be the human\'s message (a non-empty string)')
        if len(message) > MAX_MESSAGE_CHARS:
            raise RequestError(400, f'"message" is longer than {MAX_MESSAGE_CHARS} characters')
        return JSONResponse(
            await run_in_threadpool(self._send, request.path_params["id"], message), status_code=202
        )

    def _show(self, session_id: str) -> dict[str, Any]:
        box = self._box(session_id)
        if box is not None:
            return {"id": session_id, **box.to_json()}
        found = self._stored(session_id)
        wait = self._channel_wait(session_id)
        if wait is not None and wait.get("kind") == "chat":
            node = str(wait.get("node_id") or "")
            if found["node_id"] != node:  # the stored messages are an earlier node's conversation
                found["messages"] = []
            found["messages"].append({"role": "agent", "text": wait["text"]})
            found.update(node_id=node, waiting=True)
        return found

    def _send(self, session_id: str, message: str) -> dict[str, Any]:
        box = self._box(session_id)
        if box is not None:
            if not box.post(message):
                raise RequestError(409, f"no conversation of session {session_id} waits for a message")
            return {"id": session_id, "node_id": box.node_id, "sent": message}
        self._stored(session_id)  # 404 for an unknown session
        channel, wait = self._channel(session_id), self._channel_wait(session_id)
        if channel is None or wait is None or wait.get("kind") != "chat":
            raise RequestError(409, f"no conversation of session {session_id} waits for a message")
        channel.send(wait["id"], message)
        return {"id": session_id, "node_id": wait.get("node_id"), "sent": message}

    def _box(self, session_id: str) -> ChatBox | None:
        run = self.service.run_of(session_id)
        interviewer = run.interviewer if run is not None else None
        return interviewer.chat if isinstance(interviewer, HttpChatInterviewer) else None

    def _stored(self, session_id: str) -> dict[str, Any]:
        """The conversation recorded in the store (404 for an unknown session)."""
        from orchestra_adapters.server import views
        from orchestra_core.model.records import HumanInteraction, InteractionMode
        from orchestra_core.session.api import history
        from orchestra_core.session.catalog import HUMAN_INTERACTION
        from orchestra_core.session.codec import decode_record

        views.pipeline_status(self.service, session_id)
        messages: list[dict[str, str]] = []
        node: str | None = None
        turns = [
            turn
            for turn in history(self.service.store, session_id)
            if turn.type_id == HUMAN_INTERACTION.type_id
        ]
        for turn in reversed(turns):
            record = decode_record(turn)
            if isinstance(record, HumanInteraction) and record.mode is InteractionMode.INTERACTIVE:
                if record.node_id != node:
                    messages, node = [], record.node_id  # the latest node's conversation
                messages += [
                    {"role": "agent", "text": record.question},
                    {"role": "human", "text": record.answer or ""},
                ]
        return {"id": session_id, "node_id": node, "waiting": False, "messages": messages}

    def _channel_wait(self, session_id: str) -> dict[str, Any] | None:
        """What a run elsewhere waits for (None unless it is running: a killed run leaves its file)."""
        from orchestra_adapters.server import views

        channel = self._channel(session_id)
        if channel is None or views.pipeline_status(self.service, session_id)["status"] != "running":
            return None
        wait: dict[str, Any] | None = channel.waiting()
        return wait

    def _channel(self, session_id: str) -> Any:
        from orchestra_adapters.server import views

        return views.run_channel(self.service, session_id)
