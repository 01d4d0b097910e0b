// Agents live: what the running nodes' agents write and call, from the event stream's AgentActivity events.
// Agent text is hostile: it reaches the page only as text nodes. Each node keeps at most LIMIT characters.
"use strict";

(function () {
  const { el, short } = window.OrchestraWeb;
  const LIMIT = 32 * 1024; // characters of live activity the page keeps per node (and branch)
  const RESULT_CHARS = 1200; // a tool result is shown up to this long (the turn's review shows it whole)
  const ARG_CHARS = 400; // a tool call's argument is shown up to this long
  const BLOCKS = 8; // the nodes shown at once: a finished node's block goes when more are needed

  class Live {
    constructor(box) {
      this.box = box;
      this.blocks = new Map(); // "node|branch" -> { section, list, status, size }
    }

    // One AgentActivity event: text joins the node's last text; a tool call or result is a line of its own.
    add(data) {
      const block = this.block(data.node_id, data.branch);
      const atBottom = this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight < 40;
      // activity read after its node's end (a stored session's stream reads both every 200 ms) leaves it ended
      if (!block.section.classList.contains("done")) {
        block.status.textContent = "running" + (data.turn !== null && data.turn !== undefined ? " · turn " + data.turn : "");
      }
      const text = String(data.text || "");
      const last = block.list.lastElementChild;
      if (data.activity === "text") {
        if (last && last.classList.contains("live-text") && last.dataset.turn === String(data.turn)) {
          last.append(text);
        } else {
          block.list.append(el("li", { class: "live-text", "data-turn": data.turn }, text));
        }
        block.size += text.length;
      } else if (data.activity === "tool_call") {
        const args = argumentsOf(text);
        block.list.append(el("li", { class: "live-call", "data-call": data.call_id || "" },
          el("span", { class: "arrow", "aria-hidden": "true" }, "→ "), el("code", {}, String(data.tool || "tool")),
          el("span", { class: "args" }, ...args)));
        block.size += args.reduce((size, arg) => size + arg.textContent.length, 0);
      } else if (data.activity === "tool_result") {
        const shown = short(text, RESULT_CHARS);
        block.list.append(el("li", { class: "live-result" + (data.error ? " error" : "") },
          el("span", { class: "arrow", "aria-hidden": "true" }, "← "), el("code", {}, String(data.tool || "result")),
          el("span", { class: "verdict" }, data.error ? " failed: " : ": "), el("span", { class: "result" }, shown)));
        block.size += shown.length;
      }
      this.trim(block);
      if (atBottom) this.box.scrollTop = this.box.scrollHeight;
    }

    // The node runs (again): its block, if it has one, is live again.
    start(nodeId, branch) {
      const block = this.blocks.get(key(nodeId, branch));
      // a stored session's stream may replay the stage's start after its first activity: a live block stays as it is
      if (!block || !block.section.classList.contains("done")) return;
      block.status.textContent = "running";
      block.section.classList.remove("done");
    }

    // The node's stage ended: its block stays, marked done, until the next run of it.
    finish(nodeId, branch, status) {
      const block = this.blocks.get(key(nodeId, branch));
      if (!block) return;
      block.status.textContent = status;
      block.section.classList.add("done");
    }

    block(nodeId, branch) {
      const id = key(nodeId, branch);
      let block = this.blocks.get(id);
      if (block) return block;
      const empty = this.box.querySelector(".empty");
      if (empty) empty.remove();
      for (const [old, kept] of this.blocks) {
        if (this.blocks.size < BLOCKS) break;
        if (kept.section.classList.contains("done")) { kept.section.remove(); this.blocks.delete(old); }
      }
      const status = el("span", { class: "live-status" }, "running");
      const list = el("ol", { class: "live-items" });
      const section = el("li", { class: "live-node", "data-node": nodeId, "data-branch": branch || "" },
        el("div", { class: "live-head" }, el("strong", {}, String(nodeId)),
          branch ? el("span", { class: "branch" }, " [" + branch + "]") : null, " ", status),
        list);
      this.box.append(section);
      block = { section, list, status, size: 0 };
      this.blocks.set(id, block);
      return block;
    }

    // Keep the node's newest LIMIT characters: the oldest lines go, then the head of the oldest text.
    trim(block) {
      while (block.size > LIMIT && block.list.firstElementChild) {
        const first = block.list.firstElementChild;
        const length = first.textContent.length;
        if (first.classList.contains("live-text") && block.size - length < LIMIT / 2) {
          const keep = length - (block.size - LIMIT);
          first.textContent = "…" + first.textContent.slice(length - keep);
          block.size = LIMIT;
          return;
        }
        first.remove();
        block.size -= length;
      }
    }
  }

  // A tool call's arguments (JSON) one per line, `name: value`, a string value as its text (its line breaks kept);
  // arguments that are not a JSON object as they came.
  function argumentsOf(text) {
    let parsed = null;
    try { parsed = JSON.parse(text); } catch (_) { parsed = null; }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return [el("span", { class: "arg" }, short(text, RESULT_CHARS))];
    return Object.entries(parsed).map(([name, value]) => el("span", { class: "arg" },
      el("span", { class: "arg-name" }, name + ": "),
      short(typeof value === "string" ? value : JSON.stringify(value), ARG_CHARS)));
  }

  function key(nodeId, branch) {
    return String(nodeId) + "|" + (branch || "");
  }

  window.OrchestraLive = { Live };
})();
