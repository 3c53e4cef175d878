// `gpuprov k8s-manifests`: the documents read back as the Kubernetes objects they claim to be,
// the device plugin image is the matrix's pick for the profile's driver branch, and the runtime
// mode decides who needs runtimeClassName.
#include <algorithm>
#include <gpuprov/error.hpp>
#include <gpuprov/k8s_manifests.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gtest/gtest.h>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace gpuprov {
namespace {

const Matrix& m() {
    return Matrix::builtin();
}

Profile node(const std::string& driver_branch, const std::string& runtime_class,
             const std::string& runtime = "containerd") {
    return load_profile_text("name: gpu-node\ndriver: {branch: \"" + driver_branch +
                                 "\"}\ncontainer: {toolkit: true, runtime: " + runtime +
                                 "}\nkubernetes: {node: true, runtime_class: " + runtime_class +
                                 "}\n",
                             "node.yaml", m());
}

std::vector<YAML::Node> documents(const std::string& yaml) {
    std::vector<YAML::Node> docs;
    for (const auto& d : YAML::LoadAll(yaml)) {
        if (!d.IsNull()) {
            docs.push_back(d);
        }
    }
    return docs;
}

const YAML::Node* find_kind(const std::vector<YAML::Node>& docs, const std::string& kind) {
    for (const auto& d : docs) {
        if (d["kind"] && d["kind"].as<std::string>() == kind) {
            return &d;
        }
    }
    return nullptr;
}

TEST(K8sManifests, EveryDocumentIsAKubernetesObject) {
    const auto out = k8s_manifests(node("580", "default"), m());
    const auto docs = documents(out.yaml);
    ASSERT_EQ(docs.size(), 2U) << out.yaml;
    std::vector<std::string> kinds;
    for (const auto& d : docs) {
        ASSERT_TRUE(d.IsMap());
        EXPECT_FALSE(d["apiVersion"].as<std::string>().empty());
        EXPECT_FALSE(d["metadata"]["name"].as<std::string>().empty());
        kinds.push_back(d["kind"].as<std::string>());
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"RuntimeClass", "DaemonSet"}));
    const auto& rc = *find_kind(docs, "RuntimeClass");
    EXPECT_EQ(rc["apiVersion"].as<std::string>(), "node.k8s.io/v1");
    EXPECT_EQ(rc["metadata"]["name"].as<std::string>(), "nvidia");
    EXPECT_EQ(rc["handler"].as<std::string>(), "nvidia");
    EXPECT_EQ(rc["scheduling"]["nodeSelector"][kGpuNodeLabel].as<std::string>(), "true");
}

TEST(K8sManifests, TheDaemonSetIsTheDevicePluginPinnedFromTheMatrix) {
    const auto out = k8s_manifests(node("580", "default"), m());
    EXPECT_EQ(out.image, "nvcr.io/nvidia/k8s-device-plugin:v0.19.0");
    EXPECT_TRUE(out.validated);
    const auto docs = documents(out.yaml);
    const auto& ds = *find_kind(docs, "DaemonSet");
    EXPECT_EQ(ds["apiVersion"].as<std::string>(), "apps/v1");
    EXPECT_EQ(ds["metadata"]["namespace"].as<std::string>(), "kube-system");
    // The API server refuses a DaemonSet whose selector does not match its template's labels.
    const auto selector = ds["spec"]["selector"]["matchLabels"];
    const auto labels = ds["spec"]["template"]["metadata"]["labels"];
    ASSERT_TRUE(selector.IsMap());
    for (const auto& kv : selector) {
        EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(),
                  kv.second.as<std::string>());
    }
    const auto pod = ds["spec"]["template"]["spec"];
    EXPECT_FALSE(pod["runtimeClassName"]); // nvidia is the node's default runtime
    EXPECT_EQ(pod["priorityClassName"].as<std::string>(), "system-node-critical");
    EXPECT_EQ(pod["nodeSelector"][kGpuNodeLabel].as<std::string>(), "true");
    EXPECT_EQ(pod["tolerations"][0]["key"].as<std::string>(), "nvidia.com/gpu");
    ASSERT_EQ(pod["containers"].size(), 1U);
    const auto ctr = pod["containers"][0];
    EXPECT_EQ(ctr["image"].as<std::string>(), out.image);
    EXPECT_EQ(ctr["volumeMounts"][0]["mountPath"].as<std::string>(),
              "/var/lib/kubelet/device-plugins");
    EXPECT_EQ(ctr["volumeMounts"][0]["name"].as<std::string>(),
              pod["volumes"][0]["name"].as<std::string>());
    EXPECT_EQ(pod["volumes"][0]["hostPath"]["path"].as<std::string>(),
              "/var/lib/kubelet/device-plugins");
    // Kubernetes wants strings in env values and labels: "true", never a YAML boolean.
    EXPECT_EQ(ctr["env"][0]["value"].Tag(), "!");
    EXPECT_FALSE(ctr["securityContext"]["allowPrivilegeEscalation"].as<bool>());
}

TEST(K8sManifests, TheImageFollowsTheDriverBranch) {
    // R550 left the GPU Operator's component matrix after v24.6: its device plugin, v0.16.2.
    EXPECT_EQ(k8s_manifests(node("550", "default"), m()).image,
              "nvcr.io/nvidia/k8s-device-plugin:v0.16.2");
    // R610: GPU Operator 26.7.0's device plugin, which NVIDIA validated with that branch.
    const auto r610 = k8s_manifests(node("610", "default"), m());
    EXPECT_TRUE(r610.validated);
    EXPECT_EQ(r610.image, "nvcr.io/nvidia/k8s-device-plugin:v0.20.0");
    EXPECT_EQ(r610.yaml.find("NVIDIA validated no release"), std::string::npos) << r610.yaml;
    // R620: no GPU Operator release lists it yet: the newest plugin, said to be unvalidated.
    const auto unlisted = k8s_manifests(node("620", "default"), m());
    EXPECT_FALSE(unlisted.validated);
    EXPECT_EQ(unlisted.image, "nvcr.io/nvidia/k8s-device-plugin:v0.20.0");
    EXPECT_EQ(unlisted.image,
              "nvcr.io/nvidia/k8s-device-plugin:" + m().device_plugin_releases().front().version);
    EXPECT_NE(unlisted.yaml.find("NVIDIA validated no release with driver branch 620"),
              std::string::npos)
        << unlisted.yaml;
}

TEST(K8sManifests, RuntimeClassModeRunsThePluginThroughIt) {
    const auto out = k8s_manifests(node("580", "nvidia", "crio"), m());
    const auto docs = documents(out.yaml);
    const auto pod = (*find_kind(docs, "DaemonSet"))["spec"]["template"]["spec"];
    EXPECT_EQ(pod["runtimeClassName"].as<std::string>(), "nvidia");
    EXPECT_NE(out.yaml.find("# Nodes: crio with the nvidia runtime for pods with "
                            "runtimeClassName: nvidia"),
              std::string::npos)
        << out.yaml;
}

TEST(K8sManifests, AProfileThatMakesNoNodeIsRefusedWithTheFix) {
    const auto cv = load_profile("cv-train", m());
    try {
        (void)k8s_manifests(cv, m());
        ADD_FAILURE() << "cv-train made manifests";
    } catch (const ProfileError& e) {
        EXPECT_NE(std::string(e.what()).find("kubernetes: {node: true}"), std::string::npos)
            << e.what();
    }
    const auto off = load_profile_text("name: x\nkubernetes:\n  node: false\n", "x.yaml", m());
    try {
        (void)k8s_manifests(off, m());
        ADD_FAILURE() << "node: false made manifests";
    } catch (const ProfileError& e) {
        EXPECT_EQ(e.line(), 3) << e.what();
    }
}

} // namespace
} // namespace gpuprov
