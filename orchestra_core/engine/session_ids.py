"""Session ids until the session store hands them out: short, unique and sortable by start time."""

from __future__ import annotations

import secrets

from orchestra_core.ports.clock import Clock


def new_session_id(clock: Clock) -> str:
    """`YYYYMMDD-HHMMSS-xxxxxx`: the UTC start time to the second and 24 random bits (hex)."""
    return f"{clock.now():%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
