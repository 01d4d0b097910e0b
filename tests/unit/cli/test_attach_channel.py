"""The attach channel (orchestra_adapters/console/run_channel.py): answers reach only the wait they answer,
and what is read from the channel directory is bounded and checked."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestra_adapters.console.run_channel import MAX_FILE_BYTES, ChannelError, RunChannel, channel_dir
from orchestra_cli.attach_chat import AttachResponder


def test_an_answer_reaches_the_wait_it_answers_and_older_answers_are_dropped(tmp_path: Path) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    first = channel.publish({"kind": "chat", "node_id": "synth", "text": "Draft"})
    channel.send(first, "stale")
    second = channel.publish({"kind": "chat", "node_id": "synth", "text": "Draft 2"})
    assert channel.waiting() == {"kind": "chat", "node_id": "synth", "text": "Draft 2", "id": second}
    assert channel.take(second) is None  # the answer to the first wait is gone, not taken
    channel.send(second, "Make it shorter")
    channel.send(second, "and again")
    assert channel.take(second) == "Make it shorter"
    assert channel.take(second) == "and again"
    channel.clear()
    assert channel.waiting() is None


def test_malformed_oversized_and_symlinked_files_are_ignored(tmp_path: Path) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    wait = channel.publish({"kind": "question", "node_id": "gate", "text": "Ship?"})
    (channel.inbox / "0-bad.json").write_text("{not json", encoding="utf-8")
    (channel.inbox / "1-list.json").write_text("[1, 2]", encoding="utf-8")
    (channel.inbox / "2-number.json").write_text(json.dumps({"id": wait, "reply": 7}), encoding="utf-8")
    (channel.inbox / "3-big.json").write_text(json.dumps({"id": wait, "reply": "x" * MAX_FILE_BYTES}))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"id": wait, "reply": "from a link"}), encoding="utf-8")
    os.symlink(secret, channel.inbox / "4-link.json")
    assert channel.take(wait) is None
    assert os.listdir(channel.inbox) == []
    assert secret.exists()  # the link was removed, not what it points to
    channel.waiting_file.write_text('{"id": 3}', encoding="utf-8")
    assert channel.waiting() is None


@pytest.mark.parametrize("session", ["../escape", "a/b", "", ".hidden", "x" * 200])
def test_a_session_id_that_is_not_one_names_no_channel(tmp_path: Path, session: str) -> None:
    with pytest.raises(ChannelError):
        channel_dir(tmp_path, session)


def test_the_responder_shows_a_wait_once_and_sends_the_typed_line(tmp_path: Path) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    wait = channel.publish(
        {"kind": "question", "node_id": "ship", "text": "Ship it?", "options": [{"key": "Y", "label": "Yes"}]}
    )
    read, write = os.pipe()
    out = io.StringIO()
    with os.fdopen(read) as typed, os.fdopen(write, "w") as keyboard:
        responder = AttachResponder(channel, typed, out)
        responder.wait(0.01)
        responder.wait(0.01)
        assert out.getvalue().count("[?] Ship it? (ship)") == 1 and "1. [Y] Yes" in out.getvalue()
        keyboard.write("Y\n")
        keyboard.flush()
        responder.wait(5)
    assert channel.take(wait) == "Y"
    assert "(sent to ship)" in out.getvalue()


def test_the_channel_is_private_to_the_projects_owner(tmp_path: Path) -> None:
    previous = os.umask(0o022)  # the usual umask: mkdir and open would give the group and others read access
    try:
        channel = RunChannel(channel_dir(tmp_path, "s1"))
        wait = channel.publish({"kind": "chat", "node_id": "synth", "text": "the agent's draft"})
        channel.send(wait, "a reply")
    finally:
        os.umask(previous)
    directories = (tmp_path / "attach", channel.directory, channel.inbox)
    modes = {path.name: path.stat().st_mode & 0o777 for path in directories}
    assert modes == {"attach": 0o700, "s1": 0o700, "inbox": 0o700}
    files = [channel.waiting_file, *channel.inbox.iterdir()]
    assert len(files) == 2 and {path.stat().st_mode & 0o777 for path in files} == {0o600}


def test_a_fifo_in_the_channel_is_dropped_without_blocking_the_run(tmp_path: Path) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    wait = channel.publish({"kind": "chat", "node_id": "synth", "text": "Draft"})
    os.mkfifo(channel.inbox / "0-fifo.json")
    channel.clear()
    os.mkfifo(channel.waiting_file)
    assert channel.waiting() is None
    assert channel.take(wait) is None and os.listdir(channel.inbox) == []


def test_a_cancel_request_is_read_once_it_is_newer_than_the_run_and_is_private(tmp_path: Path) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    assert channel.cancel_request(since=0) is None
    channel.request_cancel("orchestra cancel")
    request = channel.directory / "cancel.json"
    assert request.stat().st_mode & 0o777 == 0o600 and channel.directory.stat().st_mode & 0o777 == 0o700
    assert channel.cancel_request(since=0) == "orchestra cancel"
    assert channel.cancel_request(since=2**40) is None  # an earlier run's request: dropped
    assert not request.exists()


def test_a_cancel_origin_too_long_is_cut_to_a_readable_one(tmp_path: Path) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    channel.request_cancel("the web view " * 20)
    origin = channel.cancel_request(since=0)
    assert origin is not None and origin.startswith("the web view") and len(origin) <= 80


@given(st.one_of(st.text(max_size=200), st.dictionaries(st.text(max_size=20), st.text(max_size=20) | st.floats())))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_cancel_file_is_read_without_raising_and_a_bad_one_is_removed(
    tmp_path: Path, content: object
) -> None:
    channel = RunChannel(channel_dir(tmp_path, "s1"))
    channel.directory.mkdir(parents=True, exist_ok=True)
    (channel.directory / "cancel.json").write_text(
        content if isinstance(content, str) else json.dumps(content), encoding="utf-8"
    )
    origin = channel.cancel_request(since=0)
    assert origin is None or (isinstance(content, dict) and content.get("origin") == origin)
    assert origin is not None or not (channel.directory / "cancel.json").exists()  # a bad one is removed
