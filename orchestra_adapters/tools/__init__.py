"""Agent tools as models see them: provider-facing schemas, argument checks, running calls, report_outcome.

Shared by every adapter that offers Orchestra's tools to a model: the LangGraph backend and the MCP tool server.
"""
