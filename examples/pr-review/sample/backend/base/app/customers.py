"""The customer repository: the only module that writes SQL about customers."""


class CustomerRepository:
    """Customers in the shop database; every query binds its parameters."""

    def __init__(self, connection):
        self.connection = connection

    def add(self, name, email):
        cursor = self.connection.execute("INSERT INTO customers (name, email) VALUES (?, ?)", (name, email))
        return cursor.lastrowid

    def get(self, customer_id):
        row = self.connection.execute(
            "SELECT id, name, email FROM customers WHERE id = ? AND active = 1", (customer_id,)
        ).fetchone()
        return dict(row) if row else None

    def list_active(self, limit=50):
        rows = self.connection.execute(
            "SELECT id, name FROM customers WHERE active = 1 ORDER BY name LIMIT ?", (limit,)
        ).fetchall()
        return [dict(row) for row in rows]
