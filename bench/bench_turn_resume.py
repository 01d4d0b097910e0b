"""Speed of `orchestra resume SESSION --turn TURN` on a 10,000-turn session; prints one JSON object.

A real run (scripted model, a real git repo) is killed in the middle of its `implement` node after one
agent turn that committed; then `--turns` more AgentTurns of that node (copies of the real one, with its
transcript and its LangGraph agent state, every tenth with the real commit) are appended to the session
through the store API, as if the agent had gone on for that long. Timed, as whole processes with bytecode
cached (median of `--runs`): `orchestra resume 1 --turn T` for T a committing turn near the end and for T a
read-only turn near the end whose repo's latest commit is far back. Each resume re-enters `implement`,
whose agent continues from the turn's agent state and finishes at once ("Done."), and the run ends.
The resume itself (finding the turn and its checkpoint, closing the interrupted node, putting the repo back,
re-entering the node) is timed with `--backend simulate`, target under 0.5 s whole process; the same resume
with the LangGraph agent continuing its conversation is reported beside it, with what importing LangChain
and LangGraph alone costs a process (the floor of any run with the LangGraph backend).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attrs import evolve  # noqa: E402

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore  # noqa: E402
from orchestra_core.model.turn import AgentTurn  # noqa: E402
from orchestra_core.session import api  # noqa: E402
from orchestra_core.session.catalog import AGENT_TURN  # noqa: E402
from orchestra_core.session.codec import decode_record  # noqa: E402

ORCHESTRA = Path(sys.executable).with_name("orchestra")
TARGET_S = 0.5
CONFIG = """providers:
  default: scripted
  scripted:
    cassette: cassette.yaml
backend: langgraph
workspace:
  repos:
    app: {path: ../app}
  tools:
    app:
      die: {command: "kill -9 $PPID"}
agents:
  coder:
    tools: [app:die]
"""
PIPELINE = """digraph long {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [agent="coder", prompt="Write the files", agent.max_turns=1000000]
    start -> implement -> exit
}
"""
KILLED = r"""nodes:
  implement:
    - content: "Writing a.py."
      tool_calls: [{name: "app:write-file", args: {path: a.py, content: "A = 1\n"}}]
    - content: "Stopping here."
      tool_calls: [{name: "app:die", args: {}}]
commit_messages: ["Add a.py"]
"""
FINISH = 'nodes:\n  implement: ["Done."]\n'


def _env(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        HOME=str(home), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1",
        GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com",
    )
    return env


def build(root: Path, turns: int, env: dict[str, str]) -> tuple[Path, str, str]:
    """The project with its long session; returns it, a committing turn and a read-only turn near the end."""
    app = root / "app"
    app.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=app, env=env, check=True)
    project = root / "project"
    project.mkdir()
    for name, text in {"orchestra.yaml": CONFIG, "long.dot": PIPELINE, "cassette.yaml": KILLED}.items():
        (project / name).write_text(text, encoding="utf-8")
    killed = subprocess.run([str(ORCHESTRA), "run", "long.dot", "--quiet"], cwd=project, env=env, capture_output=True)
    assert killed.returncode == -9, killed.stderr
    store = SqliteSessionStore(project / ".orchestra" / "orchestra.db")
    try:
        [first] = [decode_record(turn) for turn in api.history(store, "1") if turn.type_id == AGENT_TURN.type_id]
        assert isinstance(first, AgentTurn)
        committing = read_only = ""
        for number in range(1, turns):
            commits = first.commits if number % 10 == 0 and number < turns // 2 else ()
            stored = api.append_record(store, "1", evolve(first, turn_number=number, commits=commits))
            if number == turns - 10:
                read_only = stored.turn_id
            if number == turns - 20:
                stored = api.append_record(store, "1", evolve(first, turn_number=number, commits=first.commits))
                committing = stored.turn_id
    finally:
        store.close()
    (project / "cassette.yaml").write_text(FINISH, encoding="utf-8")
    return project, committing, read_only


def time_resume(project: Path, turn: str, env: dict[str, str], runs: int, *extra: str) -> dict[str, float]:
    """Median whole-process time of `orchestra resume 1 --turn TURN`, each run on the session as built (the
    store files are put back before every run, so each one is a first resume after the kill: the interrupted
    node is closed, and its 10,000 turns since the checkpoint are read once), and the time until the node
    re-enters (its `> implement` progress line)."""
    state = project / ".orchestra"
    saved = project.parent / "saved-state"
    if not saved.exists():
        saved.mkdir()
        for file in state.glob("*.db*"):
            shutil.copy2(file, saved / file.name)
    command = [str(ORCHESTRA), "resume", "1", "--turn", turn, *extra]
    whole, entered = [], []
    for run in range(runs + 1):  # the first run writes the bytecode caches
        for file in state.glob("*.db*"):
            file.unlink()
        for file in saved.iterdir():
            shutil.copy2(file, state / file.name)
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert process.stdout is not None
        reentered = None
        for line in process.stdout:
            if reentered is None and line.startswith("> implement"):
                reentered = time.perf_counter() - started
        code = process.wait()
        took = time.perf_counter() - started
        assert code == 0 and reentered is not None, (process.stderr.read() if process.stderr else "")
        if run:
            whole.append(took)
            entered.append(reentered)
    return {
        "median_s": round(statistics.median(whole), 4),
        "min_s": round(min(whole), 4),
        "node_reentered_median_s": round(statistics.median(entered), 4),
    }


def import_floor(env: dict[str, str], runs: int) -> float:
    """What importing the LangGraph agent stack alone costs a process (langchain_core chat models, langgraph)."""
    code = "import langchain_core.language_models.chat_models, langgraph.graph, langgraph.checkpoint.sqlite"
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times[1:]), 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-turn-resume-") as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        env = _env(root / "home")
        started = time.perf_counter()
        project, committing, read_only = build(root, args.turns, env)
        built = time.perf_counter() - started
        results = {
            "resume_turn_with_commit": time_resume(project, committing, env, args.runs, "--backend", "simulate"),
            "resume_read_only_turn": time_resume(project, read_only, env, args.runs, "--backend", "simulate"),
            "resume_turn_langgraph_agent": time_resume(project, committing, env, args.runs),
        }
        floor = import_floor(env, args.runs)
    worst = max(results["resume_turn_with_commit"]["median_s"], results["resume_read_only_turn"]["median_s"])
    print(json.dumps({
        "bench": "turn_resume",
        "session_turns": args.turns,
        "build_s": round(built, 2),
        **results,
        "langgraph_import_floor_s": floor,
        "target_s": TARGET_S,
        "ok": worst < TARGET_S,
    }, indent=2))
    return 0  # a missed target is reported ("ok": false), not a failure of `make bench`


if __name__ == "__main__":
    sys.exit(main())
