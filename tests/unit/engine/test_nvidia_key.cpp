// NVIDIA's key per distro: the built-in profiles pin no key for NVIDIA's CUDA repository, so
// plan trusts the key NVIDIA signs the host's distro with (gpuprov's version matrix;
// nvidia-facts.md §2.4: D42D0685 for rhel8/9, 3bf863cc for Ubuntu/Debian), fetched from beside
// the repository as NVIDIA's own .repo file does (§2.1).
#include "host_builder.hpp"

using namespace gpuprov;
using namespace gpuprov::enginetest;

namespace {

const std::string kNvidiaRepos = "https://developer.download.nvidia.com/compute/cuda/repos/";
const std::string kRhelKey = "610C7B14E068A878070DA4E99CD0A493D42D0685";
const std::string kDebKey = "EB693B3035CD5710E231E123A4B469963BF863CC";

struct KeyCase {
    std::string tree;
    std::string slug;
    std::string file;
    std::string fingerprint;
};

const std::vector<KeyCase> kCases{
    {"rhel-9", "rhel9", "D42D0685.pub", kRhelKey},
    {"rocky-9", "rhel9", "D42D0685.pub", kRhelKey},
    {"alma-9", "rhel9", "D42D0685.pub", kRhelKey},
    {"ubuntu-20.04", "ubuntu2004", "3bf863cc.pub", kDebKey},
    {"ubuntu-22.04", "ubuntu2204", "3bf863cc.pub", kDebKey},
    {"debian-12", "debian12", "3bf863cc.pub", kDebKey},
};

const PlannedStep& step_of(const Plan& plan, const std::string& id) {
    for (const auto& s : plan.steps) {
        if (s.id == id) {
            return s;
        }
    }
    throw std::logic_error("no step " + id);
}

const ResolvedRepo& repo_of(const Plan& plan, const std::string& name) {
    for (const auto& r : plan.repositories) {
        if (r.name == name) {
            return r;
        }
    }
    throw std::logic_error("no repository " + name);
}

} // namespace

TEST(NvidiaKeyPerDistro, CvTrainPlansWithNvidiasKeyForTheHostsDistro) {
    for (const auto& c : kCases) {
        SCOPED_TRACE(c.tree);
        FakeSystem sys;
        sys.load_tree("hosts/" + c.tree);
        // An rpm database with nothing of NVIDIA's (where the tree has one).
        sys.on_command_prefix({"rpm", "-qa", "--qf"},
                              [](const Command&) { return CommandResult{}; });
        // NVIDIA's key URL answers with a key that is not NVIDIA's: it must be refused against
        // exactly the distro's fingerprint.
        const auto dir = kNvidiaRepos + c.slug + "/x86_64/";
        sys.on_url(dir + c.file, http_ok(read_fixture("engine/test-key.asc")));
        const auto profile = load_profile("cv-train", matrix());
        StepRunner run(sys, profile);
        ASSERT_EQ(run.facts().os.repo_slug, c.slug);
        const auto plan = run.plan();

        const auto& cuda = repo_of(plan, "cuda");
        EXPECT_EQ(cuda.url, dir);
        EXPECT_EQ(cuda.key_url, dir + c.file);
        EXPECT_EQ(cuda.key_fingerprint, c.fingerprint);
        EXPECT_EQ(cuda.key_source,
                  "NVIDIA's " + c.file + " (" + c.slug + "), from gpuprov's version matrix");
        // The container toolkit keeps the built-in pin.
        EXPECT_EQ(repo_of(plan, "container-toolkit").key_source, "pinned by the profile");

        const auto& step = step_of(plan, "cuda-repo");
        EXPECT_EQ(step.check.status, StepStatus::blocked);
        EXPECT_TRUE(contains(step.check.reason, "key at " + dir + c.file + " has fingerprint " +
                                                    fingerprint() + ", expected " + c.fingerprint +
                                                    " (NVIDIA's " + c.file))
            << step.check.reason;
        const auto& fetched = sys.urls_fetched;
        EXPECT_NE(std::find(fetched.begin(), fetched.end(), dir + c.file), fetched.end());
        // Never the other family's key.
        for (const auto& url : fetched) {
            EXPECT_FALSE(contains(url, c.file == "D42D0685.pub" ? "3bf863cc" : "D42D0685")) << url;
        }
    }
}
