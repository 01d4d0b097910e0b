"""What a notification looks like on the wire: Orchestra's JSON document, a Slack message, and the signature."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC
from typing import Any

from orchestra_core.model.notifications import Notification, NotifyEvent, WaitingQuestion

SIGNATURE_HEADER = "X-Orchestra-Signature"
SLACK_SECTION_LIMIT = 3000  # characters of a Slack section's text
_HEADLINES = {
    NotifyEvent.FINISHED: ":white_check_mark: finished",
    NotifyEvent.FAILED: ":x: failed",
    NotifyEvent.NEEDS_INPUT: ":raising_hand: needs input",
    NotifyEvent.BUDGET_EXCEEDED: ":money_with_wings: stopped by its budget",
    NotifyEvent.CANCELLED: ":no_entry_sign: cancelled",
    NotifyEvent.INTERRUPTED: ":pause_button: interrupted",
}


def document(notification: Notification) -> dict[str, Any]:
    """Orchestra's JSON document of a notification (docs/running.md, Notifications)."""
    cost = notification.cost
    question = notification.question
    return {
        "event": notification.event.value,
        "session_id": notification.session_id,
        "pipeline": notification.pipeline,
        "status": notification.status,
        "timestamp": notification.timestamp.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "cost_usd": cost.json_value(),
        "cost_complete": cost.complete,
        "agent_turns_without_cost": cost.unknown,
        "failure_reason": notification.failure_reason,
        "question": _question(question) if question is not None else None,
        "resume": notification.resume_command,
    }


def _question(question: WaitingQuestion) -> dict[str, Any]:
    return {
        "node_id": question.node_id,
        "text": question.text,
        "type": question.type,
        "options": [{"key": option.key, "label": option.label} for option in question.options],
        "answer": {"command": question.answer_command, "url": question.answer_url},
    }


def json_body(notification: Notification) -> bytes:
    """The JSON document as the bytes sent (and signed)."""
    return json.dumps(document(notification), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def signature(secret: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256 of the body bytes, keyed with the secret>` (the `X-Orchestra-Signature` value)."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


# Slack -------------------------------------------------------------------------------------------------------
def slack_body(notification: Notification) -> bytes:
    """A Slack incoming webhook's message: `text` (the notification's one line, also what a phone shows) and
    blocks that lay it out. Every value is escaped: text written by a pipeline or an agent can neither mention
    anyone (`<!channel>`) nor make a link."""
    return json.dumps(slack_message(notification), ensure_ascii=False).encode("utf-8")


def slack_message(notification: Notification) -> dict[str, Any]:
    headline = f"{_HEADLINES[notification.event]}: {_escape(notification.pipeline)} (session {notification.session_id})"
    blocks: list[dict[str, Any]] = [
        _section(f"*{headline}*"),
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*Status*\n{_escape(notification.status)}"},
                {"type": "mrkdwn", "text": f"*Cost*\n{cost_text(notification)}"},
            ],
        },
    ]
    if notification.failure_reason:
        blocks.append(_section(f"*Why*\n{_escape(notification.failure_reason)}"))
    question = notification.question
    if question is not None:
        blocks.append(_section(_question_text(question)))
        how = _answer_text(question)
        if how:
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": how}]})
    if notification.resume_command:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"Continue: `{notification.resume_command}`"}]})
    text = f"Orchestra: {_plain(headline)}"
    if question is not None:
        text += f": {_escape(_first_line(question.text))}"
    elif notification.failure_reason:
        text += f": {_escape(_first_line(notification.failure_reason))}"
    return {"text": text, "blocks": blocks}


def cost_text(notification: Notification) -> str:
    """`$0.4210`, `$0.42 + unknown (2 turns)`, `unknown (3 turns)`, `none yet`."""
    cost = notification.cost
    if cost.complete and not cost.known:
        return "none yet"
    return cost.text()


def _question_text(question: WaitingQuestion) -> str:
    lines = [f"*Waiting at `{_escape(question.node_id)}`*", _escape(question.text)]
    lines += [f"• `{_escape(option.key)}` {_escape(option.label)}" for option in question.options]
    return "\n".join(lines)


def _answer_text(question: WaitingQuestion) -> str:
    ways = []
    if question.answer_command:
        ways.append(f"`{_escape(question.answer_command)}`")
    url = question.answer_url
    if url:  # the server's address and the session id: ours, not an agent's
        ways.append(f"<{url}|{_escape(url)}>" if not set("<>|") & set(url) else _escape(url))
    return "Answer with " + " or at ".join(ways) if ways else ""


def _section(text: str) -> dict[str, Any]:
    if len(text) > SLACK_SECTION_LIMIT:
        text = text[: SLACK_SECTION_LIMIT - 1] + "…"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _escape(text: str) -> str:
    """Slack's escaping of mrkdwn text: `&`, `<` and `>` (what makes mentions and links)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain(text: str) -> str:
    return text.replace("*", "")


def _first_line(text: str, width: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
