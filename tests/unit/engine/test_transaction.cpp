// The package transaction: apt's simulation output parsed as apt prints it, apt's list-file
// names, dependency closures, and apply refusing what the plan did not show.
#include "host_builder.hpp"

#include <gpuprov/journal.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/transaction.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

std::vector<std::string> described(const std::vector<PackageAction>& actions) {
    std::vector<std::string> out;
    for (const auto& a : actions) {
        out.push_back(describe(a));
    }
    return out;
}

// Captured from apt 2.6.2 on Debian 12 (this project's build machine): a removal that pulls
// reverse dependencies with it, and an install from Debian's archive.
TEST(AptSimulation, ParsesRealRemovalsAndInstalls) {
    const auto actions = parse_apt_simulation(read_fixture("cmd/apt/simulate-remove-install.txt"));
    EXPECT_EQ(described(actions),
              (Strings{"remove    libgmock-dev  1.12.1-0.2", "remove    libgtest-dev  1.12.1-0.2",
                       "remove    ninja-build  1.11.1-2~deb12u1", "install   hello  2.10-3"}));
}

// Captured from apt 2.6.2 against an NVIDIA-shaped index whose cuda-drivers-550 depends with
// `>=`: apt takes the newest nvidia-driver-550, not the meta package's own version.
TEST(AptSimulation, ShowsTheDriverAptReallyPicks) {
    const auto actions = parse_apt_simulation(read_fixture("cmd/apt/simulate-driver-ge.txt"));
    EXPECT_EQ(described(actions),
              (Strings{"remove    ninja-build  1.11.1-2~deb12u1", "install   hello  2.10-3",
                       "install   nvidia-driver-550  550.90.07-1",
                       "install   cuda-drivers-550  550.54.15-1"}));
}

TEST(AptSimulation, UpgradeDowngradeAndReinstallByVersionOrder) {
    const auto actions = parse_apt_simulation(
        "Inst libnccl2 [2.21.5-1+cuda12.4] (2.21.5-1+cuda12.5 NVIDIA CUDA [amd64])\n"
        "Inst cuda-drivers-550 [550.90.07-1] (550.54.15-1 NVIDIA CUDA [amd64])\n"
        "Inst libfoo:i386 [1:1.0-1] (1:1.0-1 Debian:12.5/stable [i386])\n"
        "Purg old-thing [0.9]\n"
        "Conf libnccl2 (2.21.5-1+cuda12.5 NVIDIA CUDA [amd64])\n"
        "Inst broken-line-without-version\n");
    ASSERT_EQ(actions.size(), 4u);
    EXPECT_EQ(actions[0].kind, PackageAction::Kind::upgrade);
    EXPECT_EQ(actions[1].kind, PackageAction::Kind::downgrade);
    EXPECT_EQ(actions[2].kind, PackageAction::Kind::reinstall);
    EXPECT_EQ(actions[2].name, "libfoo:i386");
    EXPECT_EQ(actions[3].kind, PackageAction::Kind::remove);
    EXPECT_EQ(actions[3].from, "0.9");
    // A reinstall names its one version once; an upgrade shows both.
    EXPECT_EQ(describe(actions[2]), "reinstall libfoo:i386  1:1.0-1");
    EXPECT_EQ(describe(actions[0]), "upgrade   libnccl2  2.21.5-1+cuda12.4 -> 2.21.5-1+cuda12.5");
}

TEST(AptSimulation, DiffNamesWhatChanged) {
    const auto planned = parse_apt_simulation("Inst a (1.0 x [amd64])\nRemv b [2.0]\n");
    const auto now = parse_apt_simulation("Inst a (1.1 x [amd64])\nRemv b [2.0]\n");
    EXPECT_EQ(transaction_diff(planned, now),
              (Strings{"+ install   a  1.1", "- install   a  1.0"}));
    EXPECT_TRUE(transaction_diff(planned, planned).empty());
}

// The names apt printed for this URI (`apt-get update --print-uris`, apt 2.6.2).
TEST(AptLists, FileNamesAsAptMakesThem) {
    EXPECT_EQ(apt_list_name("https://127.0.0.1:8443/compute/cuda/repos/debian12/x86_64/") +
                  "InRelease",
              "127.0.0.1:8443_compute_cuda_repos_debian12_x86%5f64_InRelease");
    EXPECT_EQ(apt_list_name("http://user:pw@mirror.example.com/nvidia/"),
              "mirror.example.com_nvidia_");
}

TEST(Dependencies, NamesAndClosure) {
    EXPECT_EQ(dependency_names("nvidia-driver-550 (>= 550.54.15), libc6 | musl, dkms:any"),
              (Strings{"nvidia-driver-550", "libc6", "musl", "dkms"}));
    const std::map<std::string, Strings> deps = {
        {"cuda-drivers-550", {"nvidia-driver-550", "libc6"}},
        {"nvidia-driver-550", {"libnvidia-compute-550", "nvidia-kernel-common-550", "dkms"}},
        {"libnvidia-compute-550", {"libc6"}}};
    const auto closure = dependency_closure(
        {"cuda-drivers-550"},
        [&](const std::string& n) { return deps.count(n) ? deps.at(n) : Strings{}; },
        [](std::string_view n) { return is_driver_package(n); });
    EXPECT_EQ(closure, (Strings{"cuda-drivers-550", "libnvidia-compute-550", "nvidia-driver-550",
                                "nvidia-kernel-common-550"}));
    EXPECT_FALSE(is_driver_package("libnvidia-container1"));
    EXPECT_FALSE(is_driver_package("nvidia-container-toolkit"));
    EXPECT_TRUE(is_driver_package("libcuda1"));
}

using Transaction = ApplyTest;

// apt (here the fake) wants to remove a package nobody asked gpuprov to touch.
void simulate_with_removal(TestHost& host, const std::string& removed) {
    host.sys.on_command_prefix({"apt-get", "install", "--simulate"}, [removed](const Command& cmd) {
        std::string out = "Remv " + removed + " [560.35.03-1]\n";
        for (const auto& a : cmd.argv) {
            const auto eq = a.find('=');
            if (eq != std::string::npos && a.find("::") == std::string::npos &&
                !a.starts_with("-")) {
                out += "Inst " + a.substr(0, eq) + " (" + a.substr(eq + 1) + " fake [amd64])\n";
            }
        }
        return CommandResult{.out = out};
    });
}

TEST_F(Transaction, UnownedRemovalIsRefusedBeforeAnyChange) {
    TestHost host;
    host.set_package("cuda-drivers-560", "560.35.03-1");
    simulate_with_removal(host, "cuda-drivers-560");
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_NE(r.message.find("cuda-drivers-560 560.35.03-1"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("--allow-remove"), std::string::npos) << r.message;
    EXPECT_TRUE(host.sys.commands_ran.empty());
}

TEST_F(Transaction, AllowRemoveRunsTheTransactionWithTheRemovalSpelledOut) {
    TestHost host;
    host.set_package("cuda-drivers-560", "560.35.03-1");
    simulate_with_removal(host, "cuda-drivers-560");
    options.allow_remove = true;
    const auto r = apply(host);
    const auto installs = host.ran({"apt-get", "install", "--yes"});
    ASSERT_EQ(installs.size(), 1u) << r.message;
    const auto& argv = installs.front();
    EXPECT_NE(std::find(argv.begin(), argv.end(), "cuda-drivers-560-"), argv.end());
}

TEST_F(Transaction, ApplyRefusesWhenAptNowResolvesDifferently) {
    TestHost host;
    int calls = 0;
    host.sys.on_command_prefix({"apt-get", "install", "--simulate"}, [&calls](const Command&) {
        // The plan's simulation, then apply's: apt changed its mind in between.
        return CommandResult{.out = ++calls == 1
                                        ? "Inst nvidia-driver-550 (550.54.15-1 x [amd64])\n"
                                        : "Inst nvidia-driver-550 (550.90.07-1 x [amd64])\n"};
    });
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_NE(r.message.find("+ install   nvidia-driver-550  550.90.07-1"), std::string::npos)
        << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install", "--yes"}).empty());
}

TEST_F(Transaction, JournalOwnsTheClosureTheTransactionInstalled) {
    TestHost host;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_TRUE(gpuprov_installed_packages(host.sys).count("cuda-drivers-550"));
}

} // namespace

namespace {

// apply --skip cudnn: the final verify does not fail for the cuDNN the run was told to leave.
TEST_F(Transaction, SkippedStepsChecksDoNotFailTheFinalVerify) {
    TestHost host;
    options.filter.skip = {"cudnn"};
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    for (const auto& spec : host.installed_specs) {
        EXPECT_EQ(spec.find("cudnn"), std::string::npos) << spec;
    }
}

} // namespace
