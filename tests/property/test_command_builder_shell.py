"""The command builder against the real `/bin/sh`: templates written every way an author might (quotes,
concatenations, expansions, `--`, several commands) and hostile values; whatever the builder accepts, the
shell runs no code of the value's and gives no command an option that came from the value.

Each simple command of a template calls `a`, a shell function that prints its arguments; values that could
be options start with `-Z` (no literal of a template holds a `Z`), so an argument starting with `-Z` before
its command's `--` would be an option the agent chose.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.agents.command_template import CommandTemplateError
from orchestra_core.agents.command_tools import CommandArgumentError, expand_command
from orchestra_core.model.settings import ToolCommandSettings, ToolParameterSettings

PRELUDE = "a() { printf '%s\\036' \"$@\"; printf '\\035'; }; "  # args end with RS, commands with GS
WORDS = ["x", "-v", "--", "''", '""', '"$E"', "$E", "\\ ", "k=", "--k=", "'q'", '"{p}"', "'{q}'", "\\{p}"]
PLACEHOLDERS = ["{p}", "{q}"]
SEPARATORS = [" ", " ", " ", "\t", "; a ", " && a ", "\na ", " $(a ", ")", " `a ", "`"]
VALUES = st.one_of(
    st.sampled_from(
        ["", "-Zo", "--Zoutput=/x", "-Z", "ok", "a b", "$(touch M)", "`touch M`", ";touch M", "'", '"', "*", "~",
         "\\", "{q}", "-Z$(touch M)", "$E", "é-Z"]
    ),
    st.text(st.sampled_from("-Z'\"$`;&| ab\\(){}*~"), max_size=8),
)


def templates() -> st.SearchStrategy[str]:
    word = st.lists(st.sampled_from([*WORDS, *PLACEHOLDERS, *PLACEHOLDERS]), min_size=1, max_size=3).map("".join)
    tail = st.lists(st.tuples(st.sampled_from(SEPARATORS), word), max_size=6)
    return st.builds(lambda first, rest: "a " + first + "".join(sep + w for sep, w in rest), word, tail)


@settings(max_examples=300)
@given(templates(), VALUES, VALUES)
def test_an_accepted_value_is_never_code_nor_an_option(template: str, p: str, q: str) -> None:
    settings_ = ToolCommandSettings(template, parameters={"p": ToolParameterSettings(), "q": ToolParameterSettings()})
    try:
        command = expand_command(settings_, {"p": p, "q": q})
    except (CommandTemplateError, CommandArgumentError):
        return
    work = Path(subprocess.run(["mktemp", "-d"], capture_output=True, text=True, check=True).stdout.strip())
    try:
        result = subprocess.run(
            ["/bin/sh", "-c", PRELUDE + command],
            cwd=work, capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin", "HOME": str(work)}, check=False,
        )  # fmt: skip
        assert not (work / "M").exists(), f"the value ran as code: {command!r}"
        for invocation in result.stdout.split(b"\x1d"):
            arguments = invocation.split(b"\x1e")[:-1]
            options = arguments[: arguments.index(b"--")] if b"--" in arguments else arguments
            chosen = [arg for arg in options if arg.startswith(b"-Z")]
            assert not chosen, f"{command!r} gave a command the option(s) {chosen}"
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
