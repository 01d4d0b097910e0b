"""The turn samples now ship with the contracts; kept here for the tests that import them from this path."""

from orchestra_core.testing.contracts.session_samples import CORE_AGENT_TURN, RECORDS, SNAPSHOT

__all__ = ["CORE_AGENT_TURN", "RECORDS", "SNAPSHOT"]
