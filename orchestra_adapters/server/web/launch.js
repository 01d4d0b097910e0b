// The launch page (`/launch`): the project's pipelines with their goal and compile result, and the form that starts
// one (its --set values, backend, budget) with a POST /pipelines, under the same origin and token checks as every
// change. Every value is put in the page as text.
"use strict";

(function () {
  const { api, el, $, showMessage } = window.OrchestraWeb;

  // `KEY=VALUE` lines, as `orchestra run --set` takes them (blank lines skipped).
  function setValues(text) {
    const values = {};
    for (const [index, line] of text.split("\n").entries()) {
      if (!line.trim()) continue;
      const at = line.indexOf("=");
      if (at <= 0 || !line.slice(0, at).trim()) throw new Error("line " + (index + 1) + ": expected KEY=VALUE");
      values[line.slice(0, at).trim()] = line.slice(at + 1);
    }
    return values;
  }

  function verdict(entry) {
    if (entry.error) return el("span", { class: "badge fail" }, "cannot compile");
    if (!entry.valid) return el("span", { class: "badge fail" }, entry.errors + (entry.errors === 1 ? " error" : " errors"));
    return el("span", { class: "badge success" },
      "valid" + (entry.warnings ? ", " + entry.warnings + (entry.warnings === 1 ? " warning" : " warnings") : ""));
  }

  function diagnostics(entry) {
    const items = (entry.diagnostics || []).map((d) => el("li", { class: "diagnostic " + d.severity },
      el("strong", {}, d.severity), " ", d.node_id ? "[" + d.node_id + "] " : "", d.message, " ",
      el("span", { class: "meta" }, "(" + d.rule + ")")));
    if (entry.error) items.unshift(el("li", { class: "diagnostic error" }, entry.error));
    if (!items.length) return null;
    return el("details", { class: "diagnostics" }, el("summary", {}, "Diagnostics"), el("ul", {}, ...items));
  }

  class LaunchPage {
    constructor() {
      this.pipelines = [];
      $("#launch-form").addEventListener("submit", (event) => { event.preventDefault(); this.start(); });
      $("#pipeline").addEventListener("change", () => this.chosen());
    }

    async load() {
      let listing;
      try {
        listing = await api("/pipelines");
      } catch (error) {
        showMessage(error.message, true);
        return;
      }
      this.pipelines = listing.pipelines || [];
      const backend = $("#backend");
      backend.replaceChildren(el("option", { value: "" }, "default"),
        ...(listing.backends || []).map((name) => el("option", { value: name }, name)));
      this.showList(listing.truncated);
      const select = $("#pipeline");
      select.replaceChildren(...this.pipelines.map((entry) => el("option",
        { value: entry.path, disabled: !entry.valid }, entry.path + (entry.valid ? "" : " (not valid)"))));
      const wanted = new URLSearchParams(window.location.search).get("path");
      const first = this.pipelines.find((entry) => entry.path === wanted && entry.valid)
        || this.pipelines.find((entry) => entry.valid);
      if (first) select.value = first.path;
      $("#launch").hidden = !first;
      this.chosen();
    }

    showList(truncated) {
      const list = $("#pipelines");
      if (!this.pipelines.length) {
        showMessage("No pipeline here: put a .dot file in the project (orchestra init makes one).", false);
        list.replaceChildren();
        return;
      }
      showMessage(truncated ? "Only the first " + this.pipelines.length + " pipelines are listed." : "", false);
      list.replaceChildren(...this.pipelines.map((entry) => {
        const choose = el("button", { type: "button", class: "secondary", disabled: !entry.valid }, "Start…");
        choose.addEventListener("click", () => {
          $("#pipeline").value = entry.path;
          this.chosen();
          $("#set-values").focus();
        });
        return el("li", { class: "pipeline", "data-path": entry.path },
          el("div", { class: "pipeline-head" }, el("strong", {}, entry.name), " ", el("code", {}, entry.path), " ",
            verdict(entry), choose),
          entry.goal ? el("p", { class: "goal" }, entry.goal) : el("p", { class: "goal empty" }, "No goal given."),
          diagnostics(entry));
      }));
    }

    chosen() {
      const entry = this.pipelines.find((item) => item.path === $("#pipeline").value);
      $("#chosen-goal").textContent = entry ? entry.goal || "" : "";
      const backend = $("#backend").querySelector('option[value=""]');
      if (backend) backend.textContent = "default" + (entry && entry.backend ? " (" + entry.backend + ")" : "");
    }

    async start() {
      const button = $("#start");
      let body;
      try {
        body = { path: $("#pipeline").value, set: setValues($("#set-values").value),
          auto_approve: $("#auto-approve").checked };
      } catch (error) {
        this.fail(error.message, []);
        return;
      }
      if ($("#backend").value) body.backend = $("#backend").value;
      const budget = {};
      for (const key of ["max_cost", "max_tokens", "max_wall_time"]) {
        const value = $("#" + key.replaceAll("_", "-")).value.trim();
        if (value) budget[key] = value;
      }
      if (Object.keys(budget).length) body.budget = budget;
      button.disabled = true;
      try {
        const started = await api("/pipelines", { method: "POST", body: JSON.stringify(body) });
        window.location.assign("/view/" + encodeURIComponent(started.id));
      } catch (error) {
        this.fail(error.message, (error.details && error.details.diagnostics) || []);
        button.disabled = false;
      }
    }

    fail(message, found) {
      const box = $("#launch-error");
      box.hidden = false;
      box.replaceChildren(el("p", {}, message), ...(found.length ? [el("ul", {}, ...found.map((d) =>
        el("li", {}, d.severity + ": " + (d.node_id ? "[" + d.node_id + "] " : "") + d.message)))] : []));
    }
  }

  if (document.body.dataset.page === "launch") new LaunchPage().load();
})();
