// The review panel of the session page: a turn's diff beside its messages and tool calls, a node's diff over all
// its turns, the session's whole diff; unified or side by side, per file, with a small syntax colouring of our own
// (token classes: keywords, strings, comments, numbers; line by line). Large diffs come truncated: a file's rest is
// asked for alone, and past that the page links to the file. Every value is put in the page as text.
"use strict";

(function () {
  const { api, el, $, duration, cost, count, showMessage } = window.OrchestraWeb;
  const MODE_KEY = "orchestra.diff-mode";

  // ---- syntax colouring: a few token classes per family of languages, one line at a time -----------------
  const KEYWORDS = {
    py: "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case",
    js: "async await break case catch class const continue default delete do else export extends false finally for function if import in instanceof let new null return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly",
    c: "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected namespace template typename new delete true false nullptr fn let mut impl pub use mod match trait where self Self crate package func go defer chan map range var type import interface struct",
    sh: "if then else elif fi for in do done while until case esac function return local export set unset exit echo",
    dot: "digraph graph subgraph node edge strict",
  };
  const FAMILY = {
    py: "py", pyi: "py", js: "js", mjs: "js", cjs: "js", ts: "js", tsx: "js", jsx: "js", json: "js",
    c: "c", h: "c", cc: "c", cpp: "c", hpp: "c", java: "c", kt: "c", cs: "c", go: "c", rs: "c", swift: "c",
    sh: "sh", bash: "sh", zsh: "sh", dot: "dot", gv: "dot", yaml: "sh", yml: "sh", toml: "sh", rb: "sh",
  };
  const LINE_COMMENT = { py: "#", sh: "#", js: "//", c: "//", dot: "//" };
  const words = {};
  for (const [family, list] of Object.entries(KEYWORDS)) words[family] = new Set(list.split(" "));

  function familyOf(path) {
    const name = String(path || "").toLowerCase();
    const dot = name.lastIndexOf(".");
    return FAMILY[dot >= 0 ? name.slice(dot + 1) : ""] || null;
  }

  // The line's text as nodes: plain text, and <span class="tok-*"> around the tokens recognised.
  function highlight(text, family) {
    if (!family || text.length > 400) return [text];
    const comment = LINE_COMMENT[family];
    const pattern = /("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d[\d_.xXa-fA-F]*\b)|([A-Za-z_$][\w$]*)|(#|\/\/)/g;
    const nodes = [];
    let last = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      const [token, string, number, word, mark] = match;
      let kind = null;
      if (mark !== undefined) {
        if (mark === comment) {
          if (match.index > last) nodes.push(text.slice(last, match.index));
          nodes.push(el("span", { class: "tok-c" }, text.slice(match.index)));
          return nodes;
        }
        continue;
      }
      if (string !== undefined && !(family === "sh" && token[0] === "`")) kind = "tok-s";
      else if (number !== undefined) kind = "tok-n";
      else if (word !== undefined && words[family].has(word)) kind = "tok-k";
      if (!kind) continue;
      if (match.index > last) nodes.push(text.slice(last, match.index));
      nodes.push(el("span", { class: kind }, token));
      last = match.index + token.length;
    }
    if (last < text.length) nodes.push(text.slice(last));
    return nodes;
  }

  // ---- rendering a file's lines --------------------------------------------------------------------------
  const KIND_CLASS = { "+": "add", "-": "del", " ": "ctx", "@": "hunk", "\\": "note" };

  function cell(number) {
    return el("td", { class: "num" }, number === null || number === undefined ? "" : String(number));
  }

  function codeCell(kind, text, family) {
    const sign = kind === "@" || kind === "\\" ? "" : kind;
    return el("td", { class: "code" }, el("span", { class: "sign", "aria-hidden": "true" }, sign),
      ...(kind === "@" || kind === "\\" ? [text] : highlight(text, family)));
  }

  function unifiedRows(lines, family) {
    return lines.map(([kind, old, neu, text]) => el("tr", { class: KIND_CLASS[kind] || "ctx" },
      cell(old), cell(neu), codeCell(kind, text, family)));
  }

  // Side by side: each run of deletions paired row by row with the additions that follow it.
  function splitRows(lines, family) {
    const rows = [];
    let index = 0;
    while (index < lines.length) {
      const [kind, old, neu, text] = lines[index];
      if (kind === "-" || kind === "+") {
        const removed = [], added = [];
        while (index < lines.length && lines[index][0] === "-") removed.push(lines[index++]);
        while (index < lines.length && lines[index][0] === "+") added.push(lines[index++]);
        for (let row = 0; row < Math.max(removed.length, added.length); row++) {
          const left = removed[row], right = added[row];
          rows.push(el("tr", { class: "pair" },
            ...(left ? [cell(left[1]), el("td", { class: "code del" }, ...highlight(left[3], family))]
              : [cell(null), el("td", { class: "code empty" })]),
            ...(right ? [cell(right[2]), el("td", { class: "code add" }, ...highlight(right[3], family))]
              : [cell(null), el("td", { class: "code empty" })])));
        }
        continue;
      }
      index++;
      if (kind === "@" || kind === "\\") {
        rows.push(el("tr", { class: KIND_CLASS[kind] }, el("td", { colspan: "4", class: "code" }, text)));
      } else {
        rows.push(el("tr", { class: "ctx" }, cell(old), el("td", { class: "code" }, ...highlight(text, family)),
          cell(neu), el("td", { class: "code" }, ...highlight(text, family))));
      }
    }
    return rows;
  }

  const STATUS_MARK = { added: "A", deleted: "D", renamed: "R", modified: "M" };

  class Review {
    constructor(sessionId) {
      this.id = sessionId;
      this.mode = localStorage.getItem(MODE_KEY) === "split" ? "split" : "unified";
      this.current = null; // {query, title, document}
      $("#review-close").addEventListener("click", () => this.close());
      document.addEventListener("keydown", (event) => {
        if (event.key === "Escape" && !$("#review").hidden) this.close();
      });
      for (const button of document.querySelectorAll("#review-mode button")) {
        button.addEventListener("click", () => this.setMode(button.dataset.mode));
      }
      this.showMode();
    }

    openTurn(turnId, label) { return this.open("turn=" + encodeURIComponent(turnId), "Turn " + label); }
    openNode(nodeId) { return this.open("node=" + encodeURIComponent(nodeId), "Node " + nodeId + ", all its turns"); }
    openSession() { return this.open("", "The whole session against its base"); }

    async open(query, title) {
      const panel = $("#review");
      panel.hidden = false;
      panel.dataset.state = "loading";
      $("#review-title").textContent = title;
      $("#review-files").replaceChildren(el("p", { class: "empty" }, "Loading…"));
      $("#review-turn").replaceChildren();
      $("#review-turn").hidden = true;
      let document_;
      try {
        document_ = await api("/sessions/" + encodeURIComponent(this.id) + "/diff" + (query ? "?" + query : ""));
      } catch (error) {
        $("#review-files").replaceChildren(el("p", { class: "message error" }, error.message));
        panel.dataset.state = "error";
        return;
      }
      this.current = { query, document: document_ };
      if (document_.turn) this.showTurn(document_.turn);
      this.showFiles();
      panel.dataset.state = "ready";
      panel.dataset.scope = document_.scope;
      panel.scrollIntoView({ block: "start" });
      $("#review-title").focus({ preventScroll: true }); // keyboard users land on what they opened
    }

    close() {
      $("#review").hidden = true;
      this.current = null;
      $("#session-diff").focus({ preventScroll: true });
    }

    setMode(mode) {
      this.mode = mode === "split" ? "split" : "unified";
      localStorage.setItem(MODE_KEY, this.mode);
      this.showMode();
      if (this.current) this.showFiles();
    }

    showMode() {
      for (const button of document.querySelectorAll("#review-mode button")) {
        button.setAttribute("aria-pressed", String(button.dataset.mode === this.mode));
      }
      $("#review").dataset.mode = this.mode;
    }

    showTurn(turn) {
      const box = $("#review-turn");
      box.hidden = false;
      const usage = turn.tokens || {};
      const head = el("div", { class: "meta" },
        [turn.model, turn.provider].filter(Boolean).join(" · "), " · ", duration(turn.duration_s), " · ",
        count((usage.prompt_tokens || 0) + (usage.completion_tokens || 0)) + " tokens",
        turn.cost_usd !== null && turn.cost_usd !== undefined ? " · " + cost(turn.cost_usd) : "");
      const messages = (turn.messages || []).map((message) => el("li", { class: "msg role-" + message.role },
        el("div", { class: "meta" }, message.role,
          (message.tool_calls || []).length ? " · calls " + message.tool_calls.join(", ") : ""),
        el("pre", { class: "text" }, message.content)));
      const calls = (turn.tool_calls || []).map((call) => el("li", { class: "call" + (call.error ? " failed" : "") },
        el("div", {}, el("code", {}, call.name)),
        ...Object.entries(call.args || {}).map(([key, value]) => el("div", { class: "arg" },
          el("span", { class: "meta" }, key + ": "), el("pre", { class: "text" }, value))),
        call.error !== null && call.error !== undefined
          ? el("div", { class: "arg" }, el("span", { class: "meta" }, "error: "), el("pre", { class: "text" }, call.error))
          : call.result !== null && call.result !== undefined
            ? el("div", { class: "arg" }, el("span", { class: "meta" }, "result: "), el("pre", { class: "text" }, call.result))
            : null));
      box.replaceChildren(
        el("h3", {}, (turn.node_id || "?") + " · turn " + turn.turn_number), head,
        el("h4", {}, "Messages"), messages.length ? el("ol", { class: "messages" }, ...messages) : el("p", { class: "empty" }, "None recorded."),
        el("h4", {}, "Tool calls"), calls.length ? el("ol", { class: "calls" }, ...calls) : el("p", { class: "empty" }, "None."));
    }

    showFiles() {
      const document_ = this.current.document;
      const parts = [];
      for (const section of document_.sections || []) {
        parts.push(el("h3", { class: "section-title" }, section.title));
        if (section.error) parts.push(el("p", { class: "message error" }, section.error));
        if (!section.error && !(section.files || []).length) parts.push(el("p", { class: "empty" }, "No change."));
        for (const file of section.files || []) parts.push(this.fileView(section, file));
      }
      if (!(document_.sections || []).length) parts.push(el("p", { class: "empty" }, "No commit: nothing changed."));
      if (document_.omitted_ranges) {
        parts.unshift(el("p", { class: "truncated" }, "The node's " + count(document_.omitted_ranges)
          + " earlier runs of commits are not shown: open their turns' diffs."));
      }
      $("#review-files").replaceChildren(...parts);
    }

    fileView(section, file, alone) {
      const family = familyOf(file.path);
      const title = el("summary", {},
        el("span", { class: "file-status " + file.status, title: file.status }, STATUS_MARK[file.status] || "M"), " ",
        el("span", { class: "file-path" }, file.status === "renamed" ? file.old_path + " → " + file.path : file.path),
        " ", el("span", { class: "stat-add" }, "+" + file.additions), " ", el("span", { class: "stat-del" }, "−" + file.deletions));
      const body = [];
      if (file.binary) body.push(el("p", { class: "empty" }, "Binary file."));
      else if (file.lines.length) {
        const rows = this.mode === "split" ? splitRows(file.lines, family) : unifiedRows(file.lines, family);
        body.push(el("div", { class: "diff-scroll" }, el("table", { class: "diff " + this.mode }, el("tbody", {}, ...rows))));
      }
      if (file.truncated) body.push(this.moreView(section, file, alone || this.current.document.path));
      return el("details", { class: "diff-file", open: true, "data-path": file.path }, title, ...body);
    }

    // A file cut short: its whole diff asked for alone, and past even that, a link to the file.
    moreView(section, file, alone) {
      const shown = file.lines.length;
      const note = el("p", { class: "truncated" },
        "Showing " + count(shown) + " of " + count(file.total_lines) + " lines. ");
      if (!alone) {
        const more = el("button", { type: "button", class: "secondary more" }, "Show the whole file's diff");
        more.addEventListener("click", () => this.loadFile(section, file, more));
        note.append(more, " ");
      }
      const sha = file.status === "deleted" ? section.base : section.head;
      const link = "/sessions/" + encodeURIComponent(this.id) + "/file?repo=" + encodeURIComponent(section.repo)
        + "&sha=" + encodeURIComponent(sha) + "&path=" + encodeURIComponent(file.status === "deleted" ? file.old_path : file.path);
      note.append(el("a", { href: link, target: "_blank", rel: "noopener", class: "file-link" }, "Open the file"));
      return note;
    }

    async loadFile(section, file, button) {
      button.disabled = true;
      const query = this.current.query + (this.current.query ? "&" : "") + "path=" + encodeURIComponent(file.path);
      try {
        const whole = await api("/sessions/" + encodeURIComponent(this.id) + "/diff?" + query);
        const match = (whole.sections || []).find((item) => item.head === section.head && item.repo === section.repo);
        const found = match && (match.files || []).find((item) => item.path === file.path);
        if (!found) throw new Error("the file is no longer in the diff");
        Object.assign(file, found);
        button.closest("details.diff-file").replaceWith(this.fileView(section, file, true));
      } catch (error) {
        showMessage(error.message, true);
        button.disabled = false;
      }
    }
  }

  window.OrchestraDiff = Object.freeze({ Review, highlight, familyOf });
})();
