"""Orchestra's test kit, shipped with the library: in-memory fakes of the ports and the port contracts.

Fakes (each passes its port's contract, so a test may use it wherever the real adapter goes):

- `InMemorySessionStore`, `InMemoryArtifactStore`, `InMemoryRunDirectory` / `InMemoryRunDirectories`,
  `InMemoryPromptLibrary`, `InMemorySessionLocks`: the storage-like ports, kept in memory.
- `InMemoryGit`: the Git port without git; worktrees are real directories, everything else is memory.
- `InMemoryGitRemotes`: the GitRemotes port without git or a network (remotes and clones are dicts).
- `InMemoryDispatcher` (a broker in memory; `serve(queues, runner)` starts a worker thread) and
  `InMemoryFleetLedger`: the fleet's Dispatcher and FleetLedger ports.
- `InMemoryTracer`: the Tracer port keeping a run's spans in a list.
- `ManualClock`: time that moves only when slept or advanced.
- `ScriptedCodergenBackend`, `ScriptedCommandRunner`, `ScriptedCommitMessages`: play scripted replies and
  record what they were asked.
- `RecordingNotifier`: the Notifier port in memory (every notification kept; or a target that always fails).
- `RecordingInterviewer` (wraps another interviewer, records every question and answer) and
  `QueueInterviewer` (hands out prepared answers); they live in `orchestra_core.interview`.

Contracts: `orchestra_core.testing.contracts` holds one base class per port. Subclass it in a class named
`Test...`, implement its factory method, and pytest runs the port's whole contract against your adapter.
Nothing here imports pytest; names load on first use, so `import orchestra_core.testing` stays cheap.
"""

from __future__ import annotations

from orchestra_core.model.lazy_exports import lazy_exports

_EXPORTS = {
    "BackendCall": "orchestra_core.testing.backends",
    "CommandCall": "orchestra_core.testing.command_runner",
    "InMemoryArtifactStore": "orchestra_core.testing.artifact_store",
    "InMemoryDispatcher": "orchestra_core.testing.dispatcher",
    "InMemoryFleetLedger": "orchestra_core.testing.fleet",
    "InMemoryGit": "orchestra_core.testing.git",
    "InMemoryGitRemotes": "orchestra_core.testing.git_remotes",
    "InMemoryPromptLibrary": "orchestra_core.testing.prompt_library",
    "InMemoryRunDirectories": "orchestra_core.testing.run_directory",
    "InMemoryRunDirectory": "orchestra_core.testing.run_directory",
    "InMemorySessionLease": "orchestra_core.testing.session_locks",
    "InMemorySessionLocks": "orchestra_core.testing.session_locks",
    "InMemorySessionStore": "orchestra_core.testing.session_store",
    "InMemoryTracer": "orchestra_core.testing.tracer",
    "ManualClock": "orchestra_core.testing.clock",
    "QueueInterviewer": "orchestra_core.interview.interviewers",
    "RecordingInterviewer": "orchestra_core.interview.interviewers",
    "RecordingNotifier": "orchestra_core.testing.notifier",
    "ScriptExhaustedError": "orchestra_core.testing.commit_messages",
    "ScriptedCodergenBackend": "orchestra_core.testing.backends",
    "ScriptedCommandRunner": "orchestra_core.testing.command_runner",
    "ScriptedCommitMessages": "orchestra_core.testing.commit_messages",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
