"""A tool stage's turn (issue 31, item 6): the handler's seam around its command, the turn, message and trailers."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.tool import ToolHandler
from orchestra_core.model.graph import Node
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.testing.command_runner import ScriptedCommandRunner
from orchestra_core.workspace.tool_stage import ToolStageRun, one_line
from tests.support.engine import Harness, graph

PIPELINE = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [shape=parallelogram, tool_command="make test", tool_hooks.post="echo post", auto_status=true]
    start -> check -> done
}
"""


class RecordingTurns:
    """A ToolTurns that notes when it is asked to watch and when the command's end reaches it."""

    def __init__(self, runner: ScriptedCommandRunner) -> None:
        self.runner = runner
        self.log: list[Any] = []

    def __call__(self, node: Node, stage: StageRun, command: str) -> Any:
        self.log.append(("watch", node.id, command, len(self.runner.calls)))

        def end(result: CommandResult) -> None:
            self.log.append(("end", result.exit_code, [call.command for call in self.runner.calls]))

        return end


def test_the_stage_is_watched_before_its_command_and_committed_after_it_and_its_hooks_whatever_the_exit_code() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(3, "", "boom", 0.5))
    turns = RecordingTurns(runner)
    Harness(command_runner=runner, handlers={"tool": ToolHandler(runner, ".", turns)}).run(graph(PIPELINE))
    assert turns.log[0] == ("watch", "check", "make test", 0)
    [(kind, code, ran)] = turns.log[1:]
    assert (kind, code) == ("end", 3) and ran[0] == "make test" and "echo post" in ran[-1]


def test_a_vetoed_command_commits_nothing() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(1, "", "no", 0.1))
    turns = RecordingTurns(runner)
    vetoed = PIPELINE.replace('tool_hooks.post="echo post"', 'tool_hooks.pre="exit 1"')
    Harness(command_runner=runner, handlers={"tool": ToolHandler(runner, ".", turns)}).run(graph(vetoed))
    assert turns.log == []


def test_the_turn_names_the_stage_its_command_and_how_it_ended() -> None:
    run = ToolStageRun("build", "make all\n  && make check", CommandResult(2, "out", "err", 1.5))
    turn = run.turn(["app:dist/a.js", "lib:b.txt"])
    assert (turn.node_id, turn.turn_number, turn.model, turn.provider, turn.by_tool_stage) == (
        "build", 0, "tool_command", "tool", True,
    )
    assert turn.files_written == ("app:dist/a.js", "lib:b.txt") and turn.duration_s == 1.5
    [call] = turn.tool_calls
    assert (call.name, dict(call.args), call.result) == ("shell", {"command": "make all\n  && make check"}, "exit code 2")
    assert run.trailers() == {"Orchestra-Command": "make all && make check", "Orchestra-Exit-Code": "2"}
    assert run.message(["dist/a.js"]) == (
        "Tool stage build: make all && make check\n\nThe command exited with code 2; it changed:\n- dist/a.js"
    )


def test_a_killed_command_says_so_and_long_commands_are_capped() -> None:
    timed_out = ToolStageRun("t", "sleep 100", CommandResult(None, "", "", 2.0, timed_out=True))
    cancelled = ToolStageRun("t", "x" * 500, CommandResult(None, "", "", 2.0, cancelled=True))
    assert timed_out.trailers()["Orchestra-Exit-Code"] == "timed-out" and timed_out.ending == "timed out"
    assert cancelled.trailers()["Orchestra-Exit-Code"] == "cancelled"
    assert cancelled.trailers()["Orchestra-Command"] == "x" * 197 + "..."
    lines = cancelled.message([f"f{n}" for n in range(60)]).split("\n")
    assert len(lines[0]) == 72 and lines[0].endswith("...")
    assert lines[2] == "The command was cancelled (its processes were killed); it changed:"
    assert lines[3:] == [f"- f{n}" for n in range(50)] + ["- ... and 10 more"]
    assert timed_out.message(["a"]).split("\n")[2] == "The command timed out (its processes were killed); it changed:"


@given(st.text(), st.integers(min_value=4, max_value=300))
def test_one_line_is_one_printable_line_within_the_limit(text: str, limit: int) -> None:
    line = one_line(text, limit)
    assert len(line) <= limit and line == line.strip()
    assert all(c.isprintable() for c in line)
    if len(" ".join(text.split())) <= limit and all(c.isprintable() or c.isspace() for c in text):
        assert line == " ".join(text.split())
