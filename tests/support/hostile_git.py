"""A repository whose config, hooks and attributes try to make git run programs, as an agent that had managed
to write `.git/config` would set them: every program appends its name to a marker file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.git_repos import IDENTITY, git

HOOKS = (
    "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "post-index-change",
    "reference-transaction", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman",
)
# `* filter=x diff=x` reaches every file; `.proc` and `.inc` files reach the other drivers.
ATTRIBUTES = "* filter=x diff=x\n*.proc filter=p\n*.inc filter=inc\n"


class HostileRepo:
    """Programs that record their runs in `marker`, and the config that names them, for the repo at `path`."""

    def __init__(self, path: Path, spies: Path) -> None:
        self.path = path
        self.spies = spies
        self.marker = spies / "ran.log"

    def commit_attributes(self) -> None:
        """Commit the .gitattributes that route files through the hostile drivers (before `arm`)."""
        (self.path / ".gitattributes").write_text(ATTRIBUTES, encoding="utf-8")
        (self.path / "data.proc").write_text("process me\n", encoding="utf-8")
        (self.path / "data.inc").write_text("include me\n", encoding="utf-8")
        git(self.path, "add", ".gitattributes", "data.proc", "data.inc")
        git(self.path, "commit", "-q", "-m", "Attributes")

    def arm(self) -> None:
        """Write the spies and the hostile config and hooks into the repository."""
        self.spies.mkdir(parents=True, exist_ok=True)
        spy = self._script("spy", "exit 0")
        spy_filter = self._script("spy-filter", "exec cat")
        include = self.spies / "included.cfg"
        include.write_text(f'[filter "inc"]\n\tclean = {spy_filter} inc-clean\n', encoding="utf-8")
        settings = {
            "core.fsmonitor": f"{spy} fsmonitor",
            "core.hooksPath": str(self._hooks(self.spies / "hooks", spy)),
            "core.pager": f"{spy} pager",
            "pager.log": f"{spy} pager-log",
            "core.editor": f"{spy} editor",
            "sequence.editor": f"{spy} sequence-editor",
            "core.sshCommand": f"{spy} ssh",
            "core.askPass": f"{spy} askpass",
            "credential.helper": f"!{spy} credential",
            "diff.external": f"{spy} diff-external",
            "diff.x.command": f"{spy} diff-command",
            "diff.x.textconv": f"{spy_filter} textconv",
            "filter.x.clean": f"{spy_filter} clean",
            "filter.x.smudge": f"{spy_filter} smudge",
            "filter.p.process": f"{spy} process",
            "gpg.program": str(self._script("spy-gpg", "exit 1")),  # run as a path, without arguments
            "log.showSignature": "true",
            "commit.gpgSign": "true",
            "include.path": str(include),
        }
        for key, value in settings.items():
            git(self.path, "config", "--local", key, value)
        common = Path(git(self.path, "rev-parse", "--git-common-dir").strip())
        self._hooks(common if common.is_absolute() else self.path / common, spy, subdirectory="hooks")
        self.marker.unlink(missing_ok=True)

    def runs(self) -> list[str]:
        """What the spies recorded, one line per program run."""
        return self.marker.read_text(encoding="utf-8").splitlines() if self.marker.exists() else []

    def signed_commit(self) -> str:
        """A commit object carrying a (bogus) PGP signature: `git log` verifies it with gpg.program when
        log.showSignature is on."""
        tree = git(self.path, "rev-parse", "HEAD^{tree}").strip()
        parent = git(self.path, "rev-parse", "HEAD").strip()
        signature = "-----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
        body = (
            f"tree {tree}\nparent {parent}\nauthor A <a@example.com> 1700000000 +0000\n"
            f"committer A <a@example.com> 1700000000 +0000\ngpgsig {signature}\n\nSigned\n"
        )
        return git(self.path, "hash-object", "-t", "commit", "-w", "--stdin", stdin=body).strip()

    def plain_git(self, *args: str) -> None:
        """Run git here as a user would, without Orchestra's hardening (failures, which the hostile process
        driver causes, are ignored)."""
        subprocess.run(
            ["git", *args], cwd=self.path, env={**os.environ, **IDENTITY}, capture_output=True, check=False
        )

    def _script(self, name: str, tail: str) -> Path:
        script = self.spies / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.marker}"\n{tail}\n', encoding="utf-8")
        script.chmod(0o755)
        return script

    def _hooks(self, base: Path, spy: Path, *, subdirectory: str = "") -> Path:
        directory = base / subdirectory if subdirectory else base
        directory.mkdir(parents=True, exist_ok=True)
        for hook in HOOKS:
            path = directory / hook
            path.write_text(f'#!/bin/sh\nexec "{spy}" hook-{hook}\n', encoding="utf-8")
            path.chmod(0o755)
        return directory
