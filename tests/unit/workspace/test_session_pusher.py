"""SessionPusher: a burst of checkpoint pushes is one push, leases follow the last pushed SHA, failures are
PushFailed warnings (the next push retries), a protected branch is never pushed."""

from __future__ import annotations

import threading
from pathlib import Path

from orchestra_core.model.workspace_events import PushFailed, RemotePushed, WorkspaceEvent
from orchestra_core.testing.git_remotes import InMemoryGitRemotes
from orchestra_core.workspace.pushes import ON_CHECKPOINT, ON_COMPLETION, PushTarget, SessionPusher

URL = "https://bob:secret@git.example/app.git"
BRANCH = "orchestra/p/1"


class GatedRemotes(InMemoryGitRemotes):
    """Holds the first push until `release` is set, counting every push."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.pushes: list[str] = []

    def push(self, repo: Path, url: str, local_sha: str, branch: str, *, expected_remote_sha: str) -> None:
        self.pushes.append(local_sha)
        self.entered.set()
        assert self.release.wait(30)
        super().push(repo, url, local_sha, branch, expected_remote_sha=expected_remote_sha)


def setup(tmp_path: Path, remotes: InMemoryGitRemotes, policy: str = ON_CHECKPOINT, branch: str = BRANCH):
    remotes.add_remote(URL)
    remotes.clone(URL, tmp_path / "app")
    events: list[WorkspaceEvent] = []
    target = PushTarget("app", tmp_path / "app", URL, branch, policy, ("main", "release/*"))
    return SessionPusher(remotes, {"app": target}, events.append, session_id="s"), events


def test_a_burst_of_checkpoints_is_one_push_after_the_one_in_flight(tmp_path: Path) -> None:
    remotes = GatedRemotes()
    pusher, events = setup(tmp_path, remotes)
    shas = [remotes.commit(tmp_path / "app") for _ in range(4)]
    pusher.request({"app": shas[0]})
    assert remotes.entered.wait(30)  # the first push is in flight
    for sha in shas[1:]:
        pusher.request({"app": sha})
    remotes.release.set()
    pusher.finish(None)
    assert remotes.pushes == [shas[0], shas[3]]
    assert [e.sha for e in events if isinstance(e, RemotePushed)] == [shas[0], shas[3]]
    assert remotes.branches(URL)[BRANCH] == shas[3]
    assert all("secret" not in e.remote_url for e in events if isinstance(e, RemotePushed))


def test_on_completion_pushes_only_at_the_end_and_only_the_final_heads(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    pusher, events = setup(tmp_path, remotes, ON_COMPLETION)
    first, final = remotes.commit(tmp_path / "app"), remotes.commit(tmp_path / "app")
    pusher.request({"app": first})
    pusher.finish({"app": final})
    assert [e.sha for e in events if isinstance(e, RemotePushed)] == [final]


def test_a_failed_run_pushes_nothing_with_on_completion(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    pusher, events = setup(tmp_path, remotes, ON_COMPLETION)
    pusher.finish(None)
    assert events == [] and BRANCH not in remotes.branches(URL)


def test_a_failure_is_a_warning_and_the_next_push_retries(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    pusher, events = setup(tmp_path, remotes, ON_COMPLETION)
    sha = remotes.commit(tmp_path / "app")
    remotes.fail(URL, "network")
    pusher.finish({"app": sha})
    [failed] = events
    assert isinstance(failed, PushFailed) and (failed.category, failed.level) == ("network", "warning")
    assert "secret" not in failed.reason
    remotes.heal(URL)
    pusher.finish({"app": sha})
    assert isinstance(events[-1], RemotePushed) and remotes.branches(URL)[BRANCH] == sha


def test_a_protected_branch_is_never_pushed(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    pusher, events = setup(tmp_path, remotes, ON_COMPLETION, branch="release/1.0")
    pusher.finish({"app": remotes.commit(tmp_path / "app")})
    [failed] = events
    assert isinstance(failed, PushFailed) and failed.category == "protected"
    assert "release/1.0" not in remotes.branches(URL)


def test_a_resumed_session_asks_the_remote_for_its_lease_until_it_answers(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    remotes.add_remote(URL)
    remotes.clone(URL, tmp_path / "app")
    earlier, final = remotes.commit(tmp_path / "app"), remotes.commit(tmp_path / "app")
    remotes.push(tmp_path / "app", URL, earlier, BRANCH, expected_remote_sha="")  # the run before the resume
    events: list[WorkspaceEvent] = []
    target = PushTarget("app", tmp_path / "app", URL, BRANCH, ON_COMPLETION)
    pusher = SessionPusher(remotes, {"app": target}, events.append, session_id="s", lookup=["app"])
    remotes.fail(URL, "network")  # unreachable when the resumed run first pushes: a network warning
    pusher.finish({"app": final})
    [failed] = events
    assert isinstance(failed, PushFailed) and failed.category == "network"
    remotes.heal(URL)  # the next push asks again, so its lease is what the remote holds, not ""
    pusher.finish({"app": final})
    assert isinstance(events[-1], RemotePushed) and remotes.branches(URL)[BRANCH] == final
