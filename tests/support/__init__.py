"""Reusable test support: fixtures helpers and protocol-faithful fakes of external servers."""
