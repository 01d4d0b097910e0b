// Shared by Orchestra's CXDB turn renderers: a tiny view tree, turned into React elements (the CXDB UI's
// DynamicRenderer calls a renderer as a React component) or into DOM nodes (any other page). No imports: the
// UI loads these modules by URL, where a bare "react" import would not resolve. Every value is put into the
// page as text, never as markup; links go only to http(s) addresses.

const REACT_ELEMENT = Symbol.for("react.element");

// h("div", {className: "x"}, child, ...): a view node. Children: view nodes, strings, numbers, arrays, or
// null/false/undefined (skipped).
export function h(tag, props, ...children) {
  return { tag, props: props || {}, children: flatten(children) };
}

function flatten(children) {
  const out = [];
  for (const child of children) {
    if (Array.isArray(child)) out.push(...flatten(child));
    else if (child !== null && child !== undefined && child !== false) out.push(child);
  }
  return out;
}

// The module's own server (orchestra serve), for links back to it: .../cxdb/renderers/x.js -> ...
export const SERVER = new URL("../../", import.meta.url).href.replace(/\/$/, "");

export function safeHref(url) {
  try {
    const parsed = new URL(url, SERVER);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch (error) {
    return null;
  }
}

// A React 18 element (the CXDB UI's React), or one made by the page's own React when it exposes one.
function reactElement(type, props, key) {
  const React = globalThis.React;
  if (React && typeof React.createElement === "function") {
    return React.createElement(type, key === undefined ? props : { ...props, key });
  }
  return { $$typeof: REACT_ELEMENT, type, key: key === undefined ? null : String(key), ref: null, props, _owner: null };
}

export function toReact(node, key) {
  if (typeof node === "string" || typeof node === "number") return String(node);
  const props = {};
  for (const [name, value] of Object.entries(node.props)) {
    if (name === "href") {
      const href = safeHref(value);
      if (href) props.href = href;
    } else {
      props[name] = value;
    }
  }
  const children = node.children.map((child, index) => toReact(child, index));
  if (children.length === 1) props.children = children[0];
  else if (children.length > 1) props.children = children;
  return reactElement(node.tag, props, key);
}

export function toDom(node, document) {
  if (typeof node === "string" || typeof node === "number") return document.createTextNode(String(node));
  const element = document.createElement(node.tag);
  for (const [name, value] of Object.entries(node.props)) {
    if (name === "className") element.className = value;
    else if (name === "style") Object.assign(element.style, value);
    else if (name === "href") {
      const href = safeHref(value);
      if (href) element.setAttribute("href", href);
    } else if (name === "title" || name === "target" || name === "rel" || name.startsWith("data-")) {
      element.setAttribute(name, String(value));
    }
  }
  for (const child of node.children) element.append(toDom(child, document));
  return element;
}

// A renderer module's exports from its view function `view(data, props)`: the React component (default
// export, what the CXDB UI's registry names), and `render(container, props)` for pages without React.
export function renderer(name, view) {
  const component = (props) => toReact(view(record(props), props || {}));
  Object.defineProperty(component, "name", { value: name });
  const render = (container, props) => {
    container.replaceChildren(toDom(view(record(props), props || {}), container.ownerDocument));
  };
  return { component, render };
}

function record(props) {
  const data = props && props.data;
  return data && typeof data === "object" ? data : {};
}

// Small pieces the three renderers share.
export const PRE = { whiteSpace: "pre-wrap", wordBreak: "break-word", margin: "0.25em 0" };

export function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

export function count(value) {
  const number = Number(value);
  return Number.isFinite(number) ? number.toLocaleString("en-US") : "?";
}

export function header(kind, ...parts) {
  return h("header", { className: "orchestra-turn-header" },
    h("strong", null, kind), ...parts.filter(Boolean).map((part) => [" · ", part]));
}

export function section(title, ...content) {
  return h("section", { className: "orchestra-turn-section" }, h("h4", { style: { margin: "0.5em 0 0.2em" } }, title),
    ...content);
}

export function shortSha(sha) {
  return typeof sha === "string" ? sha.slice(0, 12) : "";
}
