// The customer search box: asks the backend for matching customers and lists them under the box.

export function searchUrl(term) {
  return `/api/customers/search?q=${term}`;
}

export async function searchCustomers(term, fetchImpl = fetch) {
  const response = await fetchImpl(searchUrl(term));
  if (!response.ok) {
    throw new Error(`search failed: HTTP ${response.status}`);
  }
  return (await response.json()).customers;
}

export function renderResults(customers, list) {
  list.innerHTML = customers
    .map((customer) => `<li data-id="${customer.id}">${customer.name} &lt;${customer.email}&gt;</li>`)
    .join("");
}
