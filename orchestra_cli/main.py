"""Console entry point."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

_NO_CLASSES = frozenset({"-h", "--help", "-V", "--version"})
# Commands that start a run (orchestra_cli/runtime/execute.py), where the cycle collector resumes.
_RUNS = frozenset({"run", "resume", "replay"})


def main() -> None:
    arguments = sys.argv[1:]
    if arguments in (["--version"], ["-V"]):  # what the application's --version does, without building it
        from orchestra_cli.version import version_line

        print(version_line())
        raise SystemExit(0)
    if arguments and not _NO_CLASSES.intersection(arguments):
        # Every command but help defines Orchestra's attrs classes: their methods' code comes from the cache.
        from orchestra_cli.attrs_bytecode import install

        install()
        if arguments[0] in _RUNS:
            from orchestra_adapters.collector import pause_for_startup

            pause_for_startup()
    from orchestra_cli.app import app_for
    from orchestra_cli.errors import run_guarded

    run_guarded(app_for(arguments))


def console() -> NoReturn:
    """The `orchestra` command: `main()`, then the process ends without tearing the interpreter down.

    Tearing down the modules a run imported (LangChain's and LangGraph's among them, about 1,500) takes
    0.2 s and does nothing a finished command needs (issue 16). The exit handlers still run and stdout and
    stderr are flushed first; while a thread that is not a daemon is alive, or a flush fails, the process
    exits the ordinary way (which waits for such threads and reports the failed flush). Daemon threads end
    either way, as they do at an ordinary exit.
    """
    try:
        main()
    except SystemExit as done:
        if not isinstance(done.code, int) or _other_threads_alive():
            raise
        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise done from None
        os._exit(done.code)
    raise SystemExit(0)


def _other_threads_alive() -> bool:
    main_thread = threading.main_thread()
    return any(
        thread is not main_thread and not thread.daemon and thread.is_alive() for thread in threading.enumerate()
    )
