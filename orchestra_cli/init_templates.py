"""The files `orchestra init` writes: a commented orchestra.yaml, a starter pipeline and the cassette that
lets it run offline (the scripted provider), in the manner of examples/quickstart/."""

from __future__ import annotations

ORCHESTRA_YAML = """\
# orchestra.yaml: how Orchestra runs the pipelines of this project (every key: docs/configuration.md).
#
# As written, the starter pipeline runs offline: its model is the `scripted` provider, which plays the
# answers in cassette.yaml. Try it:  orchestra compile pipeline.dot && orchestra run pipeline.dot

providers:
  default: scripted
  scripted:
    cassette: cassette.yaml
  # A real model instead (pip install 'orchestra[anthropic]', export ANTHROPIC_API_KEY=...):
  # default: anthropic
  # anthropic:
  #   models: {smart: claude-opus-4-20250514, worker: claude-sonnet-4-20250514, cheap: claude-3-5-haiku-latest}

# The codergen backend: langgraph (a tool-using agent loop), direct (one model call), simulate (no model),
# claude-code or codex (a CLI agent with Orchestra's tools), acp (any Agent Client Protocol agent, such as
# Gemini CLI, with `acp: {command: [gemini, --experimental-acp]}`; docs/backends.md).
backend: langgraph

# The git repositories agents work in: each run gets a session branch in a worktree of its own under
# .orchestra/worktrees/, and every agent turn that writes files is a commit there. Your checkout is not touched.
workspace:
  repos:
    project:
      path: .          # this directory (a git repository)

# Optional: a budget per session (its resumes and parallel branches included). When it is reached, the turn in
# flight finishes and is committed, the run stops (status budget_exceeded, exit status 3) and says how to go on:
# orchestra resume ID --max-cost 10. See docs/running.md, "Budgets"; prices: docs/configuration.md, "pricing".
# budget:
#   max_cost_usd: 5.0
#   max_wall_time: 2h

# Optional: run tool nodes, project tools and CLI agents inside a bubblewrap sandbox, writing only their
# worktrees (needs `bwrap`, package bubblewrap; `orchestra doctor` says whether it works here). Recommended when
# agents write code that your tools then run. See docs/configuration.md, "sandbox", and docs/security.md.
# sandbox:
#   kind: bubblewrap   # none (default) | bubblewrap
#   network: false     # true: commands share the host's network
"""

PIPELINE_DOT = """\
// A starter pipeline (the language: docs/pipelines.md). Validate it with `orchestra compile pipeline.dot`,
// run it with `orchestra run pipeline.dot`, draw it with `orchestra compile pipeline.dot --render pipeline.svg`.
digraph starter {
    graph [goal="Add a hello world script", label="Starter"]

    start     [shape=Mdiamond]
    exit      [shape=Msquare]

    // max_visits: the fix-and-check loop gives up (the run fails) rather than try a sixth time.
    implement [label="Implement", prompt="Reach the goal: $goal. Write the files with your tools.", max_visits=5]
    check     [shape=parallelogram, label="Run it", tool_command="python3 hello.py"]

    start -> implement -> check
    check -> exit      [condition="outcome=success"]
    check -> implement [condition="outcome=fail", label="Fix"]
}
"""

CASSETTE_YAML = """\
# What the scripted model answers, node by node, in order (docs/backends.md). Delete this file (and the
# scripted provider in orchestra.yaml) once a real model does the work.
nodes:
  implement:
    - content: "I'll write hello.py."
      tool_calls:
        - name: "project:write-file"
          args:
            path: hello.py
            content: |
              print("Hello, world!")
    - content: "hello.py is written."
commit_messages:
  - "Add hello.py\\n\\nPrints a greeting."
default: "Done."
"""

# `orchestra init` in a subdirectory of a repository points this at the repository's top level instead.
REPO_PATH_LINE = "path: .          # this directory (a git repository)"
FILES = {"orchestra.yaml": ORCHESTRA_YAML, "pipeline.dot": PIPELINE_DOT, "cassette.yaml": CASSETTE_YAML}
