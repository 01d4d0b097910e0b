"""Process adapters: shell commands and the system clock."""
