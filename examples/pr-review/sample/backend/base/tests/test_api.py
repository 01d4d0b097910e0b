import unittest

from app import api
from app.customers import CustomerRepository
from app.db import connect


class CustomerApiTest(unittest.TestCase):
    def setUp(self):
        self.repository = CustomerRepository(connect(":memory:"))
        self.ada = self.repository.add("Ada Lovelace", "ada@example.com")
        self.repository.add("Grace Hopper", "grace@example.com")

    def test_get_customer(self):
        status, body = api.get_customer(self.repository, {"id": str(self.ada)})
        self.assertEqual((status, body["name"]), (200, "Ada Lovelace"))

    def test_get_customer_rejects_a_non_numeric_id(self):
        self.assertEqual(api.get_customer(self.repository, {"id": "1 OR 1=1"})[0], 400)

    def test_list_customers_lists_names_only(self):
        status, body = api.list_customers(self.repository, {})
        self.assertEqual(status, 200)
        self.assertEqual([c["name"] for c in body["customers"]], ["Ada Lovelace", "Grace Hopper"])
        self.assertNotIn("email", body["customers"][0])


if __name__ == "__main__":
    unittest.main()
