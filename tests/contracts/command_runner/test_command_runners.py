"""The CommandRunner contract run against the subprocess runner and the scripted fake (scripted as the
real commands would answer)."""

from __future__ import annotations

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.process.sandbox import BubblewrapCommandRunner, find_bwrap
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.testing.command_runner import CommandCall, ScriptedCommandRunner
from orchestra_core.testing.contracts import command_runner as contract
from orchestra_core.testing.contracts.command_runner import CommandRunnerContract
from tests.support.sandbox import needs_bwrap


class TestSubprocessCommandRunner(CommandRunnerContract):
    def make_runner(self) -> SubprocessCommandRunner:
        return SubprocessCommandRunner()


@needs_bwrap()
class TestBubblewrapCommandRunner(CommandRunnerContract):
    def make_runner(self) -> BubblewrapCommandRunner:
        bwrap = find_bwrap()
        assert bwrap is not None
        return BubblewrapCommandRunner(bwrap)


def _timed_out(call: CommandCall) -> CommandResult:
    return CommandResult(None, "", "", call.timeout or 0.0, timed_out=True)


class TestScriptedCommandRunner(CommandRunnerContract):
    def make_runner(self) -> ScriptedCommandRunner:
        return ScriptedCommandRunner(
            {
                contract.ECHO: CommandResult(0, "out\n", "err\n", 0.0),
                contract.FAIL: CommandResult(3, "", "", 0.0),
                contract.PWD: lambda call: CommandResult(0, f"{call.cwd}\n", "", 0.0),
                contract.ENV: lambda call: CommandResult(0, call.env["ORCHESTRA_CONTRACT"], "", 0.0),
                contract.CAT: lambda call: CommandResult(0, call.stdin or "", "", 0.0),
                contract.WRITE: lambda call: CommandResult(0, "ok" if call.cwd in call.writable else "", "", 0.0),
                contract.HANG: _timed_out,
            }
        )
