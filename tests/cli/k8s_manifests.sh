#!/usr/bin/env bash
# ctest k8s_manifests: `gpuprov k8s-manifests` output read back as Kubernetes YAML (docs/kubernetes.md).
# python3-yaml (a test dependency, scripts/deps.sh) parses every document; each must be a
# Kubernetes object (apiVersion, kind, metadata.name), the kinds exactly RuntimeClass and
# DaemonSet, the DaemonSet's selector matching its template, the image the version matrix's pick
# for the profile's driver branch (computed here from src/data/nvidia-matrix.yaml). When kubectl
# is installed it also decodes the file offline (`label --local`); without it that part says it
# did not run. No API server is involved: nothing here applies the manifests to a cluster.
# Usage: k8s_manifests.sh BUILD_DIR/gpuprov REPO_ROOT
set -uo pipefail
bin=$1
repo=$2
. "$(dirname "$0")/lib.sh"

check_yaml() { # check_yaml FILE BRANCH RUNTIME_CLASS: the structure and the pinned image
    python3 - "$1" "$2" "$3" "$repo/src/data/nvidia-matrix.yaml" <<'PY'
import sys, yaml
path, branch, mode, matrix = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
for d in docs:
    assert isinstance(d, dict), d
    for key in ("apiVersion", "kind"):
        assert isinstance(d.get(key), str) and d[key], (key, d)
    assert isinstance(d.get("metadata", {}).get("name"), str) and d["metadata"]["name"], d
kinds = sorted(d["kind"] for d in docs)
assert kinds == ["DaemonSet", "RuntimeClass"], kinds
by = {d["kind"]: d for d in docs}
rc, ds = by["RuntimeClass"], by["DaemonSet"]
assert rc["apiVersion"] == "node.k8s.io/v1" and rc["handler"] == "nvidia", rc
assert ds["apiVersion"] == "apps/v1", ds["apiVersion"]
sel = ds["spec"]["selector"]["matchLabels"]
labels = ds["spec"]["template"]["metadata"]["labels"]
assert sel and all(labels.get(k) == v for k, v in sel.items()), (sel, labels)
pod = ds["spec"]["template"]["spec"]
assert all(isinstance(v, str) for v in pod["nodeSelector"].values()), pod["nodeSelector"]
(ctr,) = pod["containers"]
assert all(isinstance(e["value"], str) for e in ctr.get("env", [])), ctr["env"]
mounts = {m["name"] for m in ctr["volumeMounts"]}
assert mounts <= {v["name"] for v in pod["volumes"]}, (mounts, pod["volumes"])
assert ("runtimeClassName" in pod) == (mode == "nvidia"), pod.get("runtimeClassName")
dp = yaml.safe_load(open(matrix))["kubernetes"]["device_plugin"]
rel = next((r for r in dp["releases"] if branch in r["driver_branches"]), dp["releases"][0])
want = dp["image"] + ":" + rel["version"]
assert ctr["image"] == want, (ctr["image"], want)
PY
}

# The fixture node profile: cv-train's R580 with containerd and nvidia as its default runtime.
node=$repo/tests/fixtures/profiles/good/k8s-node.yaml
if "$bin" k8s-manifests "$node" >$scratch/node.yaml 2>$scratch/err; then ok; else bad "k8s-manifests k8s-node.yaml: $(cat $scratch/err)"; fi
check_yaml $scratch/node.yaml 580 default && ok || bad "k8s-node.yaml manifests are not the expected Kubernetes objects"

# RuntimeClass mode on CRI-O with R580: the plugin itself runs through the RuntimeClass.
cat >$scratch/rc.yaml <<'PROFILE'
name: rc-node
driver: {branch: "580"}
container: {toolkit: true, runtime: crio}
kubernetes: {node: true, runtime_class: nvidia}
PROFILE
mkdir -p $scratch/out
(cd $scratch/out && "$bin" k8s-manifests ../rc.yaml --output rc-manifests.yaml >$scratch/stdout 2>$scratch/err) &&
    ok || bad "k8s-manifests --output: $(cat $scratch/err)"
[[ ! -s $scratch/stdout && "$(stat -c %a $scratch/out/rc-manifests.yaml)" == 644 ]] && ok ||
    bad "--output: stdout not empty or mode not 0644"
check_yaml $scratch/out/rc-manifests.yaml 580 nvidia && ok || bad "rc-node manifests are not the expected Kubernetes objects"

# A profile that makes no Kubernetes node is refused with the fix, and prints nothing.
"$bin" k8s-manifests cv-train >$scratch/stdout 2>$scratch/err
rc=$?
[[ $rc == 1 && ! -s $scratch/stdout ]] && grep -q "kubernetes: {node: true}" $scratch/err && ok ||
    bad "k8s-manifests cv-train: exit $rc, $(cat $scratch/err)"

if command -v kubectl >/dev/null; then
    for f in $scratch/node.yaml $scratch/out/rc-manifests.yaml; do
        if kubectl label --local -f "$f" gpuprov-check=ok -o yaml >$scratch/kubectl 2>&1 &&
            [[ $(grep -c '^kind: \(RuntimeClass\|DaemonSet\)$' $scratch/kubectl) == 2 ]]; then
            ok
        else
            bad "kubectl cannot decode $(basename "$f"): $(head -c 400 $scratch/kubectl)"
        fi
    done
else
    echo "kubectl is not installed: the offline kubectl decoding was not run"
fi

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
