#!/usr/bin/env bash
# (s) Containers that run: a container profile on a host without Docker fails verify (and apply's
# final verify) naming the missing engine and the fix, while the toolkit is installed,
# `nvidia-ctk runtime configure` merged into the admin's daemon.json (their keys survive) and the
# CDI spec was generated. With Docker present verify passes, the GPU run test says why it was
# skipped (no image locally, never pulled), and a named image that is not there fails with
# `docker pull` as the fix, without any pull.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-containers.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

rootfs_remove_docker "$ROOT"
mkdir -p "$ROOT/etc/docker"
printf '{\n    "data-root": "/srv/docker",\n    "log-driver": "journald"\n}\n' >"$ROOT/etc/docker/daemon.json"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on a host without Docker: its final verify fails" 1
check "apply names the missing engine" grep -q 'container.engine: expected the docker engine installed' <(gp_output)
for p in nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1; do
    assert_pkg "$p" 1.17.3-1
done
check "daemon.json: the nvidia runtime merged in, the admin's keys kept" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
ok = d.get("data-root") == "/srv/docker" and d.get("log-driver") == "journald" \
    and d["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
sys.exit(0 if ok else repr(d))' "$ROOT/etc/docker/daemon.json"
assert_file "CDI spec" "$ROOT/etc/cdi/nvidia.yaml"

gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify without Docker" 1
check "only container.engine fails, with what is missing and the fix" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
failed = [c for c in d["checks"] if not c["passed"] and not c["skipped"]]
c = failed[0] if len(failed) == 1 else {}
ok = c.get("id") == "container.engine" and c["found"].startswith("no dockerd: docker is not installed") \
    and "container.engine: docker.io" in c["fix"]
sys.exit(0 if ok else repr(failed))' "$GP_STDOUT"

rootfs_install_docker "$ROOT"
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
