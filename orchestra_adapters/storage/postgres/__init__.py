"""The PostgreSQL session store and its session locks (psycopg 3): the fleet's shared store."""
