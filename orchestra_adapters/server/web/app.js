// The web view of `orchestra serve`: a live session page (common.js holds the helpers). Every value from the
// server reaches the page as text (textContent, text nodes, attributes set one by one): agent output is hostile.
"use strict";

(function () {
  // Event kinds the page listens to (EventSource hears only the names it is told): the engine's, the
  // workspace's, and the turn types of sessions streamed from the store. Add new kinds here.
  const KINDS = [
    "PipelineStarted", "PipelineCompleted", "PipelineFailed", "PipelineRestarted", "StageStarted",
    "StageCompleted", "StageFailed", "StageRetrying", "EdgeSelected", "GoalGateUnsatisfied", "AgentTurnCompleted",
    "ParallelStarted", "ParallelBranchStarted", "ParallelBranchCompleted", "ParallelCompleted", "InterviewStarted",
    "InterviewCompleted", "InterviewTimeout", "CheckpointSaved", "SessionBranchCreated", "WorktreeCreated",
    "AgentCommitCreated", "UntrackedWritesCommitted", "WorktreeMerged", "WorktreeMergeConflict",
    "CommitMessageFallback", "WritesNotCommitted", "WorkspaceRestored", "WorkspaceSnapshotRecorded",
    "ProjectLinkFailed", "RepoCloned", "RepoFetched", "RemotePushed", "PushFailed", "SessionRolledBack",
    "SessionCleanedUp", "IncludedFilesCopied", "IncludedFileSkipped", "PipelineLifecycle", "NodeExecution",
    "AgentTurn", "Checkpoint", "HumanInteraction", "ParallelExecution", "WorkspaceSnapshot", "InteractionMode",
    "LifecycleEvent", "NodeEvent", "ParallelEvent", "AgentActivity", "message",
  ];
  const QUIET = new Set(["kind", "session_id", "timestamp", "branch", "type", "turn_id", "created_at", "node_id"]);

  const { api, authHeaders, el, $, short, clock, duration, badge, showMessage } = window.OrchestraWeb;

  // ---- the session page ----------------------------------------------------------------------------------
  // How many agent turns the page shows at first, and loads at a time when asked for earlier ones.
  const TURNS_PAGE = 50;

  function agentTurns(turns) {
    return turns.filter((turn) => /AgentTurn$/.test(String(turn.type || "")));
  }

  function outcomeStatus(status) {
    switch (String(status || "").toLowerCase()) {
      case "success": case "partial_success": case "succeeded": case "skipped": return "succeeded";
      case "fail": case "failed": case "error": return "failed";
      case "retry": case "retrying": return "retrying";
      case "running": case "started": return "running";
      default: return null;
    }
  }

  // The status a node takes from an event (live engine events and recorded turns), or null.
  function nodeStatusOf(data) {
    switch (data.kind) {
      case "StageStarted": return "running";
      case "StageCompleted": return outcomeStatus(data.outcome && data.outcome.status) || "succeeded";
      case "StageFailed": return data.will_retry ? "retrying" : "failed";
      case "StageRetrying": return "retrying";
      case "NodeExecution":
        if (data.event === "started") return "running";
        if (data.event === "retrying") return "retrying";
        return outcomeStatus(data.status);
      default: return null;
    }
  }

  function describe(data) {
    const node = data.node_id ? data.node_id + ": " : "";
    switch (data.kind) {
      case "PipelineStarted": return "pipeline " + (data.name || "") + (data.resumed ? " (resumed)" : "");
      case "PipelineCompleted": return "completed in " + duration(data.duration_s);
      case "PipelineFailed": return (data.node_id ? data.node_id + ": " : "") + (data.error || "failed");
      case "StageStarted": return node + (data.handler_type || "") + ", attempt " + (data.attempt || 1);
      case "StageCompleted": {
        const outcome = data.outcome || {};
        return node + (outcome.status || "done") + (outcome.failure_reason ? " — " + outcome.failure_reason : "")
          + (outcome.notes ? " — " + outcome.notes : "");
      }
      case "StageFailed": {
        const outcome = data.outcome || {};
        return node + (outcome.failure_reason || "failed") + (data.will_retry ? " (will retry)" : "");
      }
      case "StageRetrying": return node + "attempt " + data.attempt + " in " + duration(data.delay_s) + " — " + (data.reason || "");
      case "EdgeSelected": return data.source + " → " + data.target + (data.label ? " [" + data.label + "]" : "");
      case "InterviewStarted": return (data.stage ? data.stage + ": " : "") + ((data.question || {}).text || "");
      case "InterviewCompleted": {
        const answer = data.answer || {};
        return ((data.question || {}).text || "") + " → " + (answer.text || answer.value || "");
      }
      case "CheckpointSaved": return "after " + (data.node_id || "start");
      case "AgentTurnCompleted": {
        const turn = data.turn || {};
        return node + "turn " + turn.turn_number + " by " + (turn.model || "?")
          + ((turn.files_written || []).length ? ", wrote " + turn.files_written.join(", ") : "");
      }
      case "AgentCommitCreated":
        return node + String(data.sha || "").slice(0, 10) + " " + (data.message || "").split("\n")[0];
      case "NodeExecution": return node + (data.event || "") + (data.status ? " " + data.status : "");
      case "PipelineLifecycle": return (data.pipeline || "") + " " + (data.event || "") + (data.status ? " " + data.status : "");
      case "AgentTurn":
        return node + "turn " + data.turn_number + (data.git_sha ? " " + String(data.git_sha).slice(0, 10) : "")
          + (data.commit_message ? " " + data.commit_message.split("\n")[0] : "");
      default: {
        const parts = [];
        for (const [key, value] of Object.entries(data)) {
          if (QUIET.has(key) || value === null || value === "" || typeof value === "object") continue;
          parts.push(key + "=" + value);
        }
        return node + parts.join(" ");
      }
    }
  }

  class SessionPage {
    constructor(sessionId) {
      this.id = sessionId;
      this.base = "/pipelines/" + encodeURIComponent(sessionId);
      this.nodes = new Map(); // node id -> its <g> in the graph
      this.statuses = new Map(); // node id -> pending | running | succeeded | failed | retrying
      this.status = null;
      this.source = null;
      this.refreshTimer = null;
      this.questionPoll = 0;
      this.chatTimer = null;
      this.latest = []; // the session's last agent turns (read again as the run goes on)
      this.earlier = []; // older agent turns, loaded on demand
      this.nextBefore = null; // where the next older page ends, null when nothing is older
      this.streamAfter = null; // the event stream replays the turns the first page showed: it starts after this
    }

    async start() {
      document.title = "Orchestra session " + this.id;
      $("#title").textContent = "Session " + this.id;
      $("#cancel").addEventListener("click", () => this.cancel());
      this.review = new window.OrchestraDiff.Review(this.id);
      this.live = new window.OrchestraLive.Live($("#live"));
      this.costs = new window.OrchestraCosts.Costs(this.id, (nodeId) => this.review.openNode(nodeId));
      $("#session-diff").addEventListener("click", () => this.review.openSession());
      $("#turns").addEventListener("click", (event) => {
        const button = event.target.closest("button[data-turn]");
        if (button) this.review.openTurn(button.dataset.turn, button.dataset.label);
      });
      this.setUpChat();
      try {
        await this.loadStatus();
      } catch (error) {
        showMessage(error.message, true);
        $("#status").textContent = "";
        return;
      }
      // the Agents live box is there (its room kept) for a session that runs; one that ended has nothing live
      $("#live-section").hidden = !["running", "new"].includes(this.status);
      await Promise.all([this.loadGraph(), this.loadSession(), this.loadQuestions(), this.loadChat()]);
      await this.costs.load(this.nodes);
      this.follow();
      if (this.status === "running") this.pollChat();
    }

    // status line and cancel button
    async loadStatus() {
      this.showStatus(await api(this.base));
    }

    showStatus(document_) {
      this.status = document_.status;
      const line = $("#status");
      const parts = [el("span", {}, "Status: "), badge(document_.status)];
      if (document_.current_node) parts.push(" · at ", el("strong", {}, document_.current_node));
      const done = (document_.completed_nodes || []).length;
      parts.push(" · " + done + (done === 1 ? " node" : " nodes") + " completed");
      if (document_.error) parts.push(" · ", el("span", { class: "error-text" }, document_.error));
      line.replaceChildren(...parts);
      line.dataset.status = String(document_.status);
      $("#cancel").hidden = document_.status !== "running";
    }

    async cancel() {
      const button = $("#cancel");
      button.disabled = true;
      try {
        await api(this.base + "/cancel", { method: "POST", body: "{}" });
        showMessage("Cancelling…", false);
      } catch (error) {
        showMessage(error.message, true);
        button.disabled = false;
      }
    }

    // the graph
    async loadGraph() {
      const container = $("#graph");
      try {
        const response = await fetch(this.base + "/graph?legend=false", { headers: authHeaders(), credentials: "same-origin" });
        if (!response.ok) throw new Error("the graph is not available (" + response.status + ")");
        const parsed = new DOMParser().parseFromString(await response.text(), "image/svg+xml");
        const svg = parsed.documentElement;
        if (svg.nodeName !== "svg" || parsed.querySelector("parsererror")) throw new Error("the graph is not SVG");
        sanitize(svg);
        container.replaceChildren(document.importNode(svg, true));
      } catch (error) {
        container.replaceChildren(el("p", { class: "empty" }, error.message));
        return;
      }
      for (const group of container.querySelectorAll("g.node")) {
        const id = group.getAttribute("id") || "";
        if (!id.startsWith("node-")) continue; // the legend's samples are not pipeline nodes
        const nodeId = id.slice("node-".length);
        this.nodes.set(nodeId, group);
        group.setAttribute("data-node", nodeId);
        // a node opens its diff over all its turns, by mouse or keyboard
        group.setAttribute("tabindex", "0");
        group.setAttribute("role", "button");
        // named by its visible label (what a voice user says), then what it does
        const label = [...group.querySelectorAll("text:not(.cost-badge)")].map((text) => text.textContent).join(" ").trim();
        group.dataset.label = label || nodeId;
        group.setAttribute("aria-label", group.dataset.label + ": its changes");
        group.addEventListener("click", () => this.review.openNode(nodeId));
        group.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); this.review.openNode(nodeId); }
        });
        this.paint(nodeId);
      }
    }

    setNode(nodeId, status) {
      if (!nodeId || !status) return;
      this.statuses.set(nodeId, status);
      this.paint(nodeId);
    }

    paint(nodeId) {
      const group = this.nodes.get(nodeId);
      if (!group) return;
      const status = this.statuses.get(nodeId) || "pending";
      for (const name of ["pending", "running", "succeeded", "failed", "retrying"]) {
        group.classList.toggle("status-" + name, name === status);
      }
      group.setAttribute("data-status", status);
      const title = group.querySelector("title");
      if (title) title.textContent = nodeId + " (" + status + ")" + (group.dataset.cost ? " · " + group.dataset.cost : "");
    }

    // session summary: node statuses and the last agent turns with their commits (a long session is never read
    // whole: older turns come a page at a time, on demand)
    async loadSession() {
      let summary;
      try {
        summary = await api("/sessions/" + encodeURIComponent(this.id) + "?last=" + TURNS_PAGE);
      } catch (error) {
        return;
      }
      if (summary.pipeline) $("#title").textContent = summary.pipeline + " · session " + this.id;
      for (const node of summary.nodes || []) {
        const status = outcomeStatus(node.status);
        if (status && !this.statuses.has(node.id)) this.setNode(node.id, status);
      }
      const turns = summary.turns || [];
      if (this.streamAfter === null) this.streamAfter = summary.events_after || "";
      const latest = agentTurns(turns);
      if (!this.earlier.length) this.nextBefore = summary.next_before || null;
      else {
        const shown = new Set(this.earlier.map((turn) => turn.turn_id));
        latest.splice(0, latest.length, ...latest.filter((turn) => !shown.has(turn.turn_id)));
      }
      this.latest = latest;
      this.showTurns();
    }

    async loadEarlier() {
      if (!this.nextBefore) return;
      let page;
      try {
        const query = "?last=" + TURNS_PAGE + "&before=" + encodeURIComponent(this.nextBefore);
        page = await api("/sessions/" + encodeURIComponent(this.id) + query);
      } catch (error) {
        showMessage(error.message, true);
        return;
      }
      this.earlier = agentTurns(page.turns || []).concat(this.earlier);
      this.nextBefore = page.next_before || null;
      this.showTurns();
    }

    showTurns() {
      const list = $("#turns");
      const turns = this.earlier.concat(this.latest);
      const more = this.nextBefore
        ? [el("li", { class: "earlier" }, el("button", { type: "button", class: "secondary", id: "earlier-turns" },
          "Load earlier turns"))]
        : [];
      if (!turns.length && !more.length) {
        list.replaceChildren(el("li", { class: "empty" }, "No agent turn yet."));
        return;
      }
      list.replaceChildren(...more, ...turns.map((turn) => el("li", {},
        el("div", {}, el("strong", {}, turn.node_id || "?"), " · turn " + (turn.turn_number ?? "?")),
        el("div", { class: "meta" }, [turn.model, turn.provider].filter(Boolean).join(" · ")),
        turn.git_sha
          ? el("div", {}, el("code", {}, String(turn.git_sha).slice(0, 10)), " ",
            String(turn.commit_message || "").split("\n")[0])
          : el("div", { class: "meta" }, "no commit"),
        (turn.files_written || []).length ? el("div", { class: "files" }, turn.files_written.join(", ")) : null,
        el("button", { type: "button", class: "secondary small", "data-turn": turn.turn_id,
          "data-label": (turn.node_id || "?") + " · turn " + (turn.turn_number ?? "?") },
        turn.git_sha ? "Diff and messages" : "Messages"),
      )));
      const button = $("#earlier-turns");
      if (button) button.addEventListener("click", () => this.loadEarlier());
    }

    refreshSoon() {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = setTimeout(() => this.loadSession(), 300);
    }

    // human gates
    async loadQuestions() {
      let questions = [];
      try {
        questions = await api(this.base + "/questions");
      } catch (error) {
        questions = [];
      }
      const box = $("#questions");
      if (!questions.length) {
        box.replaceChildren(el("p", { class: "empty" }, "No question is waiting."));
        return 0;
      }
      box.replaceChildren(...questions.map((question) => this.questionView(question)));
      return questions.length;
    }

    questionView(question) {
      const options = question.options || [];
      const group = el("div", { class: "options", role: "group", "aria-label": "Answers" });
      for (const option of options) {
        const button = el("button", { type: "button", "data-answer": option.key }, option.label || option.key);
        button.addEventListener("click", () => this.answer(question, option.key, group));
        group.append(button);
      }
      if (!options.length) {
        const input = el("input", { type: "text", "aria-label": "Your answer" });
        const send = el("button", { type: "button" }, "Send");
        send.addEventListener("click", () => this.answer(question, input.value, group));
        group.append(input, send);
      }
      return el("div", { class: "question", "data-question": question.id },
        el("div", { class: "node-ref" }, "at " + (question.node_id || "?")),
        el("p", {}, question.text || ""), group);
    }

    async answer(question, reply, group) {
      for (const button of group.querySelectorAll("button")) button.disabled = true;
      try {
        await api(this.base + "/questions/" + encodeURIComponent(question.id) + "/answer",
          { method: "POST", body: JSON.stringify({ answer: reply }) });
        showMessage("", false);
      } catch (error) {
        showMessage(error.message, true);
      }
      await this.loadQuestions();
    }

    // A gate's question is registered just after its InterviewStarted event: look a few times.
    async pollQuestions() {
      const round = ++this.questionPoll;
      for (let tries = 0; tries < 40 && round === this.questionPoll; tries++) {
        if (await this.loadQuestions()) return;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }

    // The chat of an interactive node: GET {base}/chat answers {node_id, waiting, messages: [{role, text}]};
    // POST {base}/chat {"message"} sends the human's next message (/done, /approve, /reject end the node).
    // Hidden when the endpoint is absent or the session has no conversation.
    async loadChat() {
      let chat = null;
      try {
        chat = await api(this.base + "/chat");
      } catch (error) {
        chat = null;
      }
      const messages = (chat && Array.isArray(chat.messages) && chat.messages) || [];
      const waiting = Boolean(chat && chat.waiting);
      $("#chat").hidden = !messages.length && !waiting;
      if ($("#chat").hidden) return;
      $("#chat-heading").textContent = "Chat" + (chat.node_id ? " · " + chat.node_id : "");
      const list = $("#chat-messages");
      const shown = JSON.stringify(messages);
      if (list.dataset.shown !== shown) {
        list.dataset.shown = shown;
        list.replaceChildren(...messages.map((message) => el("li", { class: "from-" + String(message.role || "") },
          el("div", { class: "meta" }, message.role === "human" ? "you" : String(message.role || "")),
          el("div", { class: "text" }, String(message.text ?? "")))));
        list.scrollTop = list.scrollHeight;
      }
      $("#chat-compose").hidden = !waiting;
      $("#chat").dataset.waiting = String(waiting);
    }

    setUpChat() {
      const send = async (message) => {
        if (!message.trim()) return;
        for (const button of $("#chat-compose").querySelectorAll("button")) button.disabled = true;
        try {
          await api(this.base + "/chat", { method: "POST", body: JSON.stringify({ message }) });
          $("#chat-input").value = "";
          showMessage("", false);
        } catch (error) {
          showMessage(error.message, true);
        }
        for (const button of $("#chat-compose").querySelectorAll("button")) button.disabled = false;
        await this.loadChat();
      };
      $("#chat-send").addEventListener("click", () => send($("#chat-input").value));
      for (const button of document.querySelectorAll("#chat-compose [data-chat]")) {
        button.addEventListener("click", () => send(button.dataset.chat));
      }
    }

    // While the run goes on, look at its chat now and then: a conversation waits without an event.
    pollChat() {
      clearInterval(this.chatTimer);
      this.chatTimer = setInterval(() => {
        if (this.status === "running") this.loadChat();
        else clearInterval(this.chatTimer);
      }, 1500);
    }

    // the live event stream, from the first turn the page showed (a short session's from its start)
    follow() {
      const after = this.streamAfter ? "?after=" + encodeURIComponent(this.streamAfter) : "";
      const source = new EventSource(this.base + "/events" + after);
      this.source = source;
      for (const kind of KINDS) source.addEventListener(kind, (event) => this.onEvent(event));
      source.addEventListener("end", (event) => this.onEnd(event));
      source.addEventListener("open", () => showMessage("", false));
      source.addEventListener("error", () => {
        if (source.readyState === EventSource.CLOSED) showMessage("The event stream closed; reload to follow again.", true);
        else if (this.status === "running") showMessage("Reconnecting to the event stream…", false);
      });
    }

    onEvent(event) {
      let data;
      try { data = JSON.parse(event.data); } catch (_) { return; }
      if (!data || typeof data !== "object") return;
      data.kind = data.kind || event.type;
      if (data.kind === "AgentActivity") { this.live.add(data); return; } // live text: its own panel, not the log
      this.log(data);
      const status = nodeStatusOf(data);
      if (status) this.setNode(data.node_id, status);
      if (status === "running") this.live.start(data.node_id, data.branch);
      if (status === "succeeded" || status === "failed") this.live.finish(data.node_id, data.branch, status === "failed" ? "failed" : "done");
      if (data.kind === "InterviewStarted") this.pollQuestions();
      if (data.kind === "InterviewCompleted" || data.kind === "InterviewTimeout") this.loadQuestions();
      if (/^(HumanInteraction|InteractionMode|AgentTurn|StageStarted)/.test(data.kind)) this.loadChat();
      if (/^(AgentTurn|AgentCommitCreated|UntrackedWritesCommitted)/.test(data.kind)) this.refreshSoon();
      if (/^(AgentTurn|Stage|NodeExecution)/.test(data.kind)) this.costs.refreshSoon();
      if (/^Stage|^Pipeline|^NodeExecution|^CheckpointSaved$/.test(data.kind)) this.loadStatus().catch(() => {});
    }

    async onEnd(event) {
      this.source.close();
      let final = null;
      try { final = JSON.parse(event.data); } catch (_) { final = null; }
      this.log({ kind: "end", timestamp: null, detail: "the run ended: " + ((final && final.status) || "?") });
      await this.loadStatus().catch(() => {});
      await Promise.all([this.loadSession(), this.loadQuestions(), this.loadChat(), this.costs.load()]);
    }

    log(data) {
      const list = $("#events");
      const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      const tone = /Failed|Conflict|Timeout|PushFailed/.test(data.kind) ? "bad"
        : /Retrying|Fallback|Skipped|NotCommitted/.test(data.kind) ? "warn"
          : /Completed|Created|end/.test(data.kind) ? "ok" : "";
      const detail = data.detail !== undefined ? data.detail : describe(data);
      list.append(el("li", { class: tone, "data-kind": data.kind },
        el("span", { class: "time" }, clock(data.timestamp || data.created_at)),
        el("span", { class: "kind" }, data.kind + (data.branch ? " [" + data.branch + "]" : "")),
        el("span", { class: "detail" }, short(String(detail), 600))));
      if (atBottom) list.scrollTop = list.scrollHeight;
    }
  }

  // Graphviz draws the SVG from the pipeline, and labels are the pipeline author's: keep shapes and text only.
  function sanitize(root) {
    for (const bad of root.querySelectorAll("script, foreignObject, iframe, object, embed, style")) bad.remove();
    for (const element of [root, ...root.querySelectorAll("*")]) {
      for (const attribute of [...element.attributes]) {
        const name = attribute.name.toLowerCase();
        if (name.startsWith("on") || name === "href" || name === "xlink:href" || name === "style") {
          element.removeAttribute(attribute.name);
        }
      }
    }
  }

  if (document.body.dataset.page === "session") {
    const match = window.location.pathname.match(/^\/view\/([^/]+)$/);
    if (match) new SessionPage(decodeURIComponent(match[1])).start();
  }
})();
