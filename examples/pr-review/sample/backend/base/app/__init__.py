"""The shop's customer service."""
