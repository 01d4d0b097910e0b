import os
import tempfile
import unittest

from app import api
from app.customers import CustomerRepository
from app.db import connect


class CustomerSearchTest(unittest.TestCase):
    def setUp(self):
        handle, self.path = tempfile.mkstemp(suffix=".db")
        os.close(handle)
        connection = connect(self.path)
        repository = CustomerRepository(connection)
        repository.add("Ada Lovelace", "ada@example.com")
        repository.add("Grace Hopper", "grace@example.com")
        connection.commit()
        connection.close()

    def tearDown(self):
        os.remove(self.path)

    def test_search_finds_customers_by_part_of_their_name(self):
        status, body = api.search_customers({"q": "Love"}, database=self.path)
        self.assertEqual(status, 200)
        self.assertEqual([c["name"] for c in body["customers"]], ["Ada Lovelace"])

    def test_search_needs_a_term(self):
        self.assertEqual(api.search_customers({"q": " "}, database=self.path)[0], 400)


if __name__ == "__main__":
    unittest.main()
