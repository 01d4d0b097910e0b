"""Git over the command line: SubprocessGit implements the Git port."""

from orchestra_adapters.git.subprocess_git import SubprocessGit

__all__ = ["SubprocessGit"]
