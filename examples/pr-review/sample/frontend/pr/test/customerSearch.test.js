import assert from "node:assert/strict";
import { test } from "node:test";

import { renderResults, searchCustomers, searchUrl } from "../src/customerSearch.js";

test("the search term goes into the query string", () => {
  assert.equal(searchUrl("ada"), "/api/customers/search?q=ada");
});

test("searchCustomers returns the customers of the answer", async () => {
  const fake = async () => ({ ok: true, json: async () => ({ customers: [{ id: 1, name: "Ada" }] }) });
  assert.deepEqual(await searchCustomers("ada", fake), [{ id: 1, name: "Ada" }]);
});

test("renderResults lists each customer", () => {
  const list = { innerHTML: "" };
  renderResults([{ id: 1, name: "Ada", email: "ada@example.com" }], list);
  assert.equal(list.innerHTML, '<li data-id="1">Ada &lt;ada@example.com&gt;</li>');
});
