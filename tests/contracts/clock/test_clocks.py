"""The Clock contract run against the manual clock and the system clock."""

from __future__ import annotations

from orchestra_core.ports.clock import SystemClock
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.contracts.clock import ClockContract


class TestManualClock(ClockContract):
    def make_clock(self) -> ManualClock:
        return ManualClock()


class TestSystemClock(ClockContract):
    def make_clock(self) -> SystemClock:
        return SystemClock()
