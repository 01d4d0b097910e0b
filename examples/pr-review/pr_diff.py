"""The pull request under review, for the reviewers: each repo's diff from the target branch to its checkout.

Run by the pipeline's `pr_diff` tool node in the project directory, as `python3 pr_diff.py REPO...`. A repo's
pull request is what its checked-out branch adds to the target branch (`--target`, default `main`): the
diff from their merge base to HEAD, as `git diff TARGET...HEAD` shows it. The diff goes into the run's
context as `pr_diff` (through the stage's status.json), where the reviewers' task templates read it; a
summary goes to stdout.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

MAX_CHARS = 200_000  # a larger diff is cut, saying so: the reviewers read the rest with their tools


def git(repo, *args):
    command = ["git", "-C", repo, "-c", "core.quotepath=off", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def repo_diff(repo, target):
    branch = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    stat = git(repo, "diff", "--no-color", "--no-ext-diff", "--stat", f"{target}...HEAD")
    patch = git(repo, "diff", "--no-color", "--no-ext-diff", f"{target}...HEAD")
    header = f"## {repo}: {branch} into {target}\n\n"
    if not patch:
        return header + "(no changes)\n", 0
    return header + stat + "\n" + patch, stat.count("\n") - 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", help="the repository directories, relative to the project")
    parser.add_argument("--target", default="main", help="the branch the pull request goes into")
    options = parser.parse_args()
    parts, summary = [], []
    for repo in options.repos:
        text, files = repo_diff(repo, options.target)
        parts.append(text)
        summary.append(f"{repo}: {files} files changed")
    diff = "\n".join(parts)
    if len(diff) > MAX_CHARS:
        diff = diff[:MAX_CHARS] + f"\n... ({len(diff) - MAX_CHARS} more characters: read the files with your tools)\n"
    stage_dir = os.environ.get("ORCHESTRA_STAGE_DIR")
    if stage_dir:
        status = {"outcome": "success", "notes": "; ".join(summary), "context_updates": {"pr_diff": diff}}
        Path(stage_dir, "status.json").write_text(json.dumps(status), encoding="utf-8")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
