"""Request handlers: each takes the repository and the query parameters and returns (status, body)."""

import sqlite3

# Where the search reads customers from; the same file app.db opens in production.
SEARCH_DATABASE = "/var/lib/shop/shop.db"


def get_customer(repository, params):
    """GET /customers/<id>: one active customer."""
    raw = params.get("id", "")
    if not raw.isdigit():
        return 400, {"error": "id must be a number"}
    customer = repository.get(int(raw))
    if customer is None:
        return 404, {"error": "no such customer"}
    return 200, customer


def list_customers(repository, params):
    """GET /customers: active customers by name (names only; emails are not listed)."""
    return 200, {"customers": repository.list_active()}


def search_customers(params, database=SEARCH_DATABASE):
    """GET /customers/search?q=<text>: active customers whose name contains the text."""
    term = params.get("q", "").strip()
    if not term:
        return 400, {"error": "q is required"}
    connection = sqlite3.connect(database)
    try:
        rows = connection.execute(
            "SELECT id, name, email FROM customers "
            f"WHERE active = 1 AND name LIKE '%{term}%' ORDER BY name"
        ).fetchall()
    finally:
        connection.close()
    return 200, {"customers": [{"id": row[0], "name": row[1], "email": row[2]} for row in rows]}
