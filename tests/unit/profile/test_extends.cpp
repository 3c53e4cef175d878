#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::profile_fixture;

TEST(Extends, ChildOfBuiltinMergesMapsAndReplacesLists) {
    const auto file = profile_fixture("good/extends-cv-train.yaml");
    const auto p = load_profile(file, Matrix::builtin());
    EXPECT_EQ(p.name, "cv-train-small");
    EXPECT_EQ(p.extends_chain, (std::vector<std::string>{"builtin:cv-train.yaml"}));
    // Lists replace: only the child's OS.
    EXPECT_EQ(p.host.os, (std::vector<std::string>{"ubuntu-22.04"}));
    // Maps merge: count from the child, the rest of host.gpus and host from cv-train.
    ASSERT_TRUE(p.host.gpus.has_value());
    EXPECT_EQ(p.host.gpus->count, 2);
    EXPECT_EQ(p.host.gpus->model, "A100");
    EXPECT_EQ(p.host.gpus->interconnect, "nvlink");
    EXPECT_EQ(p.host.memory_gib, 256);
    EXPECT_EQ(p.cuda->version, "13.0");
    EXPECT_EQ(p.driver->branch, "580");
    // null removes an inherited section.
    EXPECT_FALSE(p.cudnn.has_value());
    EXPECT_EQ(p.skip_steps, (std::vector<std::string>{"monitoring", "tuning"}));
    EXPECT_EQ(p.repositories.size(), 2U);
}

TEST(Extends, PositionsNameTheFileEachValueCameFrom) {
    const auto file = profile_fixture("good/extends-cv-train.yaml");
    const auto p = load_profile(file, Matrix::builtin());
    EXPECT_EQ(p.pos("cuda.version").file, "builtin:cv-train.yaml");
    EXPECT_EQ(p.pos("cuda.version").line, 40);
    EXPECT_EQ(p.pos("host.gpus.count").file, file);
    EXPECT_EQ(p.pos("host.gpus.count").line, 6);
    EXPECT_EQ(p.pos("host.gpus.model").file, "builtin:cv-train.yaml");
    EXPECT_EQ(p.pos("name").file, file);
    EXPECT_EQ(p.positions.count("extends"), 0U);
}

TEST(Extends, RelativePathIsRelativeToTheExtendingFile) {
    const auto p = load_profile(profile_fixture("good/extends-local.yaml"), Matrix::builtin());
    EXPECT_EQ(p.name, "extends-local");
    ASSERT_EQ(p.extends_chain.size(), 1U);
    EXPECT_TRUE(contains(p.extends_chain[0], "good/base-local.yaml")) << p.extends_chain[0];
    EXPECT_EQ(p.driver->branch, "570");
    EXPECT_EQ(p.driver->flavor, "open");
    EXPECT_EQ(p.cuda->version, "12.8");
    EXPECT_EQ(p.host.gpus->model, "L40S");
    EXPECT_EQ(p.host.gpus->count, 4);
    EXPECT_TRUE(p.nccl);
}

TEST(Extends, ChecksRunOnTheMergedResult) {
    // Each file alone is fine; together branch 535 (child) meets CUDA 13.0 (cv-train), below
    // even minor version compatibility's 580.
    const auto e = test::load_error("name: older-driver\nextends: cv-train\ndriver: {branch: "
                                    "\"535\"}\n");
    EXPECT_EQ(e.file(), "t.yaml");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.col(), 18);
    EXPECT_TRUE(contains(e.message(), "needs branch 580")) << e.what();
}

TEST(Extends, ErrorInAnInheritedValueNamesTheParentFile) {
    // The child's GPUs are V100s, which cv-train's open modules do not drive: the error cites
    // the driver line in cv-train, where the fix (flavor: proprietary) would go.
    const auto e = test::load_error("name: volta\nextends: cv-train\nhost: {gpus: {model: V100, "
                                    "memory_gib: 32}}\n");
    EXPECT_EQ(e.file(), "builtin:cv-train.yaml");
    EXPECT_EQ(e.line(), 39);
    EXPECT_TRUE(contains(e.message(), "driver.flavor to proprietary")) << e.what();
}

TEST(Extends, CycleIsRefusedWithTheChain) {
    const auto a = profile_fixture("bad/cycle-a.yaml");
    try {
        (void)load_profile(a, Matrix::builtin());
        FAIL() << "expected ProfileError";
    } catch (const ProfileError& e) {
        EXPECT_TRUE(contains(e.file(), "cycle-b.yaml")) << e.what();
        EXPECT_EQ(e.line(), 2);
        EXPECT_EQ(e.col(), 10);
        EXPECT_TRUE(contains(e.message(), "extends cycle: ")) << e.what();
        EXPECT_TRUE(contains(e.message(), "cycle-a.yaml -> ")) << e.what();
        EXPECT_TRUE(contains(e.message(), "cycle-b.yaml -> ")) << e.what();
    }
}

TEST(Extends, SelfExtensionIsACycle) {
    const auto e = test::load_error("name: self\nextends: t.yaml\n", "/nonexistent-dir/t.yaml");
    EXPECT_TRUE(contains(e.message(), "neither a built-in profile")) << e.what();
    const auto self = profile_fixture("bad/cycle-a.yaml");
    const auto e2 = test::load_error("name: self\nextends: " + self + "\n", self);
    EXPECT_TRUE(contains(e2.message(), "extends cycle")) << e2.what();
}

TEST(Extends, BuiltinCannotExtendAFile) {
    const auto e = test::load_error("name: b\nextends: some/file.yaml\n", "builtin:b.yaml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "can only extend another built-in")) << e.what();
}

TEST(Extends, MissingParentFileIsReported) {
    const auto e = test::load_error("name: orphan\nextends: no-such-parent.yaml\n",
                                    profile_fixture("good/orphan.yaml"));
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.col(), 10);
    EXPECT_TRUE(contains(e.message(), "no-such-parent.yaml")) << e.what();
}

} // namespace
} // namespace gpuprov

namespace gpuprov {
namespace {

// apply installs a profile that extends another file as one document (the resume unit must not
// depend on the original paths): it must load as the very same profile, from anywhere.
TEST(Extends, ResolvedTextLoadsAsTheSameProfileWithoutItsParents) {
    for (const auto* name : {"good/extends-local.yaml", "good/extends-cv-train.yaml"}) {
        const auto file = test::profile_fixture(name);
        const auto original = load_profile(file, Matrix::builtin());
        const auto text = resolved_profile_yaml(file);
        EXPECT_FALSE(test::contains("\n" + text, "\nextends:")) << text;
        const auto copy =
            load_profile_text(text, "/nonexistent/etc/gpuprov/copy.yaml", Matrix::builtin());
        EXPECT_TRUE(copy.extends_chain.empty());
        EXPECT_EQ(copy.name, original.name);
        EXPECT_EQ(copy.driver->branch, original.driver->branch);
        EXPECT_EQ(copy.driver->flavor, original.driver->flavor);
        EXPECT_EQ(copy.cuda->version, original.cuda->version);
        EXPECT_EQ(copy.cudnn.has_value(), original.cudnn.has_value());
        EXPECT_EQ(copy.nccl, original.nccl);
        EXPECT_EQ(copy.host.os, original.host.os);
        EXPECT_EQ(copy.host.gpus->count, original.host.gpus->count);
        EXPECT_EQ(copy.host.gpus->model, original.host.gpus->model);
        EXPECT_EQ(copy.skip_steps, original.skip_steps);
        EXPECT_EQ(copy.repositories.size(), original.repositories.size());
        for (const auto& [repo, spec] : original.repositories) {
            ASSERT_EQ(copy.repositories.count(repo), 1U) << repo;
            EXPECT_EQ(copy.repositories.at(repo).url, spec.url);
            EXPECT_EQ(copy.repositories.at(repo).key_fingerprint, spec.key_fingerprint);
        }
    }
}

} // namespace
} // namespace gpuprov
