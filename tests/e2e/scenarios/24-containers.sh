#!/usr/bin/env bash
# (s) Containers that run: a container profile (engine: none) on a host without Docker is
# blocked at plan with the fix, and apply installs nothing and leaves the admin's daemon.json
# alone; verify fails naming the missing engine. With Docker present and running, the plan shows
# the `systemctl restart docker` apply runs, saying it stops every running container (no
# live-restore); apply runs exactly that restart, `nvidia-ctk runtime configure` merges into the
# admin's daemon.json (their keys survive) and the CDI spec is generated. verify passes, the GPU
# run test says why it was skipped (no image locally, never pulled), and a named image that is
# not there fails with `docker pull` as the fix, without any pull.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-containers.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

rootfs_remove_docker "$ROOT"
mkdir -p "$ROOT/etc/docker"
ADMIN_DAEMON='{
    "data-root": "/srv/docker",
    "log-driver": "journald"
}'
printf '%s\n' "$ADMIN_DAEMON" >"$ROOT/etc/docker/daemon.json"
SYSTEMCTL_LOG=$ROOT/var/log/e2e-systemctl.log

# --- no Docker, and the profile does not ask gpuprov to install one: blocked at plan -----------
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan on a host without Docker: blocked" 1
check "the container-toolkit step is blocked with the fix" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = {s["id"]: s for s in d["steps"]}["container-toolkit"]
r = s["reason"]
ok = s["status"] == "blocked" and "docker is not installed on this host" in r \
    and "Install Docker first" in r and "container.engine: docker.io" in r and "docker-ce" in r
sys.exit(0 if ok else repr(s))' "$GP_STDOUT"
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on a host without Docker: refused before any change" 1
check "apply says the step is blocked" grep -q "step 'container-toolkit' is blocked" <(gp_output)
for p in nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1; do
    assert_no_pkg "$p"
done
assert_eq "daemon.json untouched" "$ADMIN_DAEMON" "$(cat "$ROOT/etc/docker/daemon.json")"
assert_no_file "no CDI spec" "$ROOT/etc/cdi/nvidia.yaml"

gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify without Docker" 1
check "container.engine fails with what is missing and the fix" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = {c["id"]: c for c in d["checks"]}.get("container.engine", {})
ok = not c.get("passed", True) and c["found"].startswith("no dockerd: docker is not installed") \
    and "container.engine: docker.io" in c["fix"]
sys.exit(0 if ok else repr(c))' "$GP_STDOUT"

# --- Docker installed and running: the restart is in the plan, with what it does --------------
rootfs_install_docker "$ROOT"
mkdir -p "$ROOT/run/e2e-systemd"
touch "$ROOT/run/e2e-systemd/docker.service.active"
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan with a running Docker" 0
check "the plan shows the runtime configure, then the restart that stops every container" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = {s["id"]: s for s in d["steps"]}["container-toolkit"]
cmds = [c for c in s["changes"] if c["kind"] == "command"]
names = [c["target"] for c in cmds]
ok = s["status"] == "pending" and names[-2:] == ["nvidia-ctk runtime configure --runtime=docker", "systemctl restart docker"] \
    and "STOPS EVERY RUNNING CONTAINER" in cmds[-1]["detail"] and "live-restore" in cmds[-1]["detail"]
sys.exit(0 if ok else repr(s))' "$GP_STDOUT"
restarts_before=$(grep -c '^systemctl restart docker$' "$SYSTEMCTL_LOG" 2>/dev/null || true)
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with Docker running" 0
assert_eq "apply restarted docker once, as the plan said" 1 \
    "$(( $(grep -c '^systemctl restart docker$' "$SYSTEMCTL_LOG" || true) - restarts_before ))"
for p in nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1; do
    assert_pkg "$p" 1.17.3-1
done
check "daemon.json: the nvidia runtime merged in, the admin's keys kept" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
ok = d.get("data-root") == "/srv/docker" and d.get("log-driver") == "journald" \
    and d["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
sys.exit(0 if ok else repr(d))' "$ROOT/etc/docker/daemon.json"
assert_file "CDI spec" "$ROOT/etc/cdi/nvidia.yaml"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan after apply: nothing to do, no restart pending" 0

gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify with Docker" 0
check "the GPU run test says why it was skipped" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = {c["id"]: c for c in d["checks"]}
ok = c["container.engine"]["found"] == "Docker version 20.10.24+dfsg1, build 297e128" \
    and c["container.cdi"]["passed"] \
    and c["container.gpu-run"]["found"].startswith("skipped: no container.test_image") \
    and c["container.gpu-run"]["skipped"] and not c["container.gpu-run"]["passed"] \
    and d["passed"] and d["summary"]["skipped"] == 1
sys.exit(0 if ok else repr(c))' "$GP_STDOUT"

IMAGE=nvidia/cuda:12.4.1-base-ubuntu22.04
sed -i "s|^container: .*|container: {toolkit: true, runtime: docker, cdi: true, test_image: \"$IMAGE\"}|" "$ROOT$PROFILE_IN_ROOT"
gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify with a named image that is not present" 1
check "container.gpu-run fails with docker pull as the fix" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = {c["id"]: c for c in d["checks"]}["container.gpu-run"]
ok = not c["passed"] and c["fix"] == "docker pull " + sys.argv[2] + " (verify never pulls)"
sys.exit(0 if ok else repr(c))' "$GP_STDOUT" "$IMAGE"
check "verify never pulled" test ! -e "$ROOT/var/log/e2e-docker-pulls.log"
scenario_end
