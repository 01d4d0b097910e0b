"""A project's fleet, as orchestra.yaml describes it: the broker, the Celery dispatcher and the ledger, each
checked at once (an unreachable broker or database is named, without its password, within seconds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from orchestra_adapters.dispatch.broker import check_broker, configured_broker, display_url
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import OrchestraSettings

if TYPE_CHECKING:
    from orchestra_core.runs.ports import FleetPorts


class FleetConfigError(OrchestraError):
    """orchestra.yaml does not describe a usable fleet; the message names the key."""


class Fleet:
    """The Celery app, the dispatcher and the ledger of a project's fleet; `close()` releases them."""

    def __init__(self, settings: OrchestraSettings) -> None:
        from orchestra_adapters.dispatch.celery_app import make_celery
        from orchestra_adapters.dispatch.celery_dispatcher import CeleryDispatcher
        from orchestra_adapters.dispatch.ledger import PostgresFleetLedger
        from orchestra_adapters.storage.postgres.dsn import configured_dsn

        self.settings = settings
        require_fleet(settings)
        self.broker = configured_broker(settings.dispatch)
        self.broker_location = display_url(self.broker)
        check_broker(self.broker)
        self.ledger = PostgresFleetLedger(configured_dsn(settings.storage))
        self.app: Any = make_celery(self.broker, settings.dispatch)
        self.dispatcher = CeleryDispatcher(self.app, self.broker, settings.dispatch.queue)

    def run_ports(self, runner: str, queues: Sequence[str]) -> FleetPorts | None:
        """What a run of a session needs to send its branches to this fleet (None with `dispatch.branches: local`).

        Args:
            runner: Who runs the session (a worker's name, or `orchestra run` on a host).
            queues: The queues whose branches the session's runner may run itself when no worker took them.
        """
        from orchestra_core.runs.ports import FleetPorts

        dispatch = self.settings.dispatch
        if dispatch.branches != "fleet":
            return None
        return FleetPorts(
            dispatcher=self.dispatcher, ledger=self.ledger, runner=runner, queues=tuple(queues),
            default_queue=dispatch.queue, claim_after_s=float(dispatch.claim_after),
        )  # fmt: skip

    def close(self) -> None:
        self.dispatcher.close()
        self.ledger.close()


def require_fleet(settings: OrchestraSettings) -> None:
    """A fleet needs a broker and a store every worker shares (PostgreSQL: its locks work across machines).

    Raises:
        FleetConfigError: Either is missing (the message names the key to set).
    """
    if not settings.dispatch.fleet:
        raise FleetConfigError(
            "dispatch.broker: no fleet is configured; set dispatch.broker (redis://host:6379/0) in orchestra.yaml "
            "(docs/fleet.md)"
        )
    if settings.storage.backend != "postgres":
        raise FleetConfigError(
            f"storage.backend: a fleet needs the postgres store, shared by every worker (this one is "
            f"{settings.storage.backend}: one machine's); set storage: {{backend: postgres, dsn_env: ...}}"
        )


def check_worker_repos(settings: OrchestraSettings) -> None:
    """Every workspace repo of a worker needs a remote: workspaces travel between machines through git remotes.

    Raises:
        FleetConfigError: A repo has no `remote` (the message names its key).
    """
    for name, repo in settings.workspace.repos.items():
        if not repo.remote:
            raise FleetConfigError(
                f"workspace.repos.{name}.remote: a fleet worker needs a remote for every workspace repo "
                "(sessions move between machines through it); set remote and push: on_checkpoint"
            )
