"""The Clock contract: aware UTC wall time, monotonic time that never goes back, sleeps that pass time."""

from __future__ import annotations

from datetime import timedelta

from orchestra_core.ports.clock import Clock
from orchestra_core.testing.contracts._base import PortContract

NAP = 0.02
"""Seconds the contract sleeps (short, for real clocks)."""


class ClockContract(PortContract):
    """A runner implements `make_clock()`."""

    def make_clock(self) -> Clock:
        """The clock under test."""
        raise NotImplementedError

    def test_is_a_clock(self) -> None:
        assert isinstance(self.make_clock(), Clock)

    def test_now_is_timezone_aware_utc(self) -> None:
        now = self.make_clock().now()
        assert now.tzinfo is not None and now.utcoffset() == timedelta(0)

    def test_monotonic_time_never_goes_back(self) -> None:
        clock = self.make_clock()
        readings = [clock.monotonic() for _ in range(100)]
        assert readings == sorted(readings)

    def test_sleeping_passes_at_least_that_much_time(self) -> None:
        clock = self.make_clock()
        before, wall = clock.monotonic(), clock.now()
        clock.sleep(NAP)
        assert clock.monotonic() - before >= NAP
        assert clock.now() >= wall

    def test_sleeping_zero_or_less_returns(self) -> None:
        clock = self.make_clock()
        before = clock.monotonic()
        clock.sleep(0)
        clock.sleep(-1)
        assert clock.monotonic() >= before
