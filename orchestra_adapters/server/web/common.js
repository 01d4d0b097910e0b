// The web view's shared helpers (loaded first by every page): the token, API calls, building elements. Every
// value from the server reaches the page as text (textContent, text nodes, attributes set one by one): agent
// output is hostile.
"use strict";

(function () {
  const TOKEN_KEY = "orchestra.token";

  function captureToken() {
    const url = new URL(window.location.href);
    const given = url.searchParams.get("token");
    if (given !== null) {
      sessionStorage.setItem(TOKEN_KEY, given);
      url.searchParams.delete("token");
      history.replaceState(null, "", url.pathname + url.search + url.hash);
    }
  }

  class ApiError extends Error {
    constructor(status, message, details) { super(message); this.status = status; this.details = details || {}; }
  }

  async function api(path, options) {
    const init = Object.assign({ credentials: "same-origin" }, options || {});
    const headers = new Headers(init.headers || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.set("Authorization", "Bearer " + token);
    if (init.body !== undefined) headers.set("Content-Type", "application/json");
    init.headers = headers;
    const response = await fetch(path, init);
    let document_ = null;
    try { document_ = await response.json(); } catch (_) { document_ = null; }
    if (!response.ok) {
      let message = (document_ && document_.error) || response.statusText || "request failed";
      if (response.status === 401) message += " — open this page once with ?token=YOUR_TOKEN";
      throw new ApiError(response.status, message, document_);
    }
    return document_;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  const $ = (selector) => document.querySelector(selector);
  const short = (text, limit) => (text.length > limit ? text.slice(0, limit) + "…" : text);

  function clock(timestamp) {
    const when = timestamp ? new Date(timestamp) : new Date();
    return isNaN(when) ? "" : when.toLocaleTimeString([], { hour12: false });
  }

  function when(timestamp) {
    if (!timestamp) return "";
    const date = new Date(timestamp);
    return isNaN(date) ? String(timestamp) : date.toLocaleString([], { hour12: false });
  }

  function duration(seconds) {
    if (typeof seconds !== "number") return "";
    if (seconds < 60) return seconds.toFixed(1) + " s";
    return Math.floor(seconds / 60) + " min " + Math.round(seconds % 60) + " s";
  }

  function cost(usd, complete) {
    if (usd === null || usd === undefined) return complete === false ? "unknown" : "";
    const text = usd >= 1 ? "$" + usd.toFixed(2) : usd > 0 ? "$" + usd.toPrecision(3) : "$0.00";
    return complete === false ? text + " + unknown" : text;
  }

  function badge(status) {
    return el("span", { class: "badge " + String(status || "unknown") }, String(status || "unknown"));
  }

  function showMessage(text, isError) {
    const message = $("#message");
    message.hidden = !text;
    message.textContent = text || "";
    message.classList.toggle("error", Boolean(isError));
  }

  // The API's Authorization header (a page opened once with ?token= keeps it in sessionStorage).
  function authHeaders() {
    const headers = new Headers();
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.set("Authorization", "Bearer " + token);
    return headers;
  }

  // A number with thousands separators (tokens).
  function count(value) {
    return typeof value === "number" ? value.toLocaleString("en-US") : "";
  }

  // The theme toggle: the system's (auto), light or dark, kept in localStorage (theme.js applies it early).
  const THEMES = ["auto", "light", "dark"];

  function setUpThemeToggle() {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    const show = () => {
      const theme = document.documentElement.dataset.theme || "auto";
      button.textContent = "Theme: " + theme;
      button.setAttribute("aria-label", "Colour theme: " + theme + " (change)");
    };
    button.addEventListener("click", () => {
      const now = document.documentElement.dataset.theme || "auto";
      const next = THEMES[(THEMES.indexOf(now) + 1) % THEMES.length];
      if (next === "auto") {
        delete document.documentElement.dataset.theme;
        localStorage.removeItem("orchestra.theme");
      } else {
        document.documentElement.dataset.theme = next;
        localStorage.setItem("orchestra.theme", next);
      }
      show();
    });
    show();
  }

  captureToken();
  setUpThemeToggle();
  window.OrchestraWeb = Object.freeze({
    ApiError, api, authHeaders, el, $, short, clock, when, duration, cost, count, badge, showMessage,
  });
})();
