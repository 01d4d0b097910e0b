"""`notify:` end to end: `orchestra run` tells a webhook receiver on loopback (and a command) that it finished, failed
or waits for a human, signed with the secret; failed deliveries are retried, never fail the run, and show in
`orchestra status`; bad `notify:` config stops `run` with exit 2 before a session exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.orchestra_project import ORCHESTRA, orchestra, write_files
from tests.support.webhook_receiver import WebhookReceiver, webhook_receiver

pytestmark = pytest.mark.slow

SECRET = "correct horse battery staple"
WORKS = """digraph works {
    start [shape=Mdiamond]; done [shape=Msquare]
    build [shape=parallelogram, tool_command="echo built"]
    start -> build -> done
}
"""
BREAKS = """digraph breaks {
    start [shape=Mdiamond]; done [shape=Msquare]
    test [shape=parallelogram, tool_command="echo 'tests: 3 failed' >&2; exit 1"]
    start -> test -> done
}
"""
GATE = """digraph gate {
    start [shape=Mdiamond]; done [shape=Msquare]
    ship [shape=hexagon, label="Ship it?"]
    rework [shape=parallelogram, tool_command="echo again"]
    start -> ship
    ship -> done [label="[Y] Yes"]
    ship -> rework [label="[N] No"]
    rework -> done
}
"""


def project(root: Path, notify: str) -> Path:
    write_files(root, {"orchestra.yaml": f"backend: simulate\nnotify:\n{notify}", "works.dot": WORKS, "breaks.dot": BREAKS, "gate.dot": GATE})
    return root


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def signed_target(receiver: WebhookReceiver, events: str = "[finished, failed, needs_input, budget_exceeded]") -> str:
    return f"  - url: {receiver.url}\n    events: {events}\n    secret_env: HOOK_SECRET\n"


def test_finished_and_failed_are_delivered_signed_with_the_documented_body(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        root = project(tmp_path, signed_target(receiver))
        ok = orchestra("run", "works.dot", "--quiet", cwd=root, env=env(HOOK_SECRET=SECRET))
        bad = orchestra("run", "breaks.dot", "--quiet", cwd=root, env=env(HOOK_SECRET=SECRET))
        requests = receiver.received  # the run waited for its deliveries before it exited
    assert ok.returncode == 0 and bad.returncode == 1, ok.stderr + bad.stderr
    finished, failed = requests
    assert all(request.signed_with(SECRET) for request in requests)
    assert not finished.signed_with("another secret")
    assert finished.path == "/hooks/orchestra" and finished.headers["x-orchestra-event"] == "finished"
    body = finished.json()
    assert {key: body[key] for key in ("event", "session_id", "pipeline", "status", "failure_reason", "question", "resume")} == {
        "event": "finished", "session_id": "1", "pipeline": "works", "status": "success", "failure_reason": None,
        "question": None, "resume": None,
    }  # fmt: skip
    assert body["cost_usd"] == 0.0 and body["cost_complete"] is True and body["timestamp"].endswith("Z")
    body = failed.json()
    assert (body["event"], body["session_id"], body["pipeline"], body["status"]) == ("failed", "2", "breaks", "fail")
    assert "test" in body["failure_reason"] and "tests: 3 failed" in body["failure_reason"]
    assert body["resume"] == "orchestra resume 2"
    assert SECRET not in json.dumps([request.headers for request in requests]) + ok.stderr + bad.stderr


def test_needs_input_is_delivered_while_a_gate_waits_with_how_to_answer(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        root = project(tmp_path, signed_target(receiver, "[needs_input, finished]"))
        runner = subprocess.Popen(
            [str(ORCHESTRA), "run", "gate.dot", "--quiet"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True, env=env(HOOK_SECRET=SECRET, NO_COLOR="1"),
        )  # fmt: skip
        try:
            (asked,) = receiver.wait_for(1, 60)
            assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
            body = asked.json()
            assert asked.signed_with(SECRET)
            assert (body["event"], body["status"], body["session_id"]) == ("needs_input", "running", "1")
            assert body["question"] == {
                "node_id": "ship", "text": "Ship it?", "type": "multiple_choice",
                "options": [{"key": "Y", "label": "[Y] Yes"}, {"key": "N", "label": "[N] No"}],
                "answer": {"command": "orchestra attach 1", "url": None},
            }  # fmt: skip
            attacher = subprocess.run(
                [str(ORCHESTRA), "attach", "1"], cwd=root, input="N\n", capture_output=True, text=True, timeout=60,
                env=env(NO_COLOR="1"),
            )  # fmt: skip
            assert attacher.returncode == 0, attacher.stderr
            assert runner.wait(60) == 0
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait(10)
        assert receiver.events() == ["needs_input", "finished"]


def test_a_gate_answered_at_once_needs_nobody(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        root = project(tmp_path, f"  - url: {receiver.url}\n")
        done = orchestra("run", "gate.dot", "--auto-approve", "--quiet", cwd=root)
        assert done.returncode == 0, done.stderr
        assert receiver.events() == ["finished"]


def test_a_slack_webhook_gets_a_slack_message(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        root = project(tmp_path, "  - url_env: SLACK_WEBHOOK_URL\n    format: slack\n")
        done = orchestra("run", "breaks.dot", "--quiet", cwd=root, env=env(SLACK_WEBHOOK_URL=receiver.url))
        (request,) = receiver.received
    assert done.returncode == 1
    message = request.json()
    assert set(message) == {"text", "blocks"} and "signature" not in str(request.headers).lower()
    assert message["text"].startswith("Orchestra: :x: failed: breaks (session 1)")
    assert [block["type"] for block in message["blocks"]][:2] == ["section", "section"]
    assert "tests: 3 failed" in json.dumps(message["blocks"]) and "orchestra resume 1" in json.dumps(message["blocks"])


def test_a_command_gets_the_json_on_its_standard_input(tmp_path: Path) -> None:
    write_files(tmp_path, {"tell.py": "import os, sys\nopen(os.environ['ORCHESTRA_EVENT'] + '.json', 'w').write(sys.stdin.read())\n"})
    root = project(tmp_path, f"  - command: [{sys.executable}, tell.py]\n    events: [finished]\n")
    done = orchestra("run", "works.dot", "--quiet", cwd=root)
    assert done.returncode == 0, done.stderr
    body = json.loads((root / "finished.json").read_text())
    assert (body["event"], body["session_id"], body["pipeline"], body["status"]) == ("finished", "1", "works", "success")


def test_a_receiver_that_fails_once_gets_it_on_the_retry(tmp_path: Path) -> None:
    with webhook_receiver([500, 200]) as receiver:
        root = project(tmp_path, f"  - url: {receiver.url}\n")
        done = orchestra("run", "works.dot", "--quiet", cwd=root)
        tried = receiver.events()
    assert done.returncode == 0 and "notify:" not in done.stderr
    assert tried == ["finished", "finished"]
    assert "notify:" not in orchestra("status", "1", cwd=root).stdout


def test_a_receiver_that_always_fails_never_fails_the_run_and_status_shows_it(tmp_path: Path) -> None:
    with webhook_receiver([500]) as receiver:
        root = project(tmp_path, f"  - url: {receiver.url}/T0/B0/s3cr3t?token=abc\n")
        started = time.monotonic()
        done = orchestra("run", "works.dot", "--quiet", cwd=root)
        took = time.monotonic() - started
        tried = len(receiver.received)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "success", done.stderr
    assert tried == 3 and took < 15
    line = f"notify: webhook http://127.0.0.1:{receiver.url.split(':')[2].split('/')[0]}/hooks/… failed 3 times: HTTP 500 (finished)"
    assert line in done.stderr
    status = orchestra("status", "1", cwd=root)
    assert line in status.stdout.splitlines()
    document = json.loads(orchestra("status", "1", "--json", cwd=root).stdout)
    (failure,) = [turn for turn in document["turns"] if turn["type"] == "dev.orchestra.NotificationFailed"]
    assert (failure["event"], failure["attempts"], failure["reason"]) == ("finished", 3, "HTTP 500")
    assert document["status"] == "success"
    everything = done.stderr + status.stdout + json.dumps(document)
    assert "s3cr3t" not in everything and "token=abc" not in everything


@pytest.mark.parametrize(
    ("notify", "environment", "key", "detail"),
    [
        ("  - url: https://hooks.example.com/x\n    events: [finished, finsihed]\n", {}, "notify[0].events[1]", "expected one of finished"),
        ("  - url: ftp://files.example.com/drop\n", {}, "notify[0].url", "expected an http(s) URL"),
        ("  - url: https://hooks.example.com/x\n    secret_env: NO_SUCH_SECRET_VAR\n", {}, "notify[0].secret_env", "NO_SUCH_SECRET_VAR"),
    ],
)
def test_bad_notify_config_is_exit_2_naming_file_and_key_and_creates_no_session(
    tmp_path: Path, notify: str, environment: dict[str, str], key: str, detail: str
) -> None:
    root = project(tmp_path, notify)
    done = orchestra("run", "works.dot", cwd=root, env={k: v for k, v in env(**environment).items() if k != "NO_SUCH_SECRET_VAR"})
    assert done.returncode == 2, done.stdout + done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("orchestra: error: ") and str(root / "orchestra.yaml") in error
    assert key in error and detail in error
    assert "session" not in done.stdout
    assert not (root / ".orchestra" / "orchestra.db").exists()


def test_doctor_lists_the_targets_and_the_variables_they_lack(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "  - url: https://ci.example.com/hooks/T0/secret\n    secret_env: HOOK_SECRET\n    events: [failed]\n"
        "  - url_env: SLACK_WEBHOOK_URL\n    format: slack\n",
    )
    environment = {k: v for k, v in env().items() if k not in ("HOOK_SECRET", "SLACK_WEBHOOK_URL")}
    missing = orchestra("doctor", "--json", cwd=root, env=environment)
    lines = [check for check in json.loads(missing.stdout)["checks"] if check["name"] == "notify"]
    assert missing.returncode == 1 and [line["status"] for line in lines] == ["error", "error"]
    assert lines[0]["detail"].startswith("notify[0].secret_env: the environment variable HOOK_SECRET")
    assert lines[1]["detail"].startswith("notify[1].url_env: the environment variable SLACK_WEBHOOK_URL")
    ready = orchestra(
        "doctor", "--json", cwd=root,
        env={**environment, "HOOK_SECRET": SECRET, "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/x"},
    )  # fmt: skip
    lines = [check for check in json.loads(ready.stdout)["checks"] if check["name"] == "notify"]
    assert [(line["status"], line["detail"]) for line in lines] == [
        ("ok", "webhook https://ci.example.com/hooks/…, signed: failed"),
        ("ok", "webhook https://hooks.slack.com/services/…, as a Slack message: every event"),
    ]
    assert "secret" not in ready.stdout and SECRET not in ready.stdout


def test_ctrl_c_sends_interrupted_with_how_to_continue(tmp_path: Path) -> None:
    import signal

    with webhook_receiver() as receiver:
        root = project(tmp_path, f"  - url: {receiver.url}\n")
        write_files(root, {"stuck.dot": 'digraph stuck { start [shape=Mdiamond]; done [shape=Msquare]\n'
                           'wait [shape=parallelogram, tool_command="touch started; sleep 60"]; start -> wait -> done }\n'})
        runner = subprocess.Popen(
            [str(ORCHESTRA), "run", "stuck.dot", "--quiet"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env(NO_COLOR="1"),
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not (root / "started").exists() and time.monotonic() < deadline and runner.poll() is None:
                time.sleep(0.05)
            runner.send_signal(signal.SIGINT)
            assert runner.wait(60) == 130
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait(10)
        (request,) = receiver.received  # sent before the process exited
    body = request.json()
    assert (body["event"], body["status"], body["resume"]) == ("interrupted", "interrupted", "orchestra resume 1")
