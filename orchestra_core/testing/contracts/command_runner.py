"""The CommandRunner contract: a shell command's output, exit code, working directory, environment, input
and timeout, as tool nodes and project tools rely on them.

A scripted fake passes it by scripting the replies the real commands below would give.
"""

from __future__ import annotations

from orchestra_core.ports.command_runner import CommandResult, CommandRunner
from orchestra_core.testing.contracts._base import PortContract

ECHO = "printf 'out\\n'; printf 'err\\n' >&2"
FAIL = "exit 3"
PWD = "pwd"
ENV = 'printf %s "$ORCHESTRA_CONTRACT"'
CAT = "cat"
WRITE = "printf ok > written.txt && cat written.txt"
"""Writes in its working directory, which the caller names writable (a sandboxing runner must allow it)."""
HANG = "(sleep 30; echo late) & sleep 30"
"""A command whose child outlives the shell: a timeout must end them both, or the pipes stay open."""

TIMEOUT = 0.3


class CommandRunnerContract(PortContract):
    """A runner implements `make_runner()`: one that runs (or plays) the commands of this module."""

    def make_runner(self) -> CommandRunner:
        """The runner under test."""
        raise NotImplementedError

    def test_is_a_command_runner(self) -> None:
        assert isinstance(self.make_runner(), CommandRunner)

    def test_output_is_captured_apart(self) -> None:
        result = self.make_runner().run(ECHO, cwd=str(self.tmp))
        assert (result.exit_code, result.stdout, result.stderr, result.ok) == (0, "out\n", "err\n", True)
        assert result.duration_s >= 0 and not result.timed_out

    def test_exit_codes_are_kept(self) -> None:
        result = self.make_runner().run(FAIL, cwd=str(self.tmp))
        assert (result.exit_code, result.ok, result.timed_out) == (3, False, False)

    def test_commands_run_in_the_given_directory(self) -> None:
        (self.tmp / "work dir").mkdir()
        result = self.make_runner().run(PWD, cwd=str(self.tmp / "work dir"))
        assert result.stdout.strip() == str(self.tmp / "work dir")

    def test_env_is_added_to_the_environment(self) -> None:
        result = self.make_runner().run(ENV, cwd=str(self.tmp), env={"ORCHESTRA_CONTRACT": "v a l"})
        assert result.stdout == "v a l"

    def test_stdin_is_fed_to_the_command(self) -> None:
        assert self.make_runner().run(CAT, cwd=str(self.tmp), stdin="line ✓\n").stdout == "line ✓\n"

    def test_a_command_writes_where_it_is_told_it_may(self) -> None:
        work = self.tmp / "writable"
        work.mkdir()
        result = self.make_runner().run(WRITE, cwd=str(work), writable=[str(work)])
        assert (result.exit_code, result.stdout) == (0, "ok")

    def test_protected_directories_are_accepted(self) -> None:
        # a confining runner keeps them read-only (tests/unit/process/test_sandbox.py); every runner takes them
        work = self.tmp / "writable"
        (work / ".orchestra").mkdir(parents=True)
        result = self.make_runner().run(WRITE, cwd=str(work), writable=[str(work)], protected=[str(work / ".orchestra")])
        assert (result.exit_code, result.stdout) == (0, "ok")

    def test_a_timeout_ends_the_command_and_its_children(self) -> None:
        result: CommandResult = self.make_runner().run(HANG, cwd=str(self.tmp), timeout=TIMEOUT)
        assert result.timed_out and result.exit_code is None and not result.ok
        assert TIMEOUT <= result.duration_s < 10
