// The backend's customer API. Every value put into a URL goes through encodeURIComponent.

export function customerUrl(id) {
  return `/api/customers/${encodeURIComponent(id)}`;
}

export async function fetchCustomer(id, fetchImpl = fetch) {
  const response = await fetchImpl(customerUrl(id));
  if (!response.ok) {
    throw new Error(`customer ${id}: HTTP ${response.status}`);
  }
  return response.json();
}
