"""`orchestra doctor`: check git, Graphviz, the session store, orchestra.yaml, providers, repos and versions."""

import typer

from orchestra_cli.options import ConfigOption, JsonOption


def run_doctor(json_output: JsonOption = False, config: ConfigOption = None) -> None:
    """Check everything a run depends on; each check is ok, warning or error with a one-line detail.

    Checks git and its version; pygraphviz and the dot layout; the session store (SQLite file or CXDB
    server: reachable, writable, type bundle published, schema version); which orchestra.yaml applies and
    whether it is valid; each provider (package installed, API key set, cassette readable); each workspace
    repo (without creating anything; one with a `remote` that is not cloned yet: its remote answers and has
    the `base_ref`, as session start will clone it); the MCP package; the versions of orchestra, python,
    langgraph and langchain-core. Exit status 0 when nothing is an error, 1 otherwise.
    """
    from pathlib import Path

    from orchestra_cli.doctor_checks import ERROR, print_report, run_checks

    checks = run_checks(config, Path.cwd())
    print_report(checks, json_output=json_output)
    raise typer.Exit(1 if any(check.status == ERROR for check in checks) else 0)
