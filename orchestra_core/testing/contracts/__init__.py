"""Port contracts: one base class per port, run against Orchestra's fakes, its adapters, and yours.

Prove an adapter by subclassing its port's contract in a test module (the class name must start with
`Test` for pytest to collect it) and implementing the factory method the contract names::

    from orchestra_core.testing.contracts import SessionStoreContract

    class TestMyStore(SessionStoreContract):
        def make_store(self):
            return MyStore(self.tmp / "store")

Every test gets a fresh temporary directory `self.tmp` and may register cleanups with `add_cleanup`.
A port's optional capabilities are listed in `OPTIONAL_CAPABILITIES`; claim the ones your adapter has in
`capabilities` (a frozenset), and the tests of the others are skipped. The contracts use plain `assert`
and `unittest.SkipTest` only: the library does not depend on pytest.
"""

from __future__ import annotations

from orchestra_core.model.lazy_exports import lazy_exports

_EXPORTS = {
    "ArtifactStoreContract": "orchestra_core.testing.contracts.artifact_store",
    "ChatModelFactoryContract": "orchestra_core.testing.contracts.chat_models",
    "ClockContract": "orchestra_core.testing.contracts.clock",
    "CodergenBackendContract": "orchestra_core.testing.contracts.codergen_backend",
    "CommandRunnerContract": "orchestra_core.testing.contracts.command_runner",
    "DispatcherContract": "orchestra_core.testing.contracts.dispatcher",
    "FleetLedgerContract": "orchestra_core.testing.contracts.fleet_ledger",
    "GitContract": "orchestra_core.testing.contracts.git",
    "GitRemotesContract": "orchestra_core.testing.contracts.git_remotes",
    "InterviewerContract": "orchestra_core.testing.contracts.interviewer",
    "NotifierContract": "orchestra_core.testing.contracts.notifier",
    "PortContract": "orchestra_core.testing.contracts._base",
    "PromptLibraryContract": "orchestra_core.testing.contracts.prompt_library",
    "RunDirectoryContract": "orchestra_core.testing.contracts.run_directory",
    "RunDirectoryFactoryContract": "orchestra_core.testing.contracts.run_directory",
    "SessionLocksContract": "orchestra_core.testing.contracts.session_locks",
    "SessionStoreContract": "orchestra_core.testing.contracts.session_store",
    "TracerContract": "orchestra_core.testing.contracts.tracer",
    "cases": "orchestra_core.testing.contracts._base",
    "raises": "orchestra_core.testing.contracts._base",
    "requires": "orchestra_core.testing.contracts._base",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
