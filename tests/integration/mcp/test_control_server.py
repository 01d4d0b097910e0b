"""`orchestra mcp serve --control` as an MCP client sees it: a real subprocess over stdio (and over HTTP in
test_control_server_http.py). Runs start in the background of the server, stop at a human gate, are answered,
cancelled and resumed through its tools; bad input is refused with the message the CLI prints for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.integration.mcp.mcp_client import call, list_names, orchestra_mcp_serve, with_client
from tests.support import server as server_pipelines
from tests.support.chat_project import DRAFTS, chat_project, conversation
from tests.support.orchestra_project import orchestra, run_json, write_files
from tests.support.server import make_project

GATED = server_pipelines.GATED.replace("{", '{\n    goal="ship the release"', 1)  # the gate, with a goal to list
BROKEN = """digraph broken {
    start [shape=Mdiamond]; done [shape=Msquare]
    orphan [shape=parallelogram, tool_command="echo never"]
    start -> done
}
"""
SLOW = """digraph slow {
    start [shape=Mdiamond]; done [shape=Msquare]
    wait [shape=parallelogram, tool_command="sleep 1"]
    after [shape=parallelogram, tool_command="echo after"]
    start -> wait -> after -> done
}
"""
CONTROL_TOOLS = [
    "list_pipelines", "compile_pipeline", "list_sessions", "session_status", "session_turns", "start_run",
    "resume_run", "answer_question", "cancel_run",
]  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "project")
    write_files(root, {"pipes/gated.dot": GATED, "pipes/broken.dot": BROKEN, "notes.txt": "not a pipeline\n"})
    return root


def serve(project: Path, body: Any, tmp_path: Path) -> Any:
    log = tmp_path / "server-stderr.txt"
    result = with_client(orchestra_mcp_serve("--control", cwd=project), body, stderr=log, timeout=120)
    assert "Traceback" not in log.read_text(encoding="utf-8")
    return result


async def tool(client: Client, name: str, **arguments: Any) -> Any:
    """A tool's JSON answer (the call must succeed)."""
    text, is_error = await call(client, name, **arguments)
    assert not is_error, text
    return json.loads(text)


async def refused(client: Client, name: str, **arguments: Any) -> str:
    """A tool's refusal: the message after the MCP library's `Error executing tool NAME: `."""
    text, is_error = await call(client, name, **arguments)
    assert is_error, text
    prefix = f"Error executing tool {name}: "
    assert text.startswith(prefix), text
    return text[len(prefix):]


async def live_until(client: Client, session_id: str, wanted: str) -> dict[str, Any]:
    """The session's `live` part once it waits for a question (`wanted="question"`) or has ended (`"ended"`)."""
    with anyio.fail_after(60):
        while True:
            live = (await tool(client, "session_status", session_id=session_id))["live"]
            if (wanted == "question" and live["questions"]) or (wanted == "ended" and live["status"] != "running"):
                return dict(live)
            await anyio.sleep(0.05)


def cli_error(project: Path, *args: str) -> str:
    """What the CLI says (`orchestra: error: ...`) when it refuses `args`, expecting exit status 2 or 1."""
    result = orchestra(*args, cwd=project)
    assert result.returncode in (1, 2), result.stdout + result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("orchestra: error: "), result.stderr
    return line.removeprefix("orchestra: error: ")


def test_offers_run_control_and_no_file_tools(project: Path, tmp_path: Path) -> None:
    async def body(client: Client) -> tuple[list[str], Any]:
        return await list_names(client), await client.list_resource_templates()

    names, templates = serve(project, body, tmp_path)

    assert names == CONTROL_TOOLS
    assert not [name for name in names if any(word in name for word in ("write", "edit", "file", "read"))]
    uris = sorted(template.uri_template for template in templates.resource_templates)
    assert uris == ["orchestra://sessions/{session_id}/events", "orchestra://sessions/{session_id}/status"]


def test_lists_and_compiles_the_projects_pipelines(project: Path, tmp_path: Path) -> None:
    (project / ".orchestra").mkdir()
    (project / ".orchestra" / "hidden.dot").write_text(GATED, encoding="utf-8")

    async def body(client: Client) -> tuple[Any, Any, Any]:
        return (
            await tool(client, "list_pipelines"),
            await tool(client, "compile_pipeline", pipeline="pipes/broken.dot"),
            await tool(client, "compile_pipeline", pipeline="pipes/gated.dot"),
        )

    listed, broken, gated = serve(project, body, tmp_path)

    by_path = {entry["path"]: entry for entry in listed["pipelines"]}
    assert sorted(by_path) == ["pipes/broken.dot", "pipes/gated.dot"]  # not .orchestra's
    assert (by_path["pipes/gated.dot"]["goal"], by_path["pipes/gated.dot"]["valid"]) == ("ship the release", True)
    assert by_path["pipes/broken.dot"]["valid"] is False and by_path["pipes/broken.dot"]["errors"] >= 1
    compiled = orchestra("compile", "pipes/broken.dot", "--json", cwd=project)
    assert compiled.returncode == 1
    assert broken["diagnostics"] == json.loads(compiled.stdout)["diagnostics"]  # the CLI's diagnostics, exactly
    assert broken["valid"] is False and gated["valid"] is True and broken["path"] == "pipes/broken.dot"


def test_a_run_waits_at_its_human_gate_until_the_answer_comes_through_the_tool(project: Path, tmp_path: Path) -> None:
    async def body(client: Client) -> tuple[Any, ...]:
        started = await tool(client, "start_run", pipeline="pipes/gated.dot", set_values=["ticket=42"])
        waiting = await live_until(client, started["session_id"], "question")
        wrong = await refused(client, "answer_question", session_id=started["session_id"], answer="Maybe")
        answered = await tool(client, "answer_question", session_id=started["session_id"], answer="Ship")
        ended = await live_until(client, started["session_id"], "ended")
        page = await tool(client, "session_turns", session_id=started["session_id"], limit=2)
        events = await client.read_resource(f"orchestra://sessions/{started['session_id']}/events")
        return started, waiting, wrong, answered, ended, page, events

    started, waiting, wrong, answered, ended, page, events = serve(project, body, tmp_path)

    session = started["session_id"]
    assert (started["status"], started["pipeline"]) == ("running", "pipes/gated.dot")
    assert waiting["current_node"] == "review"
    assert [(q["node_id"], q["text"]) for q in waiting["questions"]] == [("review", "Ship it?")]
    assert "Maybe" in wrong
    assert answered["answer"] == "S"
    assert ended["status"] == "success" and ended["completed_nodes"][-2:] == ["ship", "done"]
    # The store says so too, for the CLI: the run happened, in this project, with the --set value.
    status = run_json("status", session, cwd=project)
    assert status["status"] == "success"
    assert [node["id"] for node in status["nodes"]][-2:] == ["ship", "done"]
    listed = run_json("status", cwd=project)["sessions"]
    assert [row["session_id"] for row in listed] == [session]
    # Turns are paged as `status --json --limit 2` pages them.
    cli_page = run_json("status", session, "--limit", "2", cwd=project)
    assert [t["turn_id"] for t in page["turns"]] == [t["turn_id"] for t in cli_page["turns"]]
    assert page["next_after"] == cli_page["next_after"] and page["has_more"] is True
    recorded = json.loads(events.contents[0].text)
    assert any(event.get("node_id") == "ship" for event in recorded)


def test_cancelled_at_the_gate_then_resumed_and_finished(project: Path, tmp_path: Path) -> None:
    async def body(client: Client) -> tuple[Any, ...]:
        session = (await tool(client, "start_run", pipeline="pipes/gated.dot"))["session_id"]
        await live_until(client, session, "question")
        cancelled = await tool(client, "cancel_run", session_id=session)
        ended = await live_until(client, session, "ended")
        again = await refused(client, "cancel_run", session_id=session)
        resumed = await tool(client, "resume_run", session_id=session)
        waiting = await live_until(client, session, "question")
        await tool(client, "answer_question", session_id=session, answer="R")
        finished = await live_until(client, session, "ended")
        once_more = await tool(client, "resume_run", session_id=session)
        return session, cancelled, ended, again, resumed, waiting, finished, once_more

    session, cancelled, ended, again, resumed, waiting, finished, once_more = serve(project, body, tmp_path)

    assert cancelled["status"] == "cancelling" and ended["status"] == "cancelled"
    assert again == f"session {session} is not running (it ended: cancelled)"
    assert resumed["session_id"] == session and waiting["current_node"] == "review"
    assert finished["status"] == "success" and "rework" in finished["completed_nodes"]
    assert "prepare" not in finished["completed_nodes"]  # resumed after it, from the checkpoint
    cli = orchestra("resume", session, cwd=project)
    assert once_more["message"] == cli.stdout.strip()  # "already ended (success); nothing to resume"
    assert run_json("status", session, cwd=project)["status"] == "success"


def test_a_run_the_server_left_when_it_exited_is_resumed_by_the_next_one(project: Path, tmp_path: Path) -> None:
    async def start(client: Client) -> str:
        session = str((await tool(client, "start_run", pipeline="pipes/gated.dot"))["session_id"])
        await live_until(client, session, "question")
        return session  # the client goes, the server exits: its run is stopped, not lost

    session = serve(project, start, tmp_path)
    assert run_json("status", session, cwd=project)["status"] != "running"

    async def finish(client: Client) -> dict[str, Any]:
        await tool(client, "resume_run", session_id=session)
        await live_until(client, session, "question")
        await tool(client, "answer_question", session_id=session, answer="S")
        return await live_until(client, session, "ended")

    assert serve(project, finish, tmp_path)["status"] == "success"
    assert run_json("status", session, cwd=project)["status"] == "success"


def test_refuses_what_the_cli_refuses_with_the_same_messages(project: Path, tmp_path: Path) -> None:
    expected = {
        "set": cli_error(project, "run", "pipes/gated.dot", "--set", "no-equals"),
        "backend": cli_error(project, "run", "pipes/gated.dot", "--backend", "nonesuch"),
        "cost": cli_error(project, "run", "pipes/gated.dot", "--max-cost", "-3"),
        "invalid": cli_error(project, "run", "pipes/broken.dot"),
        "status": cli_error(project, "status", "999"),
        "limit": cli_error(project, "status", "--limit", "0"),
        "resume": cli_error(project, "resume", "999"),
    }

    async def body(client: Client) -> dict[str, str]:
        return {
            "set": await refused(client, "start_run", pipeline="pipes/gated.dot", set_values=["no-equals"]),
            "backend": await refused(client, "start_run", pipeline="pipes/gated.dot", backend="nonesuch"),
            "cost": await refused(client, "start_run", pipeline="pipes/gated.dot", max_cost="-3"),
            "invalid": (await refused(client, "start_run", pipeline="pipes/broken.dot")).splitlines()[0],
            "status": await refused(client, "session_status", session_id="999"),
            "limit": await refused(client, "list_sessions", limit=0),
            "resume": await refused(client, "resume_run", session_id="999"),
        }

    said = serve(project, body, tmp_path)

    assert said["invalid"].startswith(str(project / "pipes" / "broken.dot"))
    expected["invalid"] = expected["invalid"].replace("pipes/broken.dot", str(project / "pipes" / "broken.dot"), 1)
    assert said == expected
    assert run_json("status", cwd=project)["sessions"] == []  # nothing refused was recorded


def test_acts_only_inside_its_project(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.dot"
    outside.write_text(GATED, encoding="utf-8")
    (project / "pipes" / "link.dot").symlink_to(outside)
    (project / "escape").symlink_to(tmp_path)

    async def body(client: Client) -> tuple[Any, ...]:
        return (
            await refused(client, "start_run", pipeline="../outside.dot"),
            await refused(client, "start_run", pipeline=str(outside)),
            await refused(client, "compile_pipeline", pipeline="pipes/link.dot"),
            await refused(client, "compile_pipeline", pipeline="escape/outside.dot"),
            await refused(client, "compile_pipeline", pipeline=".orchestra/../.git/x.dot"),
            await tool(client, "list_pipelines"),
        )

    dotdot, absolute, link, escape, into_git, listed = serve(project, body, tmp_path)

    root = project.resolve()
    assert dotdot == f"path '../outside.dot' is outside the project ({root})"  # `orchestra serve`'s words
    assert absolute == f"path {str(outside)!r} is outside the project ({root})"
    assert link == f"path 'pipes/link.dot' is outside the project ({root})"
    assert escape == f"path 'escape/outside.dot' is outside the project ({root})"
    assert ".git" in into_git
    assert [entry["path"] for entry in listed["pipelines"]] == ["pipes/broken.dot", "pipes/gated.dot"]
    assert run_json("status", cwd=project)["sessions"] == []


def test_an_interactive_node_played_by_the_scripted_model_gets_the_humans_messages(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "project")

    async def waiting_after(client: Client, session: str, text: str) -> dict[str, Any]:
        with anyio.fail_after(60):
            while True:
                chat = (await tool(client, "session_status", session_id=session))["live"].get("chat")
                if chat and chat["waiting"] and chat["messages"][-1]["text"] == text:
                    return dict(chat)
                await anyio.sleep(0.05)

    async def body(client: Client) -> tuple[Any, ...]:
        session = (await tool(client, "start_run", pipeline="chat.dot"))["session_id"]
        first = await waiting_after(client, session, DRAFTS[0])
        sent = await tool(client, "answer_question", session_id=session, answer="Shorter, please.")
        await waiting_after(client, session, DRAFTS[1])
        await tool(client, "answer_question", session_id=session, answer="/done")
        return session, first, sent, await live_until(client, session, "ended")

    session, first, sent, ended = serve(project, body, tmp_path)

    assert first["node_id"] == "synth"
    assert sent == {"session_id": session, "chat": "synth", "sent": "Shorter, please."}
    assert ended["status"] == "success"
    assert conversation(project, session) == [(DRAFTS[0], "Shorter, please."), (DRAFTS[1], "/done")]


def test_a_budget_given_to_start_run_stops_the_run_and_resume_run_continues_it_with_a_higher_one(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "project")
    write_files(project, {"slow.dot": SLOW})

    async def body(client: Client) -> tuple[Any, ...]:
        session = (await tool(client, "start_run", pipeline="slow.dot", max_wall_time="0.5s"))["session_id"]
        stopped = await live_until(client, session, "ended")
        await tool(client, "resume_run", session_id=session, max_wall_time="1h")
        return stopped, await live_until(client, session, "ended")

    stopped, finished = serve(project, body, tmp_path)

    assert stopped["status"] == "budget_exceeded" and "after" not in stopped["completed_nodes"]
    assert finished["status"] == "success" and finished["completed_nodes"][-2:] == ["after", "done"]
