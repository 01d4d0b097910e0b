// The sessions board (`/`): the store's sessions in four columns (running, waiting for a human, failed, done),
// filtered by column and searched by id, pipeline or title. Every value is put in the page as text.
"use strict";

(function () {
  const { api, el, $, when, duration, cost, badge, showMessage } = window.OrchestraWeb;
  const COLUMNS = ["running", "waiting", "failed", "done"];
  const FAILED = new Set(["fail", "cancelled", "interrupted", "budget_exceeded"]);

  function columnOf(row) {
    if (row.waiting) return "waiting";
    if (row.status === "success") return "done";
    if (FAILED.has(row.status)) return "failed";
    return "running";
  }

  function card(row) {
    const name = row.title || row.pipeline || "";
    return el("li", { class: "card", "data-session": row.session_id, "data-status": row.status },
      el("a", { href: "/view/" + encodeURIComponent(row.session_id) },
        el("span", { class: "card-title" }, name || "session " + row.session_id),
        el("span", { class: "card-id" }, "#" + row.session_id)),
      el("div", { class: "card-meta" }, badge(row.status), " ", when(row.started_at)),
      el("div", { class: "card-meta" },
        [duration(row.duration_s), row.nodes_run ? row.nodes_run + " nodes" : "", cost(row.cost_usd, row.cost_complete)]
          .filter(Boolean).join(" · ")),
    );
  }

  function matches(row, words) {
    const text = [row.session_id, row.pipeline, row.title, row.status].map((v) => String(v ?? "")).join(" ")
      .toLowerCase();
    return words.every((word) => text.includes(word));
  }

  class Board {
    constructor() {
      this.rows = [];
      this.timer = null;
      const params = new URLSearchParams(window.location.search);
      $("#search").value = params.get("q") || "";
      $("#filter").value = COLUMNS.includes(params.get("column")) ? params.get("column") : "all";
      $("#search").addEventListener("input", () => this.show());
      $("#filter").addEventListener("change", () => this.show());
      $("#board-filters").addEventListener("submit", (event) => event.preventDefault());
    }

    async load() {
      clearTimeout(this.timer);
      try {
        this.rows = (await api("/sessions?limit=200")).sessions || [];
      } catch (error) {
        showMessage(error.message, true);
        return;
      }
      this.rows.sort((a, b) => String(b.started_at || "").localeCompare(String(a.started_at || ""))
        || (Number(b.session_id) || 0) - (Number(a.session_id) || 0));
      this.show();
      if (this.rows.some((row) => columnOf(row) === "running" || columnOf(row) === "waiting")) {
        this.timer = setTimeout(() => this.load(), 3000);
      }
    }

    show() {
      const words = $("#search").value.toLowerCase().split(/\s+/).filter(Boolean);
      const only = $("#filter").value;
      this.remember(words.join(" "), only);
      const shown = this.rows.filter((row) => matches(row, words));
      for (const column of COLUMNS) {
        const rows = shown.filter((row) => columnOf(row) === column);
        const section = document.querySelector('#board [data-column="' + column + '"]');
        section.hidden = only !== "all" && only !== column;
        section.querySelector(".count").textContent = String(rows.length);
        const list = section.querySelector("ol");
        list.replaceChildren(...(rows.length ? rows.map(card) : [el("li", { class: "empty" }, "None")]));
      }
      $("#board").hidden = false;
      if (!this.rows.length) showMessage("No session yet: start one from Launch, with orchestra run or POST /pipelines.", false);
      else if (!shown.length) showMessage("No session matches.", false);
      else showMessage("", false);
    }

    remember(query, column) {
      const url = new URL(window.location.href);
      if (query) url.searchParams.set("q", query); else url.searchParams.delete("q");
      if (column !== "all") url.searchParams.set("column", column); else url.searchParams.delete("column");
      history.replaceState(null, "", url.pathname + url.search);
    }
  }

  if (document.body.dataset.page === "sessions") new Board().load();
})();
