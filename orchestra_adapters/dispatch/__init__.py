"""Adapters of the dispatch port: in-process (the default) and Celery with a Redis broker (the fleet), and the
fleet's ledger in PostgreSQL. Importing this package imports neither celery nor redis nor psycopg."""
