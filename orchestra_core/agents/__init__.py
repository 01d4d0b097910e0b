"""Agents in codergen nodes: configuration, prompt composition, model resolution, tools, hooks and turns."""
