// CXDB renderer for dev.orchestra.HumanInteraction: a human gate's question, its options and the answer, or a
// message of a conversation with an interactive node (the agent's reply it answers, and the human's message).
import { PRE, h, header, renderer, text } from "./common.js";

function view(turn) {
  const interactive = turn.mode === "interactive";
  const options = Array.isArray(turn.options) ? turn.options : [];
  return h("article", { className: "orchestra-turn orchestra-human-interaction" },
    header(interactive ? "Conversation" : "Human gate", text(turn.node_id), turn.interviewer ? text(turn.interviewer) : ""),
    h("div", null, h("strong", null, interactive ? "agent: " : "question: "), h("pre", { style: PRE }, text(turn.question))),
    options.length ? h("div", null, h("strong", null, "options: "), options.map(text).join(", ")) : null,
    h("div", null, h("strong", null, interactive ? "human: " : "answer: "),
      h("pre", { style: PRE }, turn.answer === undefined || turn.answer === null ? "(no answer)" : text(turn.answer))),
    turn.selected_option ? h("div", null, h("strong", null, "selected: "), text(turn.selected_option)) : null);
}

const built = renderer("HumanInteractionRenderer", view);
export default built.component;
export const render = built.render;
