// CXDB renderer for dev.orchestra.Checkpoint: where the run stood after a node (the node, what comes next,
// the run's status, each workspace repo's head), the turn `orchestra replay SESSION --checkpoint TURN` starts
// from. Checkpoints are stored as deltas of an earlier full one (`base_turn_id`): a delta shows what changed.
import { count, h, header, renderer, section, shortSha, text } from "./common.js";

// dev.orchestra.StageStatus. Outcomes inside the node_outcomes map come projected by tag (1 status, 2
// preferred_label, 5 notes, 6 failure_reason), the status as its number.
const STATUS = ["success", "partial_success", "retry", "fail", "skipped"];

function outcome(value) {
  const raw = value && typeof value === "object" ? value : {};
  const status = raw.status !== undefined ? raw.status : raw["1"];
  return {
    status: STATUS[Number(status)] !== undefined && /^\d+$/.test(String(status)) ? STATUS[Number(status)] : text(status),
    label: text(raw.preferred_label !== undefined ? raw.preferred_label : raw["2"]),
    reason: text(raw.failure_reason !== undefined ? raw.failure_reason : raw["6"]),
  };
}

function outcomes(checkpoint) {
  const entries = Object.entries(checkpoint.node_outcomes || {});
  if (!entries.length) return null;
  return section("Node outcomes", h("ul", null, entries.map(([node, value]) => {
    const { status, label, reason } = outcome(value);
    return h("li", null, h("code", null, node), ` ${status}`, label ? ` → ${label}` : "", reason ? `: ${reason}` : "");
  })));
}

function repos(checkpoint) {
  const snapshots = ((checkpoint.workspace_snapshot || {}).repo_snapshots || []).filter(Boolean);
  if (!snapshots.length) return null;
  return section("Workspace", h("ul", null, snapshots.map((repo) => h("li", null,
    `${text(repo.repo_name)} `, h("code", null, shortSha(repo.git_sha)), repo.branch ? ` on ${text(repo.branch)}` : ""))));
}

function view(checkpoint) {
  const completed = Array.isArray(checkpoint.completed_nodes) ? checkpoint.completed_nodes : [];
  const context = Object.keys(checkpoint.context_snapshot || {});
  return h("article", { className: "orchestra-turn orchestra-checkpoint" },
    header("Checkpoint", `after ${text(checkpoint.current_node) || "(start)"}`,
      checkpoint.next_node ? `next ${text(checkpoint.next_node)}` : "",
      checkpoint.run_status ? text(checkpoint.run_status) : "",
      checkpoint.node_visits !== undefined ? `${count(checkpoint.node_visits)} node visits` : "",
      checkpoint.base_turn_id ? `delta of turn ${text(checkpoint.base_turn_id)}` : ""),
    checkpoint.failure_reason ? h("p", null, `failure: ${text(checkpoint.failure_reason)}`) : null,
    completed.length
      ? section(checkpoint.base_turn_id ? "Nodes completed since that checkpoint" : "Completed nodes",
        h("p", null, completed.map(text).join(" → ")))
      : null,
    outcomes(checkpoint),
    repos(checkpoint),
    context.length ? section("Context keys", h("p", null, context.join(", "))) : null);
}

const built = renderer("CheckpointRenderer", view);
export default built.component;
export const render = built.render;
