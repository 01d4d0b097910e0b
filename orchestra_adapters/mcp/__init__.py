"""Orchestra's repo-scoped tools over MCP: the stdio server, the tool host it proxies to, `orchestra mcp serve`.

Kept import-free: `python -m orchestra_adapters.mcp` (the proxy an agent starts) must start fast.
"""
