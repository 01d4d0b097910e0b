"""CXDB client: binary protocol writes, HTTP reads."""
