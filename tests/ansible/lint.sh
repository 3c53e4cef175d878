#!/usr/bin/env bash
# The Ansible collection as Galaxy and a reviewer see it: ansible-lint with the production
# profile and --strict (a warning fails too), offline (no Galaxy, no schema refresh), on a copy
# of contrib/ansible/gpuprov laid out where Ansible finds collections; then ansible-doc, which
# fails when the module's DOCUMENTATION does not parse. Exit 77 (skipped) without ansible-lint.
# Usage: tests/ansible/lint.sh REPO_ROOT
set -euo pipefail
repo=${1:?usage: lint.sh REPO_ROOT}
command -v ansible-lint >/dev/null || { echo "SKIP: ansible-lint missing (apt-get install ansible-lint; tests/e2e/DEPS)"; exit 77; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
coll=$scratch/ansible_collections/gpuprov/gpuprov
mkdir -p "${coll%/*}"
cp -r "$repo/contrib/ansible/gpuprov" "$coll"
find "$coll" -name __pycache__ -prune -exec rm -rf {} +
# The path ends in ansible_collections: ansible-compat 3.0.1 (Debian 12) loads collections from
# the variable's parent directory, so given $scratch it would not resolve gpuprov.gpuprov.gpuprov
# and ansible-lint's fqcn rule would skip the module with a warning.
export ANSIBLE_COLLECTIONS_PATH=$scratch/ansible_collections
# Caches (ansible-compat's, Ansible's temp) in the scratch directory, never in the caller's home.
export HOME=$scratch XDG_CACHE_HOME=$scratch/cache ANSIBLE_LOCAL_TEMP=$scratch/tmp
cd "$coll"
ansible-lint --offline --profile production --strict --nocolor
ansible-doc gpuprov.gpuprov.gpuprov >/dev/null
echo "ansible-lint (production, strict) and ansible-doc: clean"
