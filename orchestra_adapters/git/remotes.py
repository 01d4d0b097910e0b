"""SubprocessGitRemotes: clone, fetch and push through the git executable, prompt-free and with a timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from orchestra_adapters.git.command import decode, git_environment
from orchestra_core.model.remote_urls import redact_text
from orchestra_core.ports.git_remotes import (
    RemoteError,
    RemoteRefs,
    check_remote_argument,
    classify_remote_failure,
)

# Local git pins `protocol.allow=never`; remote calls need transports, so only the ones that run arbitrary
# commands are refused (`ext::` runs a program named in the URL, `fd::` talks over inherited descriptors).
_REMOTE_CONFIG = (
    "-c", "color.ui=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "core.fsmonitor=false",
    "-c", f"core.hooksPath={os.devnull}",
    "-c", "protocol.ext.allow=never",
    "-c", "protocol.fd.allow=never",
    "-c", "credential.interactive=false",
)
_BATCH_SSH = "ssh -o BatchMode=yes"
DEFAULT_TIMEOUT_S = 600.0
_TRACKING = "refs/remotes/orchestra"


def remote_environment(base: Mapping[str, str] | None = None, ssh_command: str | None = None) -> dict[str, str]:
    """The environment of a remote git call: the hardened local one, never prompting.

    The user's own GIT_SSH_COMMAND / GIT_SSH / GIT_ASKPASS are kept (they are how CI hands credentials over);
    otherwise ssh runs in batch mode (`ssh_command`, the user's `core.sshCommand`, is used instead when set).
    """
    env = git_environment(base)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["SSH_ASKPASS_REQUIRE"] = "never"
    env.pop("SSH_ASKPASS", None)
    if not env.get("GIT_SSH_COMMAND") and not env.get("GIT_SSH"):
        env["GIT_SSH_COMMAND"] = ssh_command or _BATCH_SSH
    return env


class SubprocessGitRemotes:
    """The GitRemotes port over the git executable.

    Every call gets `_REMOTE_CONFIG`, stdin from /dev/null, its own process group (killed whole when the
    timeout passes: a hung ssh dies with it) and `--` before URLs and paths.
    """

    def __init__(
        self, executable: str = "git", base_env: Mapping[str, str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self._executable = executable
        self._base_env = dict(base_env if base_env is not None else os.environ)
        self._timeout_s = timeout_s
        self._env: dict[str, str] | None = None

    def clone(self, url: str, path: Path, *, depth: int | None = None) -> None:
        check_remote_argument(url, "remote URL")
        shallow = ["--depth", str(depth), "--no-single-branch"] if depth else []
        parent = Path(path).parent
        parent.mkdir(parents=True, exist_ok=True)
        self._run("clone", parent, ["clone", "--quiet", *shallow, "--", url, str(path)], url)

    def fetch(self, repo: Path, url: str, refspecs: Sequence[str]) -> None:
        check_remote_argument(url, "remote URL")
        for refspec in refspecs:
            check_remote_argument(refspec.lstrip("+"), "refspec")
        with self._fetch_lock(repo, url):
            self._run("fetch", repo, ["fetch", "--quiet", "--no-tags", "--", url, *refspecs], url)

    def fetch_branch(self, repo: Path, url: str, branch: str) -> str | None:
        check_remote_argument(branch, "branch")
        tracking = f"{_TRACKING}/{branch}"
        try:
            self.fetch(repo, url, [f"+refs/heads/{branch}:{tracking}"])
        except RemoteError as error:
            if error.category == "not_found" and "remote ref" in error.detail:
                return None
            raise
        process = self._run("rev-parse", repo, ["rev-parse", "--verify", "--quiet", f"{tracking}^{{commit}}"], url)
        return decode(process.stdout).strip() or None

    def push(self, repo: Path, url: str, local_sha: str, branch: str, *, expected_remote_sha: str) -> None:
        check_remote_argument(url, "remote URL")
        check_remote_argument(branch, "branch")
        check_remote_argument(local_sha, "commit")
        ref = f"refs/heads/{branch}"
        lease = f"--force-with-lease={ref}:{expected_remote_sha}"
        self._run("push", repo, ["push", "--quiet", "--porcelain", lease, "--", url, f"{local_sha}:{ref}"], url)

    def deepen(self, repo: Path, url: str, *, depth: int | None = None) -> None:
        check_remote_argument(url, "remote URL")
        shallow = self._run("rev-parse", repo, ["rev-parse", "--is-shallow-repository"], url)
        if decode(shallow.stdout).strip() != "true":
            return
        how = [f"--deepen={depth}"] if depth else ["--unshallow"]
        with self._fetch_lock(repo, url):
            self._run("fetch", repo, ["fetch", "--quiet", "--no-tags", *how, "--", url], url)

    def remote_head(self, url: str, branch: str) -> str | None:
        check_remote_argument(url, "remote URL")
        check_remote_argument(branch, "branch")
        process = self._run("ls-remote", Path.cwd(), ["ls-remote", "--heads", "--", url, f"refs/heads/{branch}"], url)
        for line in decode(process.stdout).splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def remote_refs(self, url: str) -> RemoteRefs:
        check_remote_argument(url, "remote URL")
        process = self._run("ls-remote", Path.cwd(), ["ls-remote", "--symref", "--", url], url)
        return parse_ls_remote(decode(process.stdout))

    # --- running git ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _fetch_lock(self, repo: Path, url: str) -> Iterator[None]:
        """Hold the lock that lets one fetch at a time into `repo` (threads and processes), waited for up to the
        timeout."""
        from filelock import Timeout

        from orchestra_adapters.git.locks import fetch_lock

        dot_git = Path(repo) / ".git"
        if dot_git.is_dir():
            common = dot_git
        else:  # a bare repository or a linked worktree: ask git
            found = decode(self._run("rev-parse", repo, ["rev-parse", "--git-common-dir"], url).stdout).strip()
            common = Path(repo) / found
        lock = fetch_lock(common)
        try:
            lock.acquire(timeout=self._timeout_s)
        except Timeout:
            raise RemoteError("fetch", url, f"another fetch into {repo} held it for {self._timeout_s:g} s", "other") from None
        try:
            yield
        finally:
            lock.release()

    def _environment(self) -> dict[str, str]:
        if self._env is None:
            self._env = remote_environment(self._base_env, self._user_ssh_command())
        return self._env

    def _user_ssh_command(self) -> str | None:
        """`core.sshCommand` from the user's own (global/system) config; a repository's own is not trusted."""
        argv = [self._executable, "config", "--global", "--get", "core.sshCommand"]
        for scope in ("--global", "--system"):
            argv[2] = scope
            try:
                found = subprocess.run(
                    argv, capture_output=True, env=git_environment(self._base_env), stdin=subprocess.DEVNULL,
                    check=False, timeout=30,
                )
            except (OSError, subprocess.TimeoutExpired):
                return None
            if found.returncode == 0 and found.stdout.strip():
                return decode(found.stdout).strip()
        return None

    def _run(self, operation: str, cwd: Path, args: list[str], url: str) -> subprocess.CompletedProcess[bytes]:
        argv = [self._executable, "--no-pager", *_REMOTE_CONFIG, *args]
        try:
            process = subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=self._environment(), start_new_session=True,
            )
        except OSError as error:
            raise RemoteError(operation, url, redact_text(str(error), url), "other") from error
        try:
            stdout, stderr = process.communicate(timeout=self._timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise RemoteError(operation, url, f"timed out after {self._timeout_s:g} s", "network") from None
        if process.returncode != 0:
            detail = redact_text(stderr.decode("utf-8", "replace") + stdout.decode("utf-8", "replace"), url)
            raise RemoteError(operation, url, detail, classify_remote_failure(detail))
        return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def parse_ls_remote(text: str) -> RemoteRefs:
    """`git ls-remote --symref` output as RemoteRefs: `ref: refs/heads/main<TAB>HEAD` names HEAD's branch,
    `<sha><TAB><ref>` each ref, and `<sha><TAB><tag>^{}` the commit an annotated tag points at."""
    refs: dict[str, str] = {}
    peeled: dict[str, str] = {}
    head_branch = head_sha = None
    for line in text.splitlines():
        value, _, name = line.partition("\t")
        if value.startswith("ref: "):
            if name == "HEAD" and value.startswith("ref: refs/heads/"):
                head_branch = value.removeprefix("ref: refs/heads/")
        elif name == "HEAD":
            head_sha = value
        elif name.endswith("^{}"):
            peeled[name.removesuffix("^{}")] = value
        elif name.startswith("refs/"):
            refs[name] = value
    return RemoteRefs({**refs, **{name: sha for name, sha in peeled.items() if name in refs}}, head_branch, head_sha)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


__all__ = ["DEFAULT_TIMEOUT_S", "SubprocessGitRemotes", "parse_ls_remote", "remote_environment"]
