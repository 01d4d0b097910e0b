"""orchestra_adapters."""
