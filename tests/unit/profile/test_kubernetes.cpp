// The `kubernetes:` key: node mode and how pods get the nvidia runtime (docs/kubernetes.md).
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;

TEST(KubernetesProfile, NodeModeReadsBothRuntimeClassModes) {
    const auto file = load_profile(test::profile_fixture("good/k8s-node.yaml"), Matrix::builtin());
    ASSERT_TRUE(file.kubernetes);
    EXPECT_TRUE(file.kubernetes->node);
    EXPECT_TRUE(file.kubernetes->nvidia_default());
    EXPECT_EQ(file.container->runtime, "containerd");

    const auto rc = load("name: x\ncontainer: {toolkit: true, runtime: crio}\n"
                         "kubernetes: {node: true, runtime_class: nvidia}\n");
    EXPECT_EQ(rc.kubernetes->runtime_class, "nvidia");
    EXPECT_FALSE(rc.kubernetes->nvidia_default());
    // runtime_class defaults to making nvidia the default runtime, as the plugin's README assumes.
    const auto plain = load(
        "name: x\ncontainer: {toolkit: true, runtime: containerd}\nkubernetes: {node: true}\n");
    EXPECT_TRUE(plain.kubernetes->nvidia_default());
    // Without node mode nothing is asked of the runtime.
    const auto off = load("name: x\nkubernetes: {node: false, runtime_class: default}\n");
    EXPECT_FALSE(off.kubernetes->nvidia_default());
    EXPECT_FALSE(load("name: x\n").kubernetes);
}

TEST(KubernetesProfile, NodeWithoutTheToolkitIsRefusedWithTheFix) {
    auto e = load_error("name: x\nkubernetes: {node: true}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "container: {toolkit: true, runtime: containerd}"))
        << e.what();
    e = load_error("name: x\ncontainer: {toolkit: false, runtime: containerd}\n"
                   "kubernetes: {node: true}\n");
    EXPECT_TRUE(contains(e.message(), "needs the NVIDIA container toolkit")) << e.what();
}

TEST(KubernetesProfile, DockerIsNotAKubeletRuntime) {
    auto e = load_error("name: x\ncontainer:\n  toolkit: true\n  runtime: docker\n"
                        "kubernetes: {node: true}\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.col(), 12);
    EXPECT_TRUE(contains(e.message(), "containerd or crio")) << e.what();
    EXPECT_TRUE(contains(e.message(), "got docker")) << e.what();
    // docker is also the default runtime: the error then points at `container`.
    e = load_error("name: x\ncontainer: {toolkit: true}\nkubernetes: {node: true}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "Set container.runtime: containerd")) << e.what();
}

TEST(KubernetesProfile, BadValuesNameTheAllowedOnes) {
    auto e = load_error("name: x\ncontainer: {toolkit: true, runtime: containerd}\n"
                        "kubernetes: {node: true, runtime_class: runc}\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(contains(e.message(), "default")) << e.what();
    EXPECT_TRUE(contains(e.message(), "nvidia")) << e.what();
    e = load_error("name: x\nkubernetes: {node: yes please}\n");
    EXPECT_TRUE(contains(e.message(), "kubernetes.node")) << e.what();
    e = load_error("name: x\nkubernetes: {node: true, device_plugin: v0.19.0}\n");
    EXPECT_TRUE(contains(e.message(), "device_plugin")) << e.what();
    EXPECT_TRUE(contains(e.message(), "runtime_class")) << e.what();
}

} // namespace
} // namespace gpuprov
