"""Contract tests for the SessionStore port."""
