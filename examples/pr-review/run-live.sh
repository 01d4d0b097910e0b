#!/bin/sh
# The adversarial PR review with real models (`make e2e-live`): setup.sh makes a fresh project, the run uses
# orchestra.live.yaml (Anthropic for the reviewers, the synthesizer and commit messages; OpenRouter for the
# critic) and answers.yaml for the tech lead's side, and the security reviewer runs through Claude Code when
# `claude` is installed. It prints the time and the tokens per model, and checks that REVIEW.md was written.
# Without the API keys it says what is missing and exits 0 (skipped).
#
#   run-live.sh [DIR]     (DIR: where to make the project; default: a new temporary directory)
set -eu

missing=""
[ -n "${ANTHROPIC_API_KEY:-}" ] || missing="$missing ANTHROPIC_API_KEY"
[ -n "${OPENROUTER_API_KEY:-}" ] || missing="$missing OPENROUTER_API_KEY"
if [ -n "$missing" ]; then
    echo "e2e-live: skipped: set$missing to run the PR review with real models" \
        "(ANTHROPIC_API_KEY: reviewers, synthesizer, commit messages; OPENROUTER_API_KEY: the critic)"
    exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
orchestra=${ORCHESTRA:-orchestra}
dir=${1:-$(mktemp -d)/pr-review}
"$here/setup.sh" "$dir"
cd "$dir"
cp orchestra.live.yaml orchestra.yaml
rm -f cassette.yaml
if command -v claude >/dev/null 2>&1; then
    echo "e2e-live: security_reviewer runs through Claude Code ($(command -v claude))"
    sed 's/agent="security-reviewer",/agent="security-reviewer", backend="claude-code",/' pipeline.dot > live.dot
else
    echo "e2e-live: claude is not installed: both reviewers run on the LangGraph backend"
    cp pipeline.dot live.dot
fi

started=$(date +%s)
status=0
"$orchestra" run live.dot --answers answers.yaml || status=$?
elapsed=$(( $(date +%s) - started ))
"$orchestra" status 1 --json > status.json || true

python3 - "$elapsed" <<'EOF'
import json, sys
from collections import defaultdict

document = json.load(open("status.json"))
tokens = defaultdict(lambda: [0, 0, 0])
for turn in document.get("turns", []):
    if turn.get("type") == "dev.orchestra.AgentTurn" and turn.get("tokens"):
        entry = tokens[(turn["provider"], turn["model"])]
        entry[0] += turn["tokens"].get("prompt_tokens") or 0
        entry[1] += turn["tokens"].get("completion_tokens") or 0
        entry[2] += 1
print(f"e2e-live: session 1 {document.get('status')} in {sys.argv[1]} s")
for (provider, model), (prompt, completion, turns) in sorted(tokens.items()):
    print(f"  {provider:<11} {model:<32} {turns:>3} agent turns  {prompt:>9,} prompt + {completion:>7,} completion tokens")
EOF

if [ "$status" -ne 0 ]; then
    echo "e2e-live: the run failed (exit $status); the project is in $dir" >&2
    exit "$status"
fi
branch=orchestra/pr_review/1
if ! git -C backend cat-file -e "$branch:REVIEW.md" 2>/dev/null; then
    echo "e2e-live: no REVIEW.md on $branch in $dir/backend" >&2
    exit 1
fi
for finding in injection XSS; do
    if git -C backend show "$branch:REVIEW.md" | grep -qi "$finding"; then
        echo "e2e-live: REVIEW.md names the $finding"
    else
        echo "e2e-live: note: REVIEW.md does not mention '$finding'"
    fi
done
echo "e2e-live: the project is in $dir (git -C $dir/backend show $branch:REVIEW.md)"
