"""orchestra_core."""
