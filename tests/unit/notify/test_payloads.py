"""The wire forms of a notification: Orchestra's JSON document, the signature, a Slack message; and how a webhook's
address is shown (never its secret parts)."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.notify.addresses import shown_url, webhook_problem
from orchestra_adapters.notify.payloads import cost_text, document, json_body, signature, slack_body
from orchestra_core.model.interview import Option
from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.notifications import Notification, NotifyEvent, WaitingQuestion

WHEN = datetime(2026, 3, 12, 10, 15, tzinfo=UTC)


def waiting(text: str = "Ship it?") -> Notification:
    question = WaitingQuestion(
        node_id="ship", text=text, type="multiple_choice", options=(Option("Y", "[Y] Yes"), Option("N", "[N] No")),
        answer_command="orchestra attach 7", answer_url="http://127.0.0.1:8765/view/7",
    )  # fmt: skip
    return Notification(
        event=NotifyEvent.NEEDS_INPUT, session_id="7", pipeline="feature", status="running", timestamp=WHEN,
        cost=CostTally(Money.usd(0.4213), 1), question=question,
    )  # fmt: skip


def failed() -> Notification:
    return Notification(
        event=NotifyEvent.FAILED, session_id="7", pipeline="feature", status="fail", timestamp=WHEN,
        failure_reason="node test failed: exit status 1", resume_command="orchestra resume 7",
    )  # fmt: skip


def test_the_document_names_event_session_pipeline_status_cost_and_the_question() -> None:
    assert document(waiting()) == {
        "event": "needs_input",
        "session_id": "7",
        "pipeline": "feature",
        "status": "running",
        "timestamp": "2026-03-12T10:15:00Z",
        "cost_usd": 0.4213,
        "cost_complete": False,
        "agent_turns_without_cost": 1,
        "failure_reason": None,
        "question": {
            "node_id": "ship",
            "text": "Ship it?",
            "type": "multiple_choice",
            "options": [{"key": "Y", "label": "[Y] Yes"}, {"key": "N", "label": "[N] No"}],
            "answer": {"command": "orchestra attach 7", "url": "http://127.0.0.1:8765/view/7"},
        },
        "resume": None,
    }
    body = json.loads(json_body(failed()))
    assert body["failure_reason"] == "node test failed: exit status 1" and body["resume"] == "orchestra resume 7"
    assert body["question"] is None and body["cost_usd"] == 0.0 and body["cost_complete"] is True


def test_the_signature_is_the_hmac_sha256_of_the_exact_body() -> None:
    body = json_body(failed())
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert signature("s3cret", body) == f"sha256={expected}"
    assert signature("other", body) != signature("s3cret", body)


def test_a_long_question_is_cut() -> None:
    text = waiting("x" * 10_000).question.text  # type: ignore[union-attr]
    assert len(text) == 3000 and text.endswith("…")


def test_a_slack_message_has_text_and_blocks_that_say_it_all() -> None:
    message = json.loads(slack_body(waiting()))
    assert set(message) == {"text", "blocks"}
    assert message["text"].startswith("Orchestra: :raising_hand: needs input: feature (session 7)")
    assert message["text"].endswith("Ship it?")
    assert all(block["type"] in ("section", "context") for block in message["blocks"])
    shown = json.dumps(message)
    for part in ("Ship it?", "[Y] Yes", "orchestra attach 7", "http://127.0.0.1:8765/view/7", "$0.4213"):
        assert part in shown, part
    failure = json.dumps(json.loads(slack_body(failed())))
    assert "node test failed: exit status 1" in failure and "orchestra resume 7" in failure


def test_a_slack_message_escapes_what_a_pipeline_or_agent_wrote() -> None:
    message = json.loads(slack_body(waiting("<!channel> see <https://evil.example|here> & more")))
    shown = json.dumps(message)
    assert "<!channel>" not in shown and "<https://evil" not in shown
    assert "&lt;!channel&gt; see &lt;https://evil.example|here&gt; &amp; more" in shown


def test_the_cost_is_said_with_what_is_unknown() -> None:
    base = failed()
    assert cost_text(base) == "none yet"
    assert cost_text(waiting()) == "$0.4213 + unknown (1 turn)"
    from attrs import evolve

    assert cost_text(evolve(base, cost=CostTally(Money.usd(1.5)))) == "$1.50"
    assert cost_text(evolve(base, cost=CostTally(Money(), 2))) == "unknown (2 turns)"


def test_a_webhook_is_shown_without_its_secret_parts() -> None:
    assert shown_url("https://hooks.slack.com/services/T0/B0/XyZsecret") == "https://hooks.slack.com/services/…"
    assert shown_url("https://bob:pw@ci.example.com:8443/hooks?token=abc") == "https://ci.example.com:8443/hooks?…"
    assert shown_url("http://[::1]:9000") == "http://[::1]:9000"


@given(
    user=st.text("abcdefghij", min_size=1, max_size=8),
    password=st.text("klmnopqrst", min_size=4, max_size=12),
    path=st.lists(st.text("uvwxyz0123", min_size=4, max_size=10), min_size=2, max_size=4),
    token=st.text("ABCDEFGHIJ", min_size=4, max_size=12),
)
def test_no_password_deep_path_or_query_value_is_ever_shown(user: str, password: str, path: list[str], token: str) -> None:
    url = f"https://{user}:{password}@hooks.example.com/{'/'.join(path)}?token={token}"
    shown = shown_url(url)
    assert password not in shown and token not in shown and path[-1] not in shown.replace(path[0], "", 1)
    assert shown.startswith("https://hooks.example.com/")


def test_only_http_and_https_webhooks_with_a_host_are_accepted() -> None:
    assert webhook_problem("https://hooks.example.com/x") is None
    assert webhook_problem("http://127.0.0.1:9000/hook") is None
    assert "expected an http(s) URL" in (webhook_problem("ftp://files.example.com/drop") or "")
    assert "with a host" in (webhook_problem("https:///nohost") or "")
    assert "spaces" in (webhook_problem("https://hooks.example.com/a b") or "")
    problem = webhook_problem("file://bob:secret@host/etc/passwd") or ""
    assert "secret" not in problem and "expected an http(s) URL" in problem
