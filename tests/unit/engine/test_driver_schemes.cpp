// The driver as NVIDIA packages it per branch on apt (issue 19; nvidia-repos-2026.md §A): on
// Ubuntu up to R580 the branch-suffixed metas with holds, from R590 the unsuffixed names chosen by
// NVIDIA's pinning package, which goes in first and alone, and whose pin apt's simulation of the
// driver already sees (read from the package itself). Against tests/fixtures/engine/ubuntu2404/.
#include "host_builder.hpp"
#include "unit_started.hpp"

#include <gpuprov/deb_file.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/transaction.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kPinFile = "/etc/apt/preferences.d/nvidia-driver-pin";

struct DriverSchemes : ApplyTest {
    /// The engine profile on an NVSwitch-less Ubuntu 24.04 host, with the given driver.
    Profile ubuntu(const std::string& branch, const std::string& flavor) {
        auto p = profile;
        p.driver->branch = branch;
        p.driver->flavor = flavor;
        p.cuda->version = "13.0";
        p.host = {};
        return p;
    }
    static HostOptions host_options() { return {.nvswitches = 0, .os = "ubuntu-24.04"}; }
};

// ---- which packages, per scheme ----

TEST_F(DriverSchemes, Ubuntu580IsTheSuffixedOpenMetaHeld) {
    TestHost host(host_options());
    const auto p = ubuntu("580", "open");
    StepRunner run(host, p);
    ASSERT_EQ(run.facts().os.repo_slug, "ubuntu2404");
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    // nvidia-open-580 (NVIDIA's open branch meta; it Conflicts cuda-drivers-580), newest build,
    // and nvidia-persistenced at that build: nvidia-compute-utils-580 asks for it floor-only.
    EXPECT_EQ(specs(r.installs), (Strings{"nvidia-open-580=580.159.04-1ubuntu1",
                                          "nvidia-persistenced=580.159.04-1ubuntu1"}));
    EXPECT_TRUE(r.pre_installs.empty());
    EXPECT_TRUE(r.hold_installs);
}

// e2e 44 found it: on Ubuntu's suffixed scheme nvidia-compute-utils-580 Depends
// nvidia-persistenced (>= 580.x) and no pinning package is installed, so apt took 620's
// nvidia-persistenced and the cross-branch guard refused every 580 profile. The floor-only edge
// is asked for at the branch's build, held with the closure; edges NVIDIA fixes with `=` are
// left to apt.
TEST_F(DriverSchemes, Ubuntu580AsksForFloorOnlyUnsuffixedPartsAtTheBranchAndHoldsThem) {
    TestHost host(host_options());
    const auto p = ubuntu("580", "proprietary");
    StepRunner run(host, p);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), (Strings{"cuda-drivers-580=580.159.04-1ubuntu1",
                                          "nvidia-persistenced=580.159.04-1ubuntu1"}));
    auto plan = run.plan();
    resolve_transactions(host.sys, run.ctx(), plan,
                         {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
    ASSERT_EQ(plan.transactions.size(), 1u);
    const auto& t = plan.transactions[0];
    EXPECT_TRUE(t.blocked.empty()) << t.blocked;
    const auto& actions = t.transaction.actions;
    const auto persistenced = std::find_if(actions.begin(), actions.end(), [](const auto& a) {
        return a.name == "nvidia-persistenced";
    });
    ASSERT_NE(persistenced, actions.end());
    EXPECT_EQ(persistenced->to, "580.159.04-1ubuntu1");
    EXPECT_TRUE(persistenced->hold);
}

// The pinned scheme leaves the closure to NVIDIA's pin: nothing besides the meta is asked for.
TEST_F(DriverSchemes, Ubuntu610AsksOnlyForTheMetaUnderItsPin) {
    TestHost host(host_options());
    const auto p = ubuntu("610", "proprietary");
    StepRunner run(host, p);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), Strings{"cuda-drivers=610.57.04-1ubuntu1"});
}

TEST_F(DriverSchemes, Ubuntu595IsThePinningPackageFirstThenTheUnsuffixedMeta) {
    TestHost host(host_options());
    const auto p = ubuntu("595", "open");
    StepRunner run(host, p);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.pre_installs), Strings{"nvidia-driver-pinning-595=595-1ubuntu1"});
    EXPECT_EQ(specs(r.installs), Strings{"nvidia-open=595.91.07-1ubuntu1"});
    // Never apt-mark hold beside the pin.
    EXPECT_FALSE(r.hold_installs);
    // The pin, read from the package itself (downloaded, checked against the index's SHA256).
    ASSERT_EQ(r.view_preferences.count("nvidia-driver-pin"), 1u);
    EXPECT_EQ(r.view_preferences.at("nvidia-driver-pin"),
              "Package: cuda-drivers* src:nvidia-open:any\nPin: version 595.*\n"
              "Pin-Priority: 1000\n");
    EXPECT_TRUE(std::any_of(host.sys.queries.begin(), host.sys.queries.end(),
                            [](const auto& argv) { return argv.at(0) == "dpkg-deb"; }));
    const auto cached = kCacheDir + "/cuda/pool/nvidia-driver-pinning-595_595-1ubuntu1_all.deb";
    EXPECT_EQ(host.sys.file(cached),
              read_fixture("engine/ubuntu2404/nvidia-driver-pinning-595_595-1ubuntu1_all.deb"));
    const auto pin = std::find_if(r.changes.begin(), r.changes.end(), [](const Change& c) {
        return c.target == "nvidia-driver-pinning-595";
    });
    ASSERT_NE(pin, r.changes.end());
    EXPECT_TRUE(contains(pin->detail, "first, in its own transaction")) << pin->detail;
}

TEST_F(DriverSchemes, DriverVersionChoosesTheVersionPinningPackage) {
    TestHost host(host_options());
    auto p = ubuntu("595", "proprietary");
    p.driver->version = "595.71.05";
    StepRunner run(host, p);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.pre_installs), Strings{"nvidia-driver-pinning-595.71.05=595.71.05-1ubuntu1"});
    EXPECT_EQ(specs(r.installs), Strings{"cuda-drivers=595.71.05-1ubuntu1"});
    EXPECT_TRUE(contains(r.view_preferences.at("nvidia-driver-pin"), "Pin: version 595.71.05-*"));
}

TEST_F(DriverSchemes, NoSchemeForTheBranchOnTheOsBlocksNamingTheDataFile) {
    TestHost host(host_options());
    const auto p_run = ubuntu("585", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "no driver packages gpuprov knows for branch 585 on ubuntu"))
        << r.reason;
}

TEST_F(DriverSchemes, OpenBeforeItsFirstBranchBlocksWithTheFix) {
    TestHost host(host_options());
    const auto p_run = ubuntu("550", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "from branch 560")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "flavor: proprietary")) << r.reason;
}

TEST_F(DriverSchemes, AMissingPinningPackageBlocksNamingThoseThere) {
    TestHost host(host_options());
    auto p = ubuntu("595", "open");
    p.driver->version = "595.58.03"; // no such version pin in the fixture repository
    StepRunner run(host, p);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "no nvidia-driver-pinning-595.58.03")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "nvidia-driver-pinning-610")) << r.reason;
}

TEST_F(DriverSchemes, APinningPackageWhoseSha256DiffersIsRefused) {
    TestHost host(host_options());
    host.sys.on_url(kUbuntuCudaUrl + "nvidia-driver-pinning-595_595-1ubuntu1_all.deb",
                    http_ok("not the package the index lists"));
    const auto p_run = ubuntu("595", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "the signed index says")) << r.reason;
}

TEST_F(DriverSchemes, HoldsOnThePinnedSchemeAreReleased) {
    TestHost host(host_options());
    host.set_package("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.set_package("nvidia-open", "595.91.07-1ubuntu1", "hold ok installed");
    host.sys.add_file("/proc/driver/nvidia/version",
                      replace_all(read_fixture("engine/cmd/proc-driver-version-550.txt"),
                                  "550.127.08", "595.91.07"));
    const auto p_run = ubuntu("595", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(r.installs.empty());
    EXPECT_EQ(r.unholds, Strings{"nvidia-open"});
    EXPECT_TRUE(contains(r.changes.front().target, "apt-mark unhold nvidia-open"))
        << r.changes.front().target;
}

TEST_F(DriverSchemes, BranchChangeWithinThePinnedSchemeSwapsThePinAndMovesTheClosure) {
    TestHost host(host_options());
    host.set_package("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.set_package("nvidia-open", "595.91.07-1ubuntu1");
    host.set_package("nvidia-driver-open", "595.91.07-1ubuntu1");
    const auto p_run = ubuntu("610", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.pre_installs), Strings{"nvidia-driver-pinning-610=610-2ubuntu1"});
    EXPECT_EQ(r.pre_removals, Strings{"nvidia-driver-pinning-595"});
    // Both move: nvidia-driver-open's `>=` is met by 595 already, apt alone would leave it.
    EXPECT_EQ(specs(r.installs),
              (Strings{"nvidia-open=610.57.04-1ubuntu1", "nvidia-driver-open=610.57.04-1ubuntu1"}));
}

// e2e 45 found it: 595 -> 580 left nvidia-driver-pinning-595 (and its pin file) installed beside
// the held 580 closure, and the next plan was empty. The pinning package is installed in a
// transaction of its own, so the journal's per-step versions never name it; leaving the pinned
// scheme removes it all the same, as a pin swap within the scheme does.
TEST_F(DriverSchemes, BranchChangeDownToTheSuffixedSchemeRemovesThePinningPackage) {
    TestHost host(host_options());
    host.set_package("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.set_package("nvidia-open", "595.91.07-1ubuntu1");
    host.set_package("nvidia-driver-open", "595.91.07-1ubuntu1");
    host.set_package("nvidia-persistenced", "595.91.07-1ubuntu1");
    const auto p_run = ubuntu("580", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(r.pre_installs.empty());
    EXPECT_NE(std::find(r.removals.begin(), r.removals.end(), "nvidia-driver-pinning-595"),
              r.removals.end())
        << join(r.removals, ", ");
    EXPECT_EQ(specs(r.installs), (Strings{"nvidia-open-580=580.159.04-1ubuntu1",
                                          "nvidia-persistenced=580.159.04-1ubuntu1"}));
    EXPECT_TRUE(r.hold_installs);

    // Converged at 580 but the pin still there: not converged.
    TestHost left(host_options());
    left.set_package("nvidia-driver-pinning-595", "595-1ubuntu1");
    left.set_package("nvidia-open-580", "580.159.04-1ubuntu1", "hold ok installed");
    StepRunner again(left, p_run);
    const auto r2 = again.check("driver");
    EXPECT_EQ(r2.status, StepStatus::pending) << r2.reason;
    EXPECT_EQ(r2.removals, Strings{"nvidia-driver-pinning-595"});
}

// e2e 45 found it: the transaction removes the pinning package (`name-`), it does not purge it,
// so its pin file, a conffile, stayed with Pin-Priority 1000 on 595 beside the 580 holds. The
// plan shows the purge after the transaction, and apply runs exactly that.
namespace {
Strings purge_commands(const CheckResult& r) {
    Strings out;
    for (const auto& c : r.changes) {
        if (c.kind == Change::Kind::command && c.target.starts_with("dpkg --purge")) {
            out.push_back(c.target);
        }
    }
    return out;
}
Strings command_changes(const CheckResult& r) {
    Strings out;
    for (const auto& c : r.changes) {
        if (c.kind == Change::Kind::command) {
            out.push_back(c.target);
        }
    }
    return out;
}
} // namespace

TEST_F(DriverSchemes, BranchChangeDownToTheSuffixedSchemePurgesThePinningPackageAfterIt) {
    TestHost host(host_options());
    host.set_package("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.package_files("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.set_package("nvidia-open", "595.91.07-1ubuntu1");
    host.set_package("nvidia-driver-open", "595.91.07-1ubuntu1");
    host.set_package("nvidia-persistenced", "595.91.07-1ubuntu1");
    ASSERT_TRUE(host.sys.file(kPinFile).has_value());
    profile = ubuntu("580", "open");
    {
        StepRunner run(host, profile);
        const auto r = run.check("driver");
        ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
        EXPECT_EQ(purge_commands(r), Strings{"dpkg --purge nvidia-driver-pinning-595"});
    }
    options.filter.only = {"nouveau", "cuda-repo", "driver"};
    (void)apply(host);
    // Purged once, after the transaction that removed it.
    EXPECT_EQ(host.purged, Strings{"nvidia-driver-pinning-595"});
    const auto& ran = host.sys.commands_ran;
    const auto at = [&](const Strings& prefix) {
        return std::find_if(ran.begin(), ran.end(), [&](const Strings& argv) {
            return argv.size() >= prefix.size() &&
                   std::equal(prefix.begin(), prefix.end(), argv.begin());
        });
    };
    const auto install = at({"apt-get", "install", "--yes"});
    const auto purge = at({"dpkg", "--purge"});
    ASSERT_NE(install, ran.end());
    ASSERT_NE(purge, ran.end());
    EXPECT_LT(install - ran.begin(), purge - ran.begin());
    EXPECT_FALSE(host.sys.file(kPinFile).has_value());
    EXPECT_FALSE(host.package_field("nvidia-driver-pinning-595", "Status").has_value());
    StepRunner again(host, profile);
    EXPECT_TRUE(purge_commands(again.check("driver")).empty());
}

// A kill between the removal and the purge: the package is in config-files with its pin file;
// the re-run plans the purge alone and converges.
TEST_F(DriverSchemes, APinningPackageLeftInConfigFilesIsPurgedAlone) {
    TestHost host(host_options());
    host.package_files("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.set_package("nvidia-driver-pinning-595", "595-1ubuntu1", "deinstall ok config-files");
    host.set_package("nvidia-open-580", "580.159.04-1ubuntu1", "hold ok installed");
    profile = ubuntu("580", "open");
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(contains(r.reason, "nvidia-driver-pinning-595 removed but not purged")) << r.reason;
    EXPECT_TRUE(r.installs.empty());
    EXPECT_TRUE(r.removals.empty()) << join(r.removals, ", ");
    EXPECT_TRUE(r.pre_installs.empty());
    EXPECT_TRUE(r.pre_removals.empty());
    EXPECT_EQ(command_changes(r), Strings{"dpkg --purge nvidia-driver-pinning-595"});

    options.filter.only = {"nouveau", "cuda-repo", "driver"};
    (void)apply(host);
    EXPECT_EQ(host.purged, Strings{"nvidia-driver-pinning-595"});
    EXPECT_TRUE(host.ran({"apt-get", "install", "--yes"}).empty());
    EXPECT_FALSE(host.sys.file(kPinFile).has_value());
    StepRunner again(host, profile);
    EXPECT_TRUE(command_changes(again.check("driver")).empty());
}

// The same 580 host without a leftover: nothing to purge, nothing planned.
TEST_F(DriverSchemes, A580HostWithoutLeftoverPinningPackagePlansNoPurge) {
    TestHost host(host_options());
    host.set_package("nvidia-open-580", "580.159.04-1ubuntu1", "hold ok installed");
    profile = ubuntu("580", "open");
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_NE(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(command_changes(r).empty()) << join(command_changes(r), "; ");
    EXPECT_TRUE(r.removals.empty());
}

TEST_F(DriverSchemes, FabricManagerFromR580IsUnsuffixedAtTheDriversVersion) {
    TestHost host({.nvswitches = 6, .os = "ubuntu-24.04"});
    const auto p_run = ubuntu("595", "open");
    StepRunner run(host, p_run);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(
        specs(r.installs),
        (Strings{"nvidia-fabricmanager=595.91.07-1ubuntu1", "libnvidia-nscq=595.91.07-1ubuntu1",
                 "nvidia-imex=595.91.07-1ubuntu1", "nvidia-modprobe=595.91.07-1ubuntu1"}));
    // The pin keeps them on the branch; no apt-mark hold beside it.
    EXPECT_FALSE(r.hold_installs);
    // On 580 they are unsuffixed too, and held with the suffixed driver.
    const auto p_run580 = ubuntu("580", "open");
    StepRunner run580(host, p_run580);
    const auto r580 = run580.check("fabric-manager");
    EXPECT_EQ(
        specs(r580.installs),
        (Strings{"nvidia-fabricmanager=580.159.04-1ubuntu1", "libnvidia-nscq=580.159.04-1ubuntu1",
                 "nvidia-imex=580.159.04-1ubuntu1", "nvidia-modprobe=580.159.04-1ubuntu1"}));
    EXPECT_TRUE(r580.hold_installs);
}

// HGX B200: no NVIDIA PCI bridge, four NVSwitch management functions registered as InfiniBand
// devices whose VPD says SW_MNG (the PCI spec's layout around the marker NVIDIA greps for).
void add_nvlink5_switches(TestHost& host) {
    for (int i = 0; i < 4; ++i) {
        const auto fn = fmt::format("/sys/devices/pci0000:00/0000:0{}:00.0", 5 + i);
        host.sys.add_link(fmt::format("/sys/class/infiniband/mlx5_{}/device", i), fn);
        host.sys.add_file(fn + "/vpd",
                          std::string("\x82\x05NVLSW\x90\x0e\x00V3\x0bSMDL=SW_MNG\x78", 25));
    }
}

TEST_F(DriverSchemes, Nvlink5HostsGetNvlsmAndIbUmadBesideFabricManager) {
    TestHost host({.nvswitches = 0, .os = "ubuntu-24.04"});
    add_nvlink5_switches(host);
    const auto p595 = ubuntu("595", "open");
    StepRunner run(host, p595);
    ASSERT_EQ(run.facts().nvlink5_switch_count, 4);
    ASSERT_EQ(run.facts().nvswitch_count, 0);
    // fabric_manager: auto wants it, and NVLSM must come from NVIDIA's repository: this index
    // (tests/fixtures/engine/ubuntu2404) has none, so the plan blocks naming it.
    auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::blocked) << r.reason;
    EXPECT_TRUE(contains(r.reason, "no nvlsm")) << r.reason;
    // NVLSM there already (its own date-based version): fabric manager at the driver's version,
    // ib_umad loaded now and listed for boot.
    host.set_package("nvlsm", "2025.10.12-1");
    r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(
        specs(r.installs),
        (Strings{"nvidia-fabricmanager=595.91.07-1ubuntu1", "libnvidia-nscq=595.91.07-1ubuntu1",
                 "nvidia-imex=595.91.07-1ubuntu1", "nvidia-modprobe=595.91.07-1ubuntu1"}));
    const auto has_change = [](const CheckResult& c, const std::string& what) {
        return std::any_of(c.changes.begin(), c.changes.end(),
                           [&](const Change& ch) { return contains(ch.target, what); });
    };
    EXPECT_TRUE(has_change(r, "modprobe ib_umad"));
    EXPECT_TRUE(has_change(r, "/etc/modules-load.d/gpuprov-ib_umad.conf"));
    // Loaded: no modprobe planned (the file is still written).
    host.sys.add_dir("/sys/module/ib_umad");
    r = run.check("fabric-manager");
    EXPECT_FALSE(has_change(r, "modprobe ib_umad"));
    EXPECT_TRUE(has_change(r, "/etc/modules-load.d/gpuprov-ib_umad.conf"));
}

// e2e 46 on 580: nvidia-imex Depends nvidia-modprobe with no version, and on the suffixed
// scheme no pinning package steers apt, so IMEX alone would bring 610's nvidia-modprobe (the
// index's newest) and split the host across branches. NVIDIA's driver container installs
// nvidia-modprobe=<driver version> beside IMEX; so does gpuprov, held with the rest, and an
// nvidia-modprobe some admin released is held again.
TEST_F(DriverSchemes, FabricManagerOn580BringsNvidiaModprobeAtTheDriversBuildAndHoldsIt) {
    TestHost host({.nvswitches = 6, .os = "ubuntu-24.04"});
    const auto p580 = ubuntu("580", "open");
    host.set_package("nvidia-open-580", "580.159.04-1ubuntu1", "hold ok installed");
    StepRunner run(host, p580);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    const auto wanted = specs(r.installs);
    EXPECT_NE(std::find(wanted.begin(), wanted.end(), "nvidia-modprobe=580.159.04-1ubuntu1"),
              wanted.end())
        << join(wanted, ", ");
    EXPECT_TRUE(r.hold_installs);

    for (const auto* n : {"nvidia-fabricmanager", "libnvidia-nscq", "nvidia-imex"}) {
        host.set_package(n, "580.159.04-1ubuntu1", "hold ok installed");
    }
    host.set_package("nvidia-modprobe", "580.159.04-1ubuntu1", "install ok installed");
    const auto again = run.check("fabric-manager");
    EXPECT_TRUE(again.installs.empty()) << join(specs(again.installs), ", ");
    EXPECT_EQ(again.status, StepStatus::pending) << again.reason;
    EXPECT_TRUE(std::any_of(again.changes.begin(), again.changes.end(), [](const Change& c) {
        return contains(c.target, "apt-mark hold nvidia-modprobe");
    })) << "no hold for nvidia-modprobe";
}

// ---- IMEX (fabric.imex) ----

const std::string kImexNodes = "/etc/nvidia-imex/nodes_config.cfg";

// A GB200/GB300 compute tray: IMEX runs there with no local fabric manager (the NVSwitches are
// in the switch trays). nvidia-imex and nvidia-modprobe at the driver's build, the node list
// written as given, the unit enabled and restarted so the daemon reads the list.
TEST_F(DriverSchemes, ImexWithoutFabricManagerWritesTheNodeListAndRunsTheService) {
    TestHost host({.nvswitches = 0, .os = "ubuntu-24.04"});
    auto p = ubuntu("595", "open");
    p.fabric = {.imex = true, .imex_nodes = {"10.0.0.11", "10.0.0.12"}};
    StepRunner run(host, p);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs),
              (Strings{"nvidia-imex=595.91.07-1ubuntu1", "nvidia-modprobe=595.91.07-1ubuntu1"}));
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kImexNodes});
    EXPECT_EQ(targets(r, Change::Kind::service), Strings{"nvidia-imex.service"});
    EXPECT_FALSE(r.hold_installs); // 595's pin keeps IMEX on the branch

    EXPECT_EQ(run.step("fabric-manager").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.file(kImexNodes), "10.0.0.11\n10.0.0.12\n");
    EXPECT_EQ(host.ran({"systemctl", "enable", "nvidia-imex.service"}).size(), 1u);
    EXPECT_EQ(host.ran({"systemctl", "restart", "nvidia-imex.service"}).size(), 1u);
    EXPECT_TRUE(host.ran({"systemctl", "enable", "--now", "nvidia-fabricmanager.service"}).empty());

    host.set_package("nvidia-imex", "595.91.07-1ubuntu1");
    host.set_package("nvidia-modprobe", "595.91.07-1ubuntu1");
    EXPECT_EQ(run.check("fabric-manager").status, StepStatus::satisfied);

    // A node joins the domain: the list changes and the running daemon must reread it.
    p.fabric.imex_nodes.push_back("10.0.0.13");
    StepRunner again(host, p);
    const auto r2 = again.check("fabric-manager");
    ASSERT_EQ(r2.status, StepStatus::pending) << r2.reason;
    EXPECT_EQ(targets(r2, Change::Kind::file), Strings{kImexNodes});
    EXPECT_EQ(command_changes(r2), Strings{"systemctl restart nvidia-imex.service"});
    EXPECT_EQ(again.step("fabric-manager").apply(again.ctx(), host.sys, r2, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.file(kImexNodes), "10.0.0.11\n10.0.0.12\n10.0.0.13\n");
    EXPECT_EQ(host.ran({"systemctl", "enable", "nvidia-imex.service"}).size(), 1u);
    EXPECT_EQ(host.ran({"systemctl", "restart", "nvidia-imex.service"}).size(), 2u);
}

// apply killed after it wrote a changed node list and before its restart: the list on disk
// matches the profile, but the daemon started before it and runs on the old one. Judged by the
// two times (systemctl's ActiveEnterTimestamp against the file's mtime), the re-run restarts.
TEST_F(DriverSchemes, ImexStartedBeforeItsNodeListIsRestarted) {
    using namespace std::chrono_literals;
    TestHost host({.nvswitches = 0, .os = "ubuntu-24.04"});
    auto p = ubuntu("595", "open");
    p.fabric = {.imex = true, .imex_nodes = {"10.0.0.11", "10.0.0.12"}};
    host.set_package("nvidia-imex", "595.91.07-1ubuntu1");
    host.set_package("nvidia-modprobe", "595.91.07-1ubuntu1");
    StepRunner run(host, p);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(run.step("fabric-manager").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    ASSERT_EQ(host.ran({"systemctl", "restart", "nvidia-imex.service"}).size(), 1u);
    host.sys.sleep(2s);
    EXPECT_EQ(run.check("fabric-manager").status, StepStatus::satisfied);

    // What the killed apply left: the new list written after the daemon's last start.
    p.fabric.imex_nodes.push_back("10.0.0.13");
    host.sys.add_file(kImexNodes, "10.0.0.11\n10.0.0.12\n10.0.0.13\n");
    StepRunner again(host, p);
    const auto r2 = again.check("fabric-manager");
    ASSERT_EQ(r2.status, StepStatus::pending) << r2.reason;
    EXPECT_TRUE(targets(r2, Change::Kind::file).empty()); // the file is right
    EXPECT_EQ(command_changes(r2), Strings{"systemctl restart nvidia-imex.service"});
    EXPECT_EQ(again.step("fabric-manager").apply(again.ctx(), host.sys, r2, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.ran({"systemctl", "restart", "nvidia-imex.service"}).size(), 2u);
    host.sys.sleep(2s);
    EXPECT_EQ(again.check("fabric-manager").status, StepStatus::satisfied);

    // A daemon started after the list is left alone, also when systemd cannot say (inactive).
    host.started.erase("nvidia-imex.service");
    EXPECT_EQ(again.check("fabric-manager").status, StepStatus::satisfied);
}

TEST(UnitStarted, ParsesSystemdsMicrosecondUtcTimestamps) {
    using namespace std::chrono;
    const auto t = gpuprov::steps::parse_systemd_us_utc("Sat 2026-12-05 09:41:46.645123 UTC");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(duration_cast<microseconds>(t->time_since_epoch()).count(), 1796463706645123LL);
    for (const char* bad :
         {"", "n/a", "Sat 2026-12-05 09:41:46 UTC", "Sat 2026-12-05 09:41:46.645123 CET",
          "Sat 2026-13-05 09:41:46.645123 UTC", "Sat 2026-12-05 09:41:46.645123 UTC x"}) {
        EXPECT_FALSE(gpuprov::steps::parse_systemd_us_utc(bad).has_value()) << bad;
    }
}

// Without a node list gpuprov installs IMEX and says who starts it; it writes no list (this node
// alone would split a real multi-node domain) and touches no unit.
TEST_F(DriverSchemes, ImexWithoutANodeListInstallsOnly) {
    TestHost host({.nvswitches = 0, .os = "ubuntu-24.04"});
    auto p = ubuntu("580", "open");
    p.fabric.imex = true;
    StepRunner run(host, p);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs),
              (Strings{"nvidia-imex=580.159.04-1ubuntu1", "nvidia-modprobe=580.159.04-1ubuntu1"}));
    EXPECT_TRUE(r.hold_installs); // 580's suffixed driver is held; IMEX with it
    EXPECT_TRUE(targets(r, Change::Kind::file).empty());
    EXPECT_TRUE(targets(r, Change::Kind::service).empty());
    const auto notes = std::count_if(r.changes.begin(), r.changes.end(), [](const Change& c) {
        return c.kind == Change::Kind::note && contains(c.detail, "fabric.imex_nodes is not set");
    });
    EXPECT_EQ(notes, 1);
    EXPECT_EQ(run.step("fabric-manager").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_FALSE(host.sys.exists(kImexNodes));
    EXPECT_TRUE(host.ran({"systemctl", "restart"}).empty());
    EXPECT_TRUE(host.ran({"systemctl", "enable"}).empty());
}

// On an NVSwitch host IMEX comes beside fabric manager: each package once, both units.
TEST_F(DriverSchemes, ImexBesideFabricManagerOnAnNvswitchHost) {
    TestHost host({.nvswitches = 6, .os = "ubuntu-24.04"});
    auto p = ubuntu("595", "open");
    p.fabric = {.imex = true, .imex_nodes = {"10.0.0.11"}};
    StepRunner run(host, p);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(
        specs(r.installs),
        (Strings{"nvidia-fabricmanager=595.91.07-1ubuntu1", "libnvidia-nscq=595.91.07-1ubuntu1",
                 "nvidia-imex=595.91.07-1ubuntu1", "nvidia-modprobe=595.91.07-1ubuntu1"}));
    EXPECT_EQ(targets(r, Change::Kind::service),
              (Strings{"nvidia-fabricmanager.service", "nvidia-imex.service"}));
    // A daemon that exits at once (wrong driver loaded, no local address in the list) fails the
    // step with where to look, after fabric manager was started.
    host.restart_fails = "nvidia-imex.service";
    try {
        (void)run.step("fabric-manager").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
        ADD_FAILURE() << "apply succeeded";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "systemctl restart nvidia-imex.service failed (exit 1)"))
            << e.what();
        EXPECT_TRUE(contains(e.what(), "journalctl -u nvidia-imex")) << e.what();
    }
    EXPECT_EQ(host.ran({"systemctl", "enable", "--now", "nvidia-fabricmanager.service"}).size(),
              1u);
}

// ---- the plan: two transactions, the second resolved with the pin in place ----

TEST_F(DriverSchemes, PlanResolvesThePinFirstAndTheDriverWithThePinInItsView) {
    TestHost host(host_options());
    const auto p = ubuntu("595", "open");
    StepRunner run(host, p);
    auto plan = run.plan();
    resolve_transactions(host.sys, run.ctx(), plan,
                         {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
    ASSERT_EQ(plan.transactions.size(), 2u);
    const auto& first = plan.transactions[0];
    EXPECT_TRUE(first.first);
    EXPECT_EQ(first.steps, Strings{"driver"});
    EXPECT_EQ(specs(first.transaction.requested),
              Strings{"nvidia-driver-pinning-595=595-1ubuntu1"});
    const auto& main = plan.transactions[1];
    EXPECT_FALSE(main.first);
    EXPECT_EQ(main.view_preferences.count("nvidia-driver-pin"), 1u);
    // apt's simulation of the batch read a preferences.d holding the package's pin.
    ASSERT_EQ(host.simulations.size(), 2u);
    std::string parts;
    for (const auto& a : host.simulations[1]) {
        if (a.starts_with("Dir::Etc::PreferencesParts=")) {
            parts = a.substr(a.find('=') + 1);
        }
    }
    ASSERT_FALSE(parts.empty());
    EXPECT_EQ(host.sys.file(parts + "/nvidia-driver-pin"),
              main.view_preferences.at("nvidia-driver-pin"));
    EXPECT_TRUE(first.blocked.empty()) << first.blocked;
    EXPECT_TRUE(main.blocked.empty()) << main.blocked;
}

TEST_F(DriverSchemes, ATransactionThatCrossesBranchesIsBlockedNamingWhatPulledIt) {
    TestHost host(host_options());
    const auto p = ubuntu("595", "open");
    StepRunner run(host, p);
    auto plan = run.plan();
    // What real apt does for nvidia-open=595.x without the pin: nvidia-driver-open (>= V)
    // resolves to the newest (nvidia-repos-2026.md A3 [C16]).
    host.sys.on_command_prefix({"apt-get", "install", "--simulate"}, [](const Command& cmd) {
        std::string out = "Reading package lists...\n";
        for (const auto& a : cmd.argv) {
            if (a.starts_with("nvidia-open=")) {
                out += "Inst nvidia-driver-open (610.57.04-1ubuntu1 mirror [amd64])\n"
                       "Inst nvidia-open (595.91.07-1ubuntu1 mirror [amd64])\n";
            } else if (a.starts_with("nvidia-driver-pinning-595=")) {
                out += "Inst nvidia-driver-pinning-595 (595-1ubuntu1 mirror [all])\n";
            }
        }
        return CommandResult{.out = out};
    });
    resolve_transactions(host.sys, run.ctx(), plan,
                         {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
    ASSERT_EQ(plan.transactions.size(), 2u);
    const auto& blocked = plan.transactions[1].blocked;
    EXPECT_TRUE(contains(blocked, "nvidia-driver-open 610.57.04-1ubuntu1, a driver package of "
                                  "branch 610, not the profile's 595"))
        << blocked;
    EXPECT_TRUE(contains(blocked, "pulled by nvidia-open 595.91.07-1ubuntu1 (Depends: "
                                  "nvidia-driver-open (>= 595.91.07))"))
        << blocked;
    EXPECT_TRUE(plan.blocked());
}

TEST(DriverBranchOf, ReadsTheBranchOfDriverVersionsOnly) {
    EXPECT_EQ(driver_branch_of("595.91.07-1ubuntu1"), "595");
    EXPECT_EQ(driver_branch_of("3:580.95.05-1.el9"), "580");
    EXPECT_EQ(driver_branch_of("610-2ubuntu1"), "610");
    EXPECT_EQ(driver_branch_of("610"), "610");
    EXPECT_EQ(driver_branch_of("1.17.3-1"), "");
    EXPECT_EQ(driver_branch_of("2025.10.12-1"), "");
    EXPECT_EQ(driver_branch_of("2.26.6-1"), "");
    EXPECT_EQ(driver_branch_of("120.5-1"), ""); // below R300: not a driver branch
    EXPECT_EQ(driver_branch_of("5951.1"), "");
    EXPECT_EQ(driver_branch_of(""), "");
}

// ---- apply: the pin alone first, the driver after it; the guard before destructive work ----

TEST_F(DriverSchemes, ApplyInstallsThePinAloneThenTheDriverAndConverges) {
    TestHost host(host_options());
    profile = ubuntu("595", "open");
    options.filter.only = {"nouveau", "cuda-repo", "driver"};
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    const auto installs = host.ran({"apt-get", "install", "--yes"});
    ASSERT_EQ(installs.size(), 2u);
    EXPECT_EQ(installs[0].back(), "nvidia-driver-pinning-595=595-1ubuntu1");
    EXPECT_EQ(installs[1].back(), "nvidia-open=595.91.07-1ubuntu1");
    EXPECT_EQ(r.apt_transactions, 2);
    EXPECT_TRUE(host.sys.file(kPinFile).has_value());
    EXPECT_TRUE(host.ran({"apt-mark"}).empty()); // no holds beside the pin
    // Resolved five times: the plan's two (the pin, the batch with the pin in its view), the
    // guard's same two before anything destructive, and the batch once more with the real pin.
    ASSERT_EQ(host.simulations.size(), 5u);
    const auto has_view = [](const Strings& argv) {
        return std::any_of(argv.begin(), argv.end(), [](const std::string& a) {
            return a.starts_with("Dir::Etc::PreferencesParts=");
        });
    };
    EXPECT_TRUE(has_view(host.simulations[1]));
    EXPECT_TRUE(has_view(host.simulations[3]));
    EXPECT_FALSE(has_view(host.simulations[4]));
    // Converged: nothing left to plan.
    StepRunner again(host, profile);
    auto plan = again.plan();
    for (const auto& id : {"cuda-repo", "driver"}) {
        for (const auto& ps : plan.steps) {
            if (ps.id == id) {
                EXPECT_EQ(ps.check.status, StepStatus::satisfied) << id << ": " << ps.check.reason;
            }
        }
    }
}

TEST_F(DriverSchemes, AGuardThatRefusesLeavesTheOldDriverAndTheBlacklistUntouched) {
    TestHost host({.nvswitches = 0, .nouveau_loaded = true, .os = "ubuntu-24.04"});
    profile = ubuntu("595", "open");
    options.filter.only = {"nouveau", "cuda-repo", "driver"};
    int sims = 0;
    host.sys.on_command_prefix({"apt-get", "install", "--simulate"}, [&](const Command& cmd) {
        // The plan's resolution, then apt changes its mind (a mirror sync between plan and apply).
        std::string out;
        for (const auto& a : cmd.argv) {
            if (a.find('=') != std::string::npos && a.find("::") == std::string::npos &&
                !a.starts_with("-")) {
                out += "Inst " + a.substr(0, a.find('=')) + " (" + a.substr(a.find('=') + 1) +
                       " mirror [amd64])\n";
            }
        }
        if (++sims > 2) {
            out += "Inst nvidia-kernel-common (610.57.04-1ubuntu1 mirror [amd64])\n";
        }
        return CommandResult{.out = out};
    });
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "nothing was installed and no driver was touched"))
        << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install", "--yes"}).empty());
    // Nouveau's blacklist and initramfs are destructive prepare work: after the guard.
    EXPECT_TRUE(host.ran({"update-initramfs"}).empty());
    EXPECT_FALSE(host.sys.file("/etc/modprobe.d/blacklist-nouveau.conf").has_value());
}

// ---- the branch lock, judged by apt's candidates ----

TEST(AptPolicy, ReadsTheCandidateOfEachPackage) {
    // A real capture (tests/fixtures/cmd/README.md), then two more in apt's layout.
    const auto one = parse_apt_policy(read_fixture("cmd/apt/policy-pinning-580-debian12.txt"));
    EXPECT_EQ(one, (std::map<std::string, std::string>{{"nvidia-driver-pinning-580", "580-5"}}));
    const auto two = parse_apt_policy("nvidia-open:\n  Installed: 595.91.07-1ubuntu1\n"
                                      "  Candidate: 610.57.04-1ubuntu1\n  Version table:\n"
                                      "     610.57.04-1ubuntu1 500\n"
                                      "libnvidia-nscq:\n  Installed: (none)\n  Candidate: (none)\n"
                                      "  Version table:\n");
    EXPECT_EQ(two, (std::map<std::string, std::string>{{"nvidia-open", "610.57.04-1ubuntu1"},
                                                       {"libnvidia-nscq", ""}}));
}

TEST_F(DriverSchemes, TheBranchLockFailsVerifyWhenACandidateLeavesTheBranch) {
    TestHost host(host_options());
    host.set_package("nvidia-driver-pinning-595", "595-1ubuntu1");
    host.set_package("nvidia-open", "595.91.07-1ubuntu1");
    const auto p = ubuntu("595", "open");
    StepRunner run(host, p);
    const auto find = [&](const std::vector<CheckOutcome>& all) {
        const auto it = std::find_if(all.begin(), all.end(), [](const CheckOutcome& c) {
            return c.id == "driver.branch-lock";
        });
        EXPECT_NE(it, all.end());
        return it == all.end() ? CheckOutcome{} : *it;
    };
    EXPECT_TRUE(find(run.step("driver").verify(run.ctx(), host.sys)).passed);
    // A pin that no longer covers nvidia-open: dist-upgrade would take 610.
    host.sys.on_command_prefix({"apt-cache", "policy"}, [](const Command&) {
        return CommandResult{.out = "nvidia-open:\n  Installed: 595.91.07-1ubuntu1\n"
                                    "  Candidate: 610.57.04-1ubuntu1\n  Version table:\n"};
    });
    const auto bad = find(run.step("driver").verify(run.ctx(), host.sys));
    EXPECT_FALSE(bad.passed);
    EXPECT_EQ(bad.found, "would move to another branch: nvidia-open 610.57.04-1ubuntu1");
    EXPECT_TRUE(contains(bad.fix, "apt install --reinstall nvidia-driver-pinning-595")) << bad.fix;
}

// e2e 46 found it: on 580 (holds) fabric manager, NSCQ and IMEX arrive in the driver's batch
// and are held by the fabric-manager step, which configures after the driver step; the driver's
// check, run first, counted them and failed every fresh NVSwitch host. The driver's lock judges
// the driver's closure; fabric manager's is the fabric-manager step's own check.
TEST_F(DriverSchemes, FabricManagersLockIsTheFabricManagerStepsCheckNotTheDrivers) {
    TestHost host({.nvswitches = 6, .os = "ubuntu-24.04"});
    host.set_package("nvidia-open-580", "580.159.04-1ubuntu1", "hold ok installed");
    host.set_package("nvidia-fabricmanager", "580.159.04-1ubuntu1", "install ok installed");
    host.sys.on_command_prefix({"apt-cache", "policy"}, [](const Command&) {
        return CommandResult{.out = "nvidia-open-580:\n  Installed: 580.159.04-1ubuntu1\n"
                                    "  Candidate: 580.159.04-1ubuntu1\n  Version table:\n"
                                    "nvidia-fabricmanager:\n  Installed: 580.159.04-1ubuntu1\n"
                                    "  Candidate: 620.70.06-1ubuntu1\n  Version table:\n"};
    });
    const auto p = ubuntu("580", "open");
    StepRunner run(host, p);
    const auto find = [](const std::vector<CheckOutcome>& all, const std::string& id) {
        const auto it =
            std::find_if(all.begin(), all.end(), [&](const CheckOutcome& c) { return c.id == id; });
        EXPECT_NE(it, all.end()) << id;
        return it == all.end() ? CheckOutcome{} : *it;
    };
    const auto driver = run.step("driver").verify(run.ctx(), host.sys);
    const auto lock = find(driver, "driver.branch-lock");
    EXPECT_TRUE(lock.passed) << lock.found;
    EXPECT_FALSE(contains(lock.command, "nvidia-fabricmanager")) << lock.command;
    const auto fm =
        find(run.step("fabric-manager").verify(run.ctx(), host.sys), "fabric-manager.branch-lock");
    EXPECT_FALSE(fm.passed);
    EXPECT_EQ(fm.found, "would move to another branch: nvidia-fabricmanager 620.70.06-1ubuntu1");
    // Held (what the step's configure does), its candidate is never installed.
    host.set_package("nvidia-fabricmanager", "580.159.04-1ubuntu1", "hold ok installed");
    EXPECT_TRUE(
        find(run.step("fabric-manager").verify(run.ctx(), host.sys), "fabric-manager.branch-lock")
            .passed);
}

// ---- the tar reader, on what dpkg-deb really prints ----

TEST(DebFile, ReadsThePreferencesFileOfARealPinningPackage) {
    const auto tar =
        read_fixture("engine/ubuntu2404/nvidia-driver-pinning-610_610-2ubuntu1_all.data.tar");
    const auto files = tar_files_under(tar, "etc/apt/preferences.d/");
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files.at("etc/apt/preferences.d/nvidia-driver-pin"),
              "Package: cuda-drivers* src:nvidia-open:any\nPin: version 610.*\n"
              "Pin-Priority: 1000\n");
    EXPECT_TRUE(tar_files_under(tar, "usr/").empty());
}

TEST(DebFile, RefusesStreamsCutShortOrNotTar) {
    const auto tar =
        read_fixture("engine/ubuntu2404/nvidia-driver-pinning-610_610-2ubuntu1_all.data.tar");
    EXPECT_THROW((void)tar_files_under(tar.substr(0, 700), ""), Error);
    EXPECT_THROW((void)tar_files_under(tar.substr(0, 300), ""), Error);
    auto bad = tar;
    bad[0] = 'X'; // the first header's checksum no longer adds up
    EXPECT_THROW((void)tar_files_under(bad, ""), Error);
    EXPECT_THROW((void)tar_files_under("", ""), Error);
}

/// A ustar header for `name` with `size` bytes of data following, typeflag `type`.
std::string tar_header(const std::string& name, std::size_t size, char type) {
    std::string h(512, '\0');
    h.replace(0, std::min<std::size_t>(name.size(), 100), name.substr(0, 100));
    h.replace(100, 7, "0000644");
    h.replace(124, 11, fmt::format("{:011o}", size));
    h[156] = type;
    h.replace(257, 5, "ustar");
    h.replace(148, 8, "        ");
    unsigned sum = 0;
    for (const char c : h) {
        sum += static_cast<unsigned char>(c);
    }
    h.replace(148, 7, fmt::format("{:06o}", sum) + std::string(1, '\0'));
    return h;
}

std::string padded(std::string data) {
    data.resize((data.size() + 511) / 512 * 512, '\0');
    return data;
}

TEST(DebFile, LongNamesFromGnuAndPaxRecords) {
    const std::string long_name = "./etc/apt/preferences.d/" + std::string(120, 'x');
    std::string tar = tar_header("././@LongLink", long_name.size() + 1, 'L') +
                      padded(long_name + '\0') + tar_header("short", 3, '0') + padded("one");
    const std::string pax_name = "etc/apt/preferences.d/pax-" + std::string(110, 'y');
    const auto record = fmt::format("path={}\n", pax_name);
    const auto line = fmt::format("{} {}", record.size() + 4, record);
    tar += tar_header("PaxHeader", line.size(), 'x') + padded(line) + tar_header("s", 3, '0') +
           padded("two") + std::string(1024, '\0');
    const auto files = tar_files_under(tar, "etc/apt/preferences.d/");
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files.at(long_name.substr(2)), "one");
    EXPECT_EQ(files.at(pax_name), "two");
}

} // namespace
