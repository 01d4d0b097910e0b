import assert from "node:assert/strict";
import { test } from "node:test";

import { customerUrl, fetchCustomer } from "../src/api.js";

test("customer ids are encoded into the URL", () => {
  assert.equal(customerUrl("42"), "/api/customers/42");
  assert.equal(customerUrl("../admin"), "/api/customers/..%2Fadmin");
});

test("fetchCustomer returns the customer", async () => {
  const fake = async (url) => ({ ok: true, json: async () => ({ id: 42, url }) });
  assert.deepEqual(await fetchCustomer("42", fake), { id: 42, url: "/api/customers/42" });
});
