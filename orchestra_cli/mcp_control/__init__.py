"""`orchestra mcp serve --control`: an MCP server that drives Orchestra's runs (docs/mcp.md)."""
