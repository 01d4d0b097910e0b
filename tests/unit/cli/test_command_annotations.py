"""Every command's parameters are annotated with objects, not strings (issue 16).

Typer reads the annotations of every command on every start, `orchestra --help` included; postponed
annotations (`from __future__ import annotations`) are strings it must compile and evaluate first, which cost
about 15 ms per start.
"""

from collections.abc import Callable, Iterator
from typing import Any

import typer

from orchestra_cli.app import app


def _callbacks(application: typer.Typer) -> Iterator[tuple[str, Callable[..., Any]]]:
    for command in application.registered_commands:
        assert command.callback is not None
        yield command.name or command.callback.__name__, command.callback
    if application.registered_callback is not None and application.registered_callback.callback is not None:
        yield f"{application.info.name} callback", application.registered_callback.callback
    for group in application.registered_groups:
        assert group.typer_instance is not None
        yield from _callbacks(group.typer_instance)


def test_every_command_is_found() -> None:
    names = {name for name, _ in _callbacks(app)}
    assert {"run", "status", "compile", "resume", "replay", "serve"} <= names
    assert len(names) >= 15


def test_no_command_has_postponed_annotations() -> None:
    postponed = {
        name: parameter
        for name, callback in _callbacks(app)
        for parameter, annotation in callback.__annotations__.items()
        if isinstance(annotation, str)
    }
    assert postponed == {}, "drop `from __future__ import annotations` from these command modules"
