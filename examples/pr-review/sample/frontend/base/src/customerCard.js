// One customer on the page. Names come from users: they are set as text, never parsed as HTML.

export function renderCustomerCard(customer, document) {
  const card = document.createElement("article");
  card.className = "customer";
  const name = document.createElement("h2");
  name.textContent = customer.name;
  card.append(name);
  return card;
}
