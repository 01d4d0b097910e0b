"""Orchestra CLI."""
