"""`orchestra worker`, `orchestra submit` and `orchestra cancel`: the fleet (Celery with a Redis broker, the
PostgreSQL store). Only typer is imported here; the fleet's libraries load inside the commands."""

from pathlib import Path
from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption
from orchestra_cli.runtime.options import AutoApproveOption, SetOption

QueueOption = Annotated[
    list[str] | None,
    typer.Option("--queue", "-Q", help="A queue to serve (repeat for several); default: dispatch.queue."),
]


def run_worker(
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", help="Sessions run at once.")] = 2,
    queue: QueueOption = None,
    name: Annotated[str | None, typer.Option("--name", help="The worker's name (default: orchestra-<pid>@<host>).")] = None,
    config: ConfigOption = None,
) -> None:
    """Run a fleet worker in this project: it takes sessions from the broker's queues and runs them.

    orchestra.yaml gives the broker (dispatch.broker), the shared store (storage: postgres), providers and the
    workspace repos with their remotes. A session whose worker dies is picked up by another worker within the
    pickup interval of its lock being freed (docs/fleet.md). Exit status 2 for a bad config or an unreachable
    broker or database; stop with Ctrl-C (running sessions finish first) or SIGKILL (another worker resumes them).
    """
    from orchestra_cli.fleet_commands import worker

    raise typer.Exit(worker(concurrency=concurrency, queues=queue or [], name=name, config=config))


def submit_pipeline(
    pipeline: Annotated[Path, typer.Argument(help="The pipeline's DOT file.")],
    set_values: SetOption = None,
    auto_approve: AutoApproveOption = False,
    queue: Annotated[str | None, typer.Option("--queue", help="The queue (default: the graph's queue, else dispatch.queue).")] = None,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Record a new session in the shared store and queue it for the fleet; prints its id at once.

    The pipeline is validated first (exit 1 on validation errors, nothing recorded); exit 2 for bad input or an
    unreachable broker or database. Follow it with `orchestra status SESSION` or `orchestra attach SESSION`.
    """
    from orchestra_cli.fleet_commands import submit

    raise typer.Exit(
        submit(pipeline, set_values=tuple(set_values or ()), auto_approve=auto_approve, queue=queue, json_output=json_output, config=config)
    )


def cancel_session(
    session: Annotated[str, typer.Argument(help="The session to cancel.")],
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for a running session to stop.")] = 30.0,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Cancel a session: its queued tasks are revoked, its running processes stopped wherever they run (a fleet
    worker, or an `orchestra run` of this project in another terminal), and it ends `cancelled`. Exit 0 once it is cancelled (or had ended), 1 when it
    did not stop within --wait, 2 for an unknown session or a bad config."""
    from orchestra_cli.fleet_commands import cancel

    raise typer.Exit(cancel(session, wait=wait, json_output=json_output, config=config))
