#!/bin/sh
# Makes a ready project for the adversarial PR review in DIR:
#   DIR/backend, DIR/frontend   two git repositories whose branch feature/customer-search (checked out) is
#                               a pull request into main, with a real security flaw (SQL injection, stored
#                               XSS) and an architectural smell (the search bypasses the repository)
#   DIR/orchestra.yaml          the offline configuration (orchestra.live.yaml: real providers)
#   DIR/pipeline.dot, prompts/  the pipeline and its agents' prompt layers
#   DIR/cassette.yaml           what the scripted models answer offline
#   DIR/answers.yaml            the tech lead's replies to the synthesizer
#   DIR/pr_diff.py              the pipeline's first step: the pull request's diff for the reviewers
# Then: cd DIR && orchestra run pipeline.dot --answers answers.yaml
#
# The repositories' commits have fixed authors and dates, and git reads no global or system configuration
# while they are made, so every setup gives the same commit SHAs.
set -eu

usage="usage: setup.sh DIR  (DIR must not exist, or be empty)"
if [ "$#" -ne 1 ] || [ -z "$1" ]; then
    echo "$usage" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
if [ -e "$dir" ] && { [ ! -d "$dir" ] || [ -n "$(ls -A "$dir")" ]; }; then
    echo "setup.sh: $dir exists and is not an empty directory; $usage" >&2
    exit 2
fi
command -v git >/dev/null 2>&1 || { echo "setup.sh: git is not installed" >&2; exit 2; }
mkdir -p "$dir"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Sam Developer" GIT_AUTHOR_EMAIL="sam@example.com"
export GIT_COMMITTER_NAME="Sam Developer" GIT_COMMITTER_EMAIL="sam@example.com"
export TZ=UTC LC_ALL=C

commit_all() {  # REPO DATE MESSAGE
    git -C "$1" add -A
    GIT_AUTHOR_DATE="$2" GIT_COMMITTER_DATE="$2" git -C "$1" commit -q -m "$3"
}

copy_tree() {  # FROM TO: the files, without Python's caches
    mkdir -p "$2"
    cp -R "$1/." "$2/"
    find "$2" -name __pycache__ -type d -prune -exec rm -rf {} +
}

make_repo() {  # NAME BASE_MESSAGE PR_MESSAGE
    repo="$dir/$1"
    copy_tree "$here/sample/$1/base" "$repo"
    git -C "$repo" init -q -b main
    commit_all "$repo" "2025-01-06T09:00:00+00:00" "$2"
    git -C "$repo" checkout -q -b feature/customer-search
    copy_tree "$here/sample/$1/pr" "$repo"
    commit_all "$repo" "2025-01-08T14:30:00+00:00" "$3"
}

make_repo backend "Customer service: repository, handlers and tests" \
    "Add customer search endpoint"
make_repo frontend "Customer pages: API client and customer card" \
    "Add customer search box"

for file in pipeline.dot orchestra.yaml orchestra.live.yaml cassette.yaml answers.yaml pr_diff.py; do
    cp "$here/$file" "$dir/$file"
done
copy_tree "$here/prompts" "$dir/prompts"

echo "ready: $dir (backend and frontend on feature/customer-search, the pull request into main)"
echo "next:  cd $dir && orchestra run pipeline.dot --answers answers.yaml"
