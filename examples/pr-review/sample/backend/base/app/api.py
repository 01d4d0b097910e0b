"""Request handlers: each takes the repository and the query parameters and returns (status, body)."""


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
