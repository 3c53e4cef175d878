// The dcgm step (monitoring.dcgm, docs/dcgm.md): the CUDA major of DCGM's packages, the one
// version all four are pinned to from the CUDA index, the host engine enabled and running, the
// verify checks, and dcgm-exporter only where the profile asks and a binary is there.
#include "../../../src/steps/dcgm_pick.hpp"
#include "host_builder.hpp"

#include <gpuprov/error.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using namespace gpuprov::steps;
using Strings = std::vector<std::string>;

namespace {

/// DCGM 4 as NVIDIA's index lists it: epoch 1, the -cuda<N> and -proprietary packages Depending
/// on the core's exact version (src/data/nvidia-matrix.yaml, packages.*.dcgm). 4.6.1 has no
/// -proprietary-cuda12 here, so the newest version all four share is 4.4.2.
std::string dcgm_stanzas() {
    std::string out;
    const auto add = [&](const std::string& name, const std::string& version,
                         const std::string& depends) {
        out += fmt::format("\nPackage: {}\nArchitecture: amd64\nVersion: {}\n{}Filename: ./{}_{}_"
                           "amd64.deb\nSize: 4096\nSHA256: {}\nDescription: DCGM\n",
                           name, version, depends.empty() ? "" : "Depends: " + depends + "\n", name,
                           version.substr(2), std::string(64, 'a'));
    };
    for (const std::string v : {"1:4.4.2-1", "1:4.6.1-1"}) {
        const auto core = "datacenter-gpu-manager-4-core (= " + v + ")";
        add("datacenter-gpu-manager-4-core", v, "");
        add("datacenter-gpu-manager-4-cuda12", v, core);
        add("datacenter-gpu-manager-4-cuda13", v, core);
        add("datacenter-gpu-manager-4-proprietary", v, core);
        add("datacenter-gpu-manager-4-proprietary-cuda13", v,
            "datacenter-gpu-manager-4-proprietary (= " + v + ")");
    }
    add("datacenter-gpu-manager-4-proprietary-cuda12", "1:4.4.2-1",
        "datacenter-gpu-manager-4-proprietary (= 1:4.4.2-1)");
    return out;
}

/// The engine tests' repositories, in memory, the CUDA one with DCGM added.
class DcgmRepos final : public RepoProvider {
public:
    DcgmRepos(const HostFacts& facts, const Profile& profile) {
        const auto key = parse_openpgp_key(read_fixture("engine/test-key.asc"));
        for (const std::string name : {"cuda", "container-toolkit"}) {
            RepoState s;
            s.repo = resolve_repo(profile.repositories.at(name), facts.os.repo_slug,
                                  facts.repo_arch, facts.pkg_arch, package_format(facts.os.family));
            auto text = read_fixture("engine/" + name + "/Packages");
            if (name == "cuda") {
                text += dcgm_stanzas();
            }
            s.index = PackageIndex(parse_packages_file(text));
            s.key = key.key;
            m_repos.emplace(name, std::move(s));
        }
    }
    [[nodiscard]] const RepoState& repo(const std::string& name) const override {
        return m_repos.at(name);
    }

private:
    std::map<std::string, RepoState> m_repos;
};

const Strings kCuda12{"datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda12",
                      "datacenter-gpu-manager-4-proprietary",
                      "datacenter-gpu-manager-4-proprietary-cuda12"};

struct DcgmStep : ::testing::Test {
    TestHost host;
    Profile profile = load_test_profile();
    HostFacts facts = host.facts();
    DcgmRepos repos{facts, profile};
    std::vector<std::unique_ptr<Step>> steps = make_steps();

    DcgmStep() {
        profile.monitoring = MonitoringSpec{};
        profile.monitoring->dcgm = true;
    }
    Step& step() {
        for (auto& s : steps) {
            if (s->id() == "dcgm") {
                return *s;
            }
        }
        throw std::logic_error("no dcgm step");
    }
    CheckResult check() {
        const StepContext ctx{profile, facts, matrix(), repos};
        return step().check(ctx, host.sys);
    }
    std::vector<CheckOutcome> verify() {
        const StepContext ctx{profile, facts, matrix(), repos};
        return step().verify(ctx, host.sys);
    }
    StepStatus configure(const CheckResult& r) {
        const StepContext ctx{profile, facts, matrix(), repos};
        return step().apply(ctx, host.sys, r, ApplyPhase::configure);
    }
    void install(const std::string& version) {
        for (const auto& p : kCuda12) {
            host.set_package(p, version);
        }
        host.sys.add_file("/lib/systemd/system/nvidia-dcgm.service",
                          "[Install]\nWantedBy=multi-user.target\n");
        host.sys.add_file("/usr/bin/dcgmi", "");
    }
};

} // namespace

// ---- the CUDA major and the version ----

TEST(DcgmPick, CudaMajorFollowsTheDriverBranch) {
    TestHost host;
    auto profile = load_test_profile(); // branch 550, CUDA 12.4
    const auto facts = host.facts();
    auto m = dcgm_cuda_major(profile, facts, matrix());
    EXPECT_EQ(m.major, 12);
    EXPECT_EQ(m.because, "driver branch 550 carries CUDA 12.4");
    profile.driver->branch = "580";
    profile.cuda->version = "12.8"; // the toolkit does not decide: the driver's CUDA does
    EXPECT_EQ(dcgm_cuda_major(profile, facts, matrix()).major, 13);
    profile.driver.reset();
    m = dcgm_cuda_major(profile, facts, matrix());
    EXPECT_EQ(m.major, 12);
    EXPECT_EQ(m.because, "the profile's CUDA 12.8");
    profile.cuda.reset();
    m = dcgm_cuda_major(profile, facts, matrix());
    EXPECT_EQ(m.major, 0);
    EXPECT_TRUE(contains(m.problem, "needs a driver or cuda section")) << m.problem;
}

TEST(DcgmPick, VoltaOnDriver580GetsTheCuda12Build) {
    // NVIDIA: Kepler, Maxwell, Volta and Pascal on driver 580 install DCGM's CUDA 12 packages.
    TestHost host(HostOptions{.gpus = 2, .device_id = 0x1db4, .nvswitches = 0});
    auto profile = load_test_profile();
    profile.driver->branch = "580";
    const auto m = dcgm_cuda_major(profile, host.facts(), matrix());
    EXPECT_EQ(m.major, 12);
    EXPECT_TRUE(contains(m.because, "V100 PCIe 16GB GPU (volta) is targeted by CUDA 12.9 at most"))
        << m.because;
}

TEST(DcgmPick, NewestVersionEveryPackageShares) {
    const PackageIndex index(parse_packages_file(dcgm_stanzas()));
    const auto names = dcgm_packages(matrix().package_names("debian")->dcgm, 12);
    EXPECT_EQ(names, kCuda12);
    EXPECT_EQ(pick_dcgm_version(index, names).version, "1:4.4.2-1");
    EXPECT_EQ(
        pick_dcgm_version(index, dcgm_packages(matrix().package_names("debian")->dcgm, 13)).version,
        "1:4.6.1-1");
    const auto none =
        pick_dcgm_version(index, dcgm_packages(matrix().package_names("rhel")->dcgm, 11));
    EXPECT_TRUE(none.version.empty());
    EXPECT_EQ(none.problem, "the CUDA repository has no datacenter-gpu-manager-4-cuda11, "
                            "datacenter-gpu-manager-4-proprietary-cuda11");
}

// ---- plan, apply, verify ----

TEST_F(DcgmStep, SkippedUnlessTheProfileAsks) {
    profile.monitoring->dcgm = false;
    const auto r = check();
    EXPECT_EQ(r.status, StepStatus::skipped);
    EXPECT_EQ(r.reason, "profile does not set monitoring.dcgm");
    EXPECT_TRUE(verify().empty());
}

TEST_F(DcgmStep, FreshHostPlansAllFourAtOneExactVersionAndTheService) {
    const auto r = check();
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs),
              (Strings{"datacenter-gpu-manager-4-core=1:4.4.2-1",
                       "datacenter-gpu-manager-4-cuda12=1:4.4.2-1",
                       "datacenter-gpu-manager-4-proprietary=1:4.4.2-1",
                       "datacenter-gpu-manager-4-proprietary-cuda12=1:4.4.2-1"}));
    EXPECT_EQ(targets(r, Change::Kind::service), Strings{"nvidia-dcgm.service"});
    bool noted = false;
    for (const auto& c : r.changes) {
        noted = noted || c.detail == "DCGM for CUDA 12: driver branch 550 carries CUDA 12.4";
    }
    EXPECT_TRUE(noted);
}

TEST_F(DcgmStep, ApplyEnablesAndStartsTheHostEngineThenNothingIsLeft) {
    install("1:4.4.2-1");
    const auto r = check();
    EXPECT_TRUE(r.installs.empty());
    EXPECT_EQ(r.status, StepStatus::pending);
    host.clear_records();
    EXPECT_EQ(configure(r), StepStatus::done);
    EXPECT_EQ(host.ran({"systemctl", "enable", "--now", "nvidia-dcgm.service"}).size(), 1u);
    EXPECT_EQ(check().status, StepStatus::satisfied);

    host.sys.on_command({"dcgmi", "discovery", "-l"},
                        CommandResult{.out = "4 GPUs found.\n+--------+\n"});
    const auto v = verify();
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].id, "dcgm.packages");
    EXPECT_TRUE(v[0].passed) << v[0].found;
    EXPECT_EQ(v[0].found, "all at 1:4.4.2-1");
    EXPECT_EQ(v[1].id, "dcgm.hostengine");
    EXPECT_TRUE(v[1].passed);
    EXPECT_EQ(v[2].id, "dcgm.discovery");
    EXPECT_TRUE(v[2].passed) << v[2].found;
}

TEST_F(DcgmStep, InstalledAtAnyOneVersionIsKeptNotUpgraded) {
    install("1:4.6.1-1"); // newer than the index's common version: left alone
    host.sys.add_link("/etc/systemd/system/multi-user.target.wants/nvidia-dcgm.service",
                      "/lib/systemd/system/nvidia-dcgm.service");
    EXPECT_EQ(check().status, StepStatus::satisfied);
    host.set_package("datacenter-gpu-manager-4-core", "1:4.4.2-1"); // mixed: replanned
    EXPECT_EQ(specs(check().installs).size(), 3u);                  // the core is at it already
}

TEST_F(DcgmStep, EnabledButStoppedEngineIsStarted) {
    install("1:4.4.2-1");
    host.sys.add_link("/etc/systemd/system/multi-user.target.wants/nvidia-dcgm.service",
                      "/lib/systemd/system/nvidia-dcgm.service");
    host.sys.on_command({"systemctl", "is-active", "nvidia-dcgm"},
                        CommandResult{.exit_code = 3, .out = "failed\n"});
    const auto r = check();
    EXPECT_EQ(r.status, StepStatus::pending);
    ASSERT_EQ(targets(r, Change::Kind::command).size(), 1u);
    host.sys.on_command({"systemctl", "start", "nvidia-dcgm.service"},
                        CommandResult{.exit_code = 1,
                                      .err = "Job for nvidia-dcgm.service failed "
                                             "because the control process exited "
                                             "with error code.\n"});
    try {
        (void)configure(r);
        ADD_FAILURE() << "a failed start must fail the step";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "journalctl -u nvidia-dcgm")) << e.what();
    }
    host.sys.on_command({"dcgmi", "discovery", "-l"},
                        CommandResult{.exit_code = 235,
                                      .err = "Error: unable to establish a connection to the "
                                             "specified host: localhost\n"});
    const auto v = verify();
    EXPECT_FALSE(v[1].passed);
    EXPECT_FALSE(v[2].passed);
}

TEST_F(DcgmStep, DiscoveryMustSeeEveryGpu) {
    install("1:4.4.2-1");
    host.sys.on_command({"dcgmi", "discovery", "-l"}, CommandResult{.out = "1 GPU found.\n"});
    auto v = verify();
    EXPECT_FALSE(v[2].passed);
    EXPECT_EQ(v[2].found, "1 GPU");
    EXPECT_EQ(v[2].expected, "DCGM lists the 4 GPUs on PCI");
    host.sys.on_command({"dcgmi", "discovery", "-l"},
                        CommandResult{.exit_code = 235,
                                      .err = "Error: unable to establish a connection to the "
                                             "specified host: localhost\n"});
    v = verify();
    EXPECT_FALSE(v[2].passed);
    EXPECT_TRUE(contains(v[2].found, "exit status 235")) << v[2].found;
}

TEST_F(DcgmStep, OldBranchAndUnbuiltMajorsAreBlocked) {
    profile.driver->branch = "418";
    EXPECT_EQ(check().status, StepStatus::blocked);
    EXPECT_TRUE(contains(check().reason, "needs driver branch 450 or newer")) << check().reason;
    profile.driver->branch = "470"; // CUDA 11.4: NVIDIA's index here has no -cuda11 build
    const auto r = check();
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "the CUDA repository has no datacenter-gpu-manager-4-cuda11"))
        << r.reason;
}

TEST_F(DcgmStep, ExporterBlocksWithoutItsBinaryAndRunsItWhenThere) {
    install("1:4.4.2-1");
    profile.monitoring->dcgm_exporter = true;
    auto r = check();
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "not in its CUDA repository")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "nvcr.io/nvidia/k8s/dcgm-exporter")) << r.reason;

    host.sys.add_file("/usr/local/bin/dcgm-exporter", "");
    r = check();
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::file),
              Strings{"/etc/systemd/system/gpuprov-dcgm-exporter.service"});
    EXPECT_EQ(configure(r), StepStatus::done);
    const auto unit = host.sys.read_file("/etc/systemd/system/gpuprov-dcgm-exporter.service");
    ASSERT_TRUE(unit);
    EXPECT_TRUE(contains(*unit, "ExecStart=/usr/local/bin/dcgm-exporter -r localhost:5555\n"));
    EXPECT_TRUE(contains(*unit, "Requires=nvidia-dcgm.service\n"));
    EXPECT_TRUE(host.sys.read_link(
        "/etc/systemd/system/multi-user.target.wants/gpuprov-dcgm-exporter.service"));
    EXPECT_EQ(check().status, StepStatus::satisfied);
}
