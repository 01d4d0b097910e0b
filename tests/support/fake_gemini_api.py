"""A scripted fake of the Gemini API (generativelanguage, v1beta) as the real Gemini CLI uses it, served on loopback
so the ACP backend is tested against the real `gemini --acp` offline (tests/cli_agents/README.md). Same scripts as
the Anthropic and OpenAI fakes (tests/support/fake_provider_api.py): a list of `Reply` steps, one per model request.

The CLI's model requests are `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`; each is answered with
`data:` chunks of GenerateContentResponse (the text, then each tool call as a `functionCall` part) and the
`usageMetadata`. Requests on the side (`:countTokens`, a non-streamed `:generateContent`) do not consume a step
and are recorded in `side_requests`. Out of steps: HTTP 500 with a Google-style JSON error that says so."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.fake_provider_api import Reply, ToolUse, _FakeAPI, _Handler, _usage_tokens

__all__ = ["FakeGeminiAPI", "Reply", "ToolUse"]

# /v1beta/models/<model>:<method>; a model id may hold dots and dashes (gemini-2.5-flash), never a colon
_MODEL_CALL = re.compile(r"^/(?P<version>v1(?:alpha|beta)?)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")


def _google_error(status: int, reason: str, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": reason}}


class FakeGeminiAPI(_FakeAPI):
    """The Gemini API as the Gemini CLI uses it. `base_url` (no path) is what GOOGLE_GEMINI_BASE_URL takes.
    `models` records the model id of each step's request, in order."""

    def __enter__(self) -> FakeGeminiAPI:
        super().__enter__()
        return self

    def __init__(self, script: Sequence[Reply], **kwargs: Any) -> None:
        super().__init__(script, **kwargs)
        self.models: list[str] = []

    def handle(self, handler: _Handler, method: str, path: str, body: dict[str, Any] | None) -> None:
        match = _MODEL_CALL.match(path)
        if method != "POST" or match is None:
            handler.not_found(method, path)
            return
        model, call = match["model"], match["method"]
        body = body or {}
        if call == "countTokens":
            self.record_side(path, body)
            handler.send_json(200, {"totalTokens": _usage_tokens(body)})
            return
        failing = self.failing_models.get(model)
        if failing is not None:
            with self._lock:
                self.failed_requests.append(model)
            handler.send_json(failing, _google_error(failing, "UNAVAILABLE", "The model is overloaded."))
            return
        if call == "generateContent":
            # the CLI's own small calls (a JSON answer for its next-speaker or loop checks): never a step
            self.record_side(path, body)
            handler.send_json(200, self._response(Reply(text=self._side_text(body)), model, body))
            return
        if call != "streamGenerateContent":
            handler.not_found(method, path)
            return
        step = self.next_step(body)
        if step is None:
            message = f"fake API: the script is used up (request {len(self.requests)} of a {len(self.requests) - 1}-step script)"
            handler.send_json(500, _google_error(500, "INTERNAL", message))
            return
        with self._lock:
            self.models.append(model)
        handler.send_data_events(self._chunks(step, model, body))

    @staticmethod
    def _side_text(body: Mapping[str, Any]) -> str:
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            return json.dumps({"reasoning": "The fake model has finished.", "next_speaker": "user"})
        return "Fake side reply"

    def _parts(self, reply: Reply) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if reply.text:
            parts.append({"text": reply.text})
        for call in reply.tool_calls:
            parts.append(
                {"functionCall": {"id": self.new_id("call_fake"), "name": call.name, "args": dict(call.arguments)}}
            )
        return parts

    def _usage(self, reply: Reply, parts: list[dict[str, Any]], body: Mapping[str, Any]) -> dict[str, int]:
        given = reply.usage or {}
        prompt = given.get("input_tokens", _usage_tokens(body))
        output = given.get("output_tokens", max(1, len(json.dumps(parts)) // 4))
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": output, "totalTokenCount": prompt + output}
        if given.get("cached_tokens"):
            usage["cachedContentTokenCount"] = given["cached_tokens"]
        return usage

    def _response(self, reply: Reply, model: str, body: Mapping[str, Any]) -> dict[str, Any]:
        parts = self._parts(reply)
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": self._usage(reply, parts, body),
            "modelVersion": model,
            "responseId": self.new_id("resp_fake"),
        }

    def _chunks(self, reply: Reply, model: str, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The text in one chunk, each function call in its own, the finish reason and usage on the last."""
        whole = self._response(reply, model, body)
        parts = whole["candidates"][0]["content"]["parts"] or [{"text": ""}]
        chunks: list[dict[str, Any]] = []
        for index, part in enumerate(parts):
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
            last = index == len(parts) - 1
            if last:
                candidate["finishReason"] = "STOP"
            chunk: dict[str, Any] = {
                "candidates": [candidate],
                "modelVersion": model,
                "responseId": whole["responseId"],
            }
            if last:
                chunk["usageMetadata"] = whole["usageMetadata"]
            chunks.append(chunk)
        return chunks
