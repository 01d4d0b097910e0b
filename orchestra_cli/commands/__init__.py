"""CLI commands, one module each; heavy libraries are imported inside the command functions."""
