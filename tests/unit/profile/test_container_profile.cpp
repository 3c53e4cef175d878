// container: engine, cdi and test_image (docs/containers.md), with the old keys unchanged.
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;

TEST(ContainerProfile, OldKeysKeepTheirMeaning) {
    const auto p = load("name: x\ncontainer: {toolkit: true, runtime: containerd}\n");
    EXPECT_EQ(p.container->runtime, "containerd");
    EXPECT_EQ(p.container->engine, "none");
    EXPECT_FALSE(p.container->cdi);
    EXPECT_FALSE(p.container->test_image.has_value());
}

TEST(ContainerProfile, DockerCeGetsDockersRepositoryUnlessTheProfileSetsOne) {
    const auto p = load("name: x\ncontainer: {toolkit: true, engine: docker-ce}\n");
    ASSERT_EQ(p.repositories.count("docker"), 1u);
    EXPECT_EQ(p.repositories.at("docker").url, "https://download.docker.com/linux/");
    EXPECT_EQ(p.repositories.at("docker").key_fingerprint, ""); // Docker's, from the matrix
    // Other engines add none.
    EXPECT_EQ(load("name: x\ncontainer: {toolkit: true, engine: docker.io}\n")
                  .repositories.count("docker"),
              0u);
    // A mirror with its pin wins.
    const auto m = load("name: x\ncontainer: {toolkit: true, engine: docker-ce}\nrepositories:\n"
                        "  docker:\n    url: https://mirror.example/docker/debian\n"
                        "    key_url: https://mirror.example/docker.gpg\n"
                        "    key_fingerprint: 9DC858229FC7DD38854AE2D88D81803C0EBFCD88\n");
    EXPECT_EQ(m.repositories.at("docker").url, "https://mirror.example/docker/debian");
    EXPECT_EQ(m.repositories.at("docker").key_fingerprint,
              "9DC858229FC7DD38854AE2D88D81803C0EBFCD88");
}

TEST(ContainerProfile, AnUnpinnedDockerMirrorIsRefusedAtItsKey) {
    const auto e = load_error("name: x\nrepositories:\n  docker:\n"
                              "    url: https://mirror.example/docker/debian\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(contains(e.message(), "'repositories.docker' has no key_url and key_fingerprint"))
        << e.what();
    EXPECT_TRUE(contains(e.message(), "add key_url and key_fingerprint")) << e.what();
    // Docker's own URL unpinned is Docker's key for the host's distro.
    EXPECT_EQ(load("name: x\nrepositories:\n  docker:\n"
                   "    url: https://download.docker.com/linux/debian\n")
                  .repositories.at("docker")
                  .key_url,
              "");
}

TEST(ContainerProfile, EngineCdiAndImage) {
    const auto p = load("name: x\ncontainer:\n  toolkit: true\n  engine: docker.io\n  cdi: true\n"
                        "  test_image: nvidia/cuda:12.4.1-base-ubuntu22.04\n");
    EXPECT_EQ(p.container->engine, "docker.io");
    EXPECT_EQ(p.container->runtime, "docker");
    EXPECT_TRUE(p.container->cdi);
    EXPECT_EQ(p.container->test_image, "nvidia/cuda:12.4.1-base-ubuntu22.04");
    // containerd's runtime follows from the engine when none is given.
    EXPECT_EQ(load("name: x\ncontainer: {toolkit: true, engine: containerd}\n").container->runtime,
              "containerd");
}

TEST(ContainerProfile, UnknownEngineNamesTheAllowedOnesAtItsPosition) {
    const auto e = load_error("name: x\ncontainer:\n  toolkit: true\n  engine: podman\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.col(), 11);
    EXPECT_TRUE(contains(e.message(), "'container.engine' must be one of none, docker.io, "
                                      "docker-ce, containerd; got 'podman'"))
        << e.what();
}

TEST(ContainerProfile, EngineAndRuntimeMustAgree) {
    const auto e =
        load_error("name: x\ncontainer: {toolkit: true, runtime: containerd, engine: docker.io}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "docker.io runs containers through docker, but "
                                      "container.runtime is containerd; set runtime: docker"))
        << e.what();
    const auto off = load_error("name: x\ncontainer: {engine: docker.io}\n");
    EXPECT_TRUE(contains(off.message(), "set container.toolkit: true")) << off.what();
}

TEST(ContainerProfile, TestImageMustBeAnImageReference) {
    for (const auto* bad : {"--privileged", "nvidia/cuda=12", "\"\"", "a/b#c"}) {
        const auto e = load_error(std::string("name: x\ncontainer: {toolkit: true, test_image: ") +
                                  bad + "}\n");
        EXPECT_EQ(e.line(), 2) << bad;
        EXPECT_TRUE(contains(e.message(), "must be an image reference")) << e.what();
    }
    // A space is refused before (as in every value that reaches argv), with its own message.
    const auto space = load_error("name: x\ncontainer: {toolkit: true, test_image: nvidia/cuda:12 "
                                  "-v /:/host}\n");
    EXPECT_TRUE(contains(space.message(), "'container.test_image' contains a space"))
        << space.what();
    const auto ok = load("name: x\ncontainer: {toolkit: true, test_image: "
                         "nvcr.io/nvidia/pytorch@sha256:0123abcd}\n");
    EXPECT_EQ(ok.container->test_image, "nvcr.io/nvidia/pytorch@sha256:0123abcd");
}

TEST(ContainerProfile, CdiIsABoolean) {
    const auto e = load_error("name: x\ncontainer: {toolkit: true, cdi: yes}\n");
    EXPECT_TRUE(contains(e.message(), "'container.cdi' must be true or false; got 'yes'"))
        << e.what();
}

} // namespace
} // namespace gpuprov
