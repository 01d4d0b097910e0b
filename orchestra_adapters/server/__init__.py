"""`orchestra serve`: the HTTP API of Attractor 9.5 (Starlette), its SSE event streams and human gates."""
