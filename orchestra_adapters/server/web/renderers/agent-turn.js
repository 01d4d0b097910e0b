// CXDB renderer for dev.orchestra.AgentTurn: one turn of an agent's loop. What the agent said (its
// reasoning), the tools it called with their arguments and results, the files it wrote, and its commits, each
// with a link to the commit's diff on the orchestra serve that registered this renderer.
import { PRE, SERVER, count, h, header, renderer, section, shortSha, text } from "./common.js";

const LONG = 1500;  // characters: longer messages (prompts) start folded

function diffUrl(repo, sha) {
  return `${SERVER}/repos/${encodeURIComponent(repo)}/commits/${encodeURIComponent(sha)}`;
}

function messages(turn) {
  const said = (Array.isArray(turn.messages) ? turn.messages : []).filter(
    (message) => message && typeof message === "object" && message.role !== "tool",
  );
  if (!said.length) return h("p", null, "(no messages)");
  return said.map((message) => {
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map((call) => call && call.name) : [];
    const role = text(message.role) || "?";
    const content = text(message.content);
    const className = `orchestra-message orchestra-role-${role}`;
    if (content.length > LONG) {  // a composed prompt: folded, its first line shown
      return h("details", { className },
        h("summary", null, `${role}: ${content.split("\n")[0].slice(0, 120)} … (${count(content.length)} characters)`),
        h("pre", { style: PRE }, content));
    }
    return h("div", { className },
      h("strong", null, `${role}: `),
      calls.length ? h("em", null, `[calls ${calls.filter(Boolean).join(", ")}] `) : null,
      h("pre", { style: PRE }, content));
  });
}

function toolCalls(turn) {
  const calls = Array.isArray(turn.tool_calls) ? turn.tool_calls : [];
  if (!calls.length) return null;
  return section(`Tool calls (${calls.length})`, calls.map((call) =>
    h("details", { className: "orchestra-tool-call" },
      h("summary", null, text(call.name), call.error ? " (failed)" : ""),
      arguments_(call.args),
      call.error ? [h("div", null, "error"), h("pre", { style: PRE }, text(call.error))]
        : [h("div", null, "result"), h("pre", { style: PRE }, text(call.result))])));
}

function arguments_(args) {  // each argument on its own, a string as the text it is
  const entries = args && typeof args === "object" && !Array.isArray(args) ? Object.entries(args) : [];
  if (!entries.length) return h("div", null, "no arguments");
  return entries.map(([name, value]) => [h("div", null, `${name}:`), h("pre", { style: PRE }, text(value))]);
}

function commits(turn) {
  const listed = Array.isArray(turn.commits) ? turn.commits.filter((commit) => commit && commit.sha) : [];
  if (!listed.length && turn.git_sha) listed.push({ sha: turn.git_sha, message: turn.commit_message || "" });
  if (!listed.length) return null;
  return section("Commits", h("ul", null, listed.map((commit) => h("li", null,
    commit.repo ? `${commit.repo} ` : "",
    h("code", null, shortSha(commit.sha)), " ",
    text(commit.message).split("\n")[0], " ",
    commit.repo ? h("a", { href: diffUrl(commit.repo, commit.sha), target: "_blank", rel: "noopener" }, "diff") : null,
    commit.branch ? ` (${commit.branch})` : ""))));
}

function files(turn) {
  const written = Array.isArray(turn.files_written) ? turn.files_written : [];
  return written.length ? section("Files written", h("ul", null, written.map((file) => h("li", null, h("code", null, text(file))))))
    : null;
}

function view(turn) {
  const usage = turn.token_usage || {};
  const seconds = Number(turn.duration_s);
  return h("article", { className: "orchestra-turn orchestra-agent-turn" },
    header("Agent turn", `${text(turn.node_id)} #${text(turn.turn_number)}`,
      turn.model ? `${text(turn.model)} (${text(turn.provider)})` : "",
      `${count(usage.prompt_tokens)}+${count(usage.completion_tokens)} tokens`,
      Number.isFinite(seconds) ? `${seconds.toFixed(2)} s` : "",
      turn.untracked ? "untracked changes committed" : ""),
    section("Reasoning", messages(turn)),
    toolCalls(turn),
    files(turn),
    commits(turn),
    turn.agent_state_ref ? h("p", null, h("small", null, `agent state ${text(turn.agent_state_ref)}`)) : null);
}

const built = renderer("AgentTurnRenderer", view);
export default built.component;
export const render = built.render;
