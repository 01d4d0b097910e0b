// Time and money on the session page (GET /sessions/{id}/costs): the session's totals at the top, per node its
// runs, time, tokens and cost in a table and as a badge on the graph, and a Gantt timeline of the node runs (one
// lane per node and parallel branch). Every value is put in the page as text.
"use strict";

(function () {
  const { api, el, $, duration, cost, count } = window.OrchestraWeb;
  const SVG = "http://www.w3.org/2000/svg";

  function tokensText(tokens) {
    const total = (tokens && tokens.total_tokens) || 0;
    if (total >= 1e6) return (total / 1e6).toFixed(1) + "M tok";
    if (total >= 1e3) return (total / 1e3).toFixed(1) + "k tok";
    return total + " tok";
  }

  // A node's money: its cost when the accounting knows it, else its tokens alone.
  function moneyText(node) {
    const known = node.cost_usd !== null && node.cost_usd !== undefined;
    return known ? cost(node.cost_usd, node.cost_complete) : "unknown";
  }

  class Costs {
    constructor(sessionId, openNode) {
      this.id = sessionId;
      this.openNode = openNode;
      this.timer = null;
      this.data = null;
    }

    refreshSoon() {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.load(), 400);
    }

    async load(graphNodes) {
      if (graphNodes) this.graphNodes = graphNodes;
      try {
        this.data = await api("/sessions/" + encodeURIComponent(this.id) + "/costs");
      } catch (error) {
        return;
      }
      this.showTotals();
      this.showTable();
      this.showGantt();
      this.showBadges();
    }

    showTotals() {
      const totals = this.data.totals || {};
      const tokens = totals.tokens || {};
      const box = $("#totals");
      box.hidden = false;
      const item = (label, value, key) => el("div", { class: "total", "data-total": key },
        el("span", { class: "total-label" }, label), el("span", { class: "total-value" }, value));
      box.replaceChildren(
        item("Cost", totals.cost_usd === null ? "unknown" : cost(totals.cost_usd, totals.cost_complete), "cost"),
        item("Tokens", count(tokens.total_tokens || 0), "tokens"),
        item("Agent turns", count(totals.agent_turns || 0), "agent_turns"),
        item("Time in nodes", duration(totals.node_time_s || 0), "node_time"),
        item("Elapsed", this.elapsed(totals), "elapsed"));
    }

    elapsed(totals) {
      const start = Date.parse(totals.started_at || ""), last = Date.parse(totals.last_at || "");
      return isNaN(start) || isNaN(last) ? "" : duration((last - start) / 1000);
    }

    showTable() {
      const nodes = this.data.nodes || [];
      const body = $("#costs tbody");
      body.replaceChildren(...nodes.map((node) => {
        const diff = el("button", { type: "button", class: "secondary small", "data-node-diff": node.node_id }, "Diff");
        diff.addEventListener("click", () => this.openNode(node.node_id));
        return el("tr", { "data-node": node.node_id },
          el("th", { scope: "row" }, node.node_id),
          el("td", {}, node.status || ""),
          el("td", { class: "number" }, String(node.runs)),
          el("td", { class: "number" }, duration(node.duration_s)),
          el("td", { class: "number" }, String(node.agent_turns)),
          el("td", { class: "number", "data-tokens": String(node.tokens.total_tokens) }, count(node.tokens.total_tokens)),
          el("td", { class: "number" }, node.agent_turns ? moneyText(node) : ""),
          el("td", {}, node.commits ? diff : ""));
      }));
      const totals = this.data.totals || {};
      $("#costs tfoot").replaceChildren(el("tr", {},
        el("th", { scope: "row" }, "Session"), el("td", {}), el("td", { class: "number" },
          String(nodes.reduce((sum, node) => sum + node.runs, 0))),
        el("td", { class: "number" }, duration(totals.node_time_s || 0)),
        el("td", { class: "number" }, String(totals.agent_turns || 0)),
        el("td", { class: "number" }, count((totals.tokens || {}).total_tokens || 0)),
        el("td", { class: "number" }, totals.cost_usd === null ? "unknown" : cost(totals.cost_usd, totals.cost_complete)),
        el("td", {})));
      $("#costs-section").hidden = !nodes.length;
    }

    // One lane per (branch, node); a bar per run from its start to its end (a running one: to now).
    showGantt() {
      const bars = (this.data.bars || []).filter((bar) => bar.started_at);
      const box = $("#gantt");
      if (!bars.length) { box.replaceChildren(el("p", { class: "empty" }, "No node has run yet.")); return; }
      const now = Date.now();
      const start = Math.min(...bars.map((bar) => Date.parse(bar.started_at)));
      const end = Math.max(...bars.map((bar) => (bar.ended_at ? Date.parse(bar.ended_at) : now)), start + 1);
      const lanes = new Map();
      for (const bar of bars) {
        const key = (bar.branch ? bar.branch + " / " : "") + bar.node_id;
        if (!lanes.has(key)) lanes.set(key, []);
        lanes.get(key).push(bar);
      }
      const span = end - start;
      const rows = [...lanes.entries()].map(([label, runs]) => el("div", { class: "lane", "data-lane": label },
        el("div", { class: "lane-label", title: label }, label),
        el("div", { class: "lane-track" }, ...runs.map((bar) => {
          const from = Date.parse(bar.started_at), to = bar.ended_at ? Date.parse(bar.ended_at) : now;
          const block = el("div", { class: "bar status-" + bar.status, "data-node": bar.node_id,
            title: bar.node_id + (bar.branch ? " [" + bar.branch + "]" : "") + ", attempt " + bar.attempt + ": "
              + bar.status + ", " + duration(bar.duration_s ?? (to - from) / 1000) });
          block.style.left = ((from - start) / span * 100).toFixed(3) + "%"; // CSSOM: allowed by the CSP
          block.style.width = Math.max((to - from) / span * 100, 0.4).toFixed(3) + "%";
          return block;
        }))));
      box.replaceChildren(...rows, el("div", { class: "gantt-scale" },
        el("span", {}, "0 s"), el("span", {}, duration(span / 1000))));
    }

    // A badge under each node of the graph: its cost (its tokens when the cost is unknown; its time for a node
    // without agent turns); the whole figures in its tooltip and `data-cost`.
    showBadges() {
      if (!this.graphNodes) return;
      for (const node of this.data.nodes || []) {
        const group = this.graphNodes.get(node.node_id);
        if (!group || !node.runs) continue;
        const known = node.cost_usd !== null && node.cost_usd !== undefined;
        const full = [duration(node.duration_s), node.agent_turns ? count(node.tokens.total_tokens) + " tokens" : "",
          node.agent_turns ? moneyText(node) : ""].filter(Boolean).join(" · ");
        const short = !node.agent_turns ? duration(node.duration_s)
          : known ? cost(node.cost_usd, node.cost_complete) : tokensText(node.tokens);
        let badge = group.querySelector("text.cost-badge");
        if (!badge) {
          const box = group.getBBox();
          badge = document.createElementNS(SVG, "text");
          badge.setAttribute("class", "cost-badge");
          badge.setAttribute("x", String(box.x + box.width / 2));
          badge.setAttribute("y", String(box.y + box.height + 11));
          badge.setAttribute("text-anchor", "middle");
          group.append(badge);
        }
        badge.textContent = short;
        // the node's name holds what it shows (its label, then its badge), then what it does
        group.setAttribute("aria-label", (group.dataset.label || node.node_id) + " " + short + ": its changes");
        group.dataset.cost = full;
        const title = group.querySelector("title");
        if (title) title.textContent = node.node_id + " (" + (group.dataset.status || "pending") + ") · " + full;
      }
    }
  }

  window.OrchestraCosts = Object.freeze({ Costs });
})();
