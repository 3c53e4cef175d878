// The nouveau step as the competing-kernel-drivers step (issue 21): nova_core and nova_drm are
// blacklisted beside nouveau where a kernel has them (config or modules), and the initramfs of
// every installed kernel is regenerated and judged, on Debian/Ubuntu (update-initramfs -k all)
// and EL (dracut per kernel).
#include "find_check.hpp"
#include "host_builder.hpp"

#include <gpuprov/checks.hpp>
#include <gpuprov/error.hpp>
#include <set>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kNovaBlacklist = kBlacklist + "blacklist nova_core\nblacklist nova_drm\n";
const std::string kNewer = "6.1.0-28-amd64"; // a second installed kernel on the Debian host

/// Ubuntu 26.04's shape: its 7.0 kernel config enables nova_core, which holds the GPUs.
void make_ubuntu_2604_nova(TestHost& host) {
    host.sys.add_file("/boot/config-" + kKernel,
                      "CONFIG_BLK_DEV_INITRD=y\nCONFIG_NOVA_CORE=m\nCONFIG_DRM_NOVA=m\n");
    host.sys.add_file("/sys/module/nova_core/refcnt", "1\n");
    for (const auto& addr : host.sys.list_dir("/sys/bus/pci/devices")) {
        const auto dir = "/sys/bus/pci/devices/" + addr;
        if (host.sys.file(dir + "/vendor") == "0x10de\n" &&
            host.sys.file(dir + "/class") == "0x030200\n") {
            host.sys.add_link(dir + "/driver", "../../../bus/pci/drivers/NovaCore");
        }
    }
}

struct CompetingDrivers : ::testing::Test {
    Profile profile = load_test_profile();
};

TEST_F(CompetingDrivers, Ubuntu2604NovaCoreIsBlacklistedWithNouveau) {
    TestHost host({.os = "ubuntu-26.04"});
    make_ubuntu_2604_nova(host);
    StepRunner run(host, profile);
    EXPECT_EQ(run.facts().os.repo_slug, "ubuntu2604");
    const auto r = run.check("nouveau");
    ASSERT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kBlacklistPath});
    EXPECT_EQ(targets(r, Change::Kind::command), Strings{"update-initramfs -u -k all"});
    ASSERT_EQ(run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare),
              StepStatus::done);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kNovaBlacklist);
    EXPECT_EQ(run.check("nouveau").status, StepStatus::satisfied);
    for (const auto& c : run.step("nouveau").verify(run.ctx(), host.sys)) {
        EXPECT_TRUE(c.passed) << c.id << ": " << c.found;
    }
}

TEST_F(CompetingDrivers, TheKernelDriverNamesWhereTheModuleIsBound) {
    // A GPU bound to nova_core (its sysfs driver link) is proof enough that nova_core is loaded.
    TestHost host({.os = "ubuntu-26.04"});
    host.sys.add_link("/sys/bus/pci/devices/0000:07:00.0/driver",
                      "../../../bus/pci/drivers/nova_core");
    StepRunner run(host, profile);
    EXPECT_TRUE(run.facts().nova_core_loaded);
    EXPECT_EQ(competing_driver_loaded(run.facts()), "nova_core");
    const auto r = run.check("nouveau");
    ASSERT_EQ(r.status, StepStatus::pending);
    bool noted = false;
    for (const auto& c : r.changes) {
        noted = noted || contains(c.detail, "nova_core is loaded now");
    }
    EXPECT_TRUE(noted);
    (void)run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kNovaBlacklist);
}

TEST_F(CompetingDrivers, NovaFoundInTheModulesListAlone) {
    TestHost host;
    host.sys.add_file("/lib/modules/" + kKernel + "/modules.dep",
                      "kernel/drivers/gpu/nova-core/nova_core.ko.zst:\n");
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    (void)run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kNovaBlacklist);
}

TEST_F(CompetingDrivers, AKernelWithoutNovaKeepsTheNouveauOnlyFile) {
    TestHost host;
    host.sys.add_file("/boot/config-" + kKernel,
                      "CONFIG_DRM_NOUVEAU=m\n# CONFIG_NOVA_CORE is not set\nCONFIG_NOVA_COREX=m\n");
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    (void)run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kBlacklist);
}

TEST_F(CompetingDrivers, ANouveauOnlyBlacklistIsRedoneWhenTheKernelGainsNova) {
    // Provisioned before nova existed; the kernel now has it: the file no longer matches.
    TestHost host({.os = "ubuntu-26.04"});
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.sys.add_file("/boot/initrd.img-" + kKernel, "regenerated after the blacklist\n");
    make_ubuntu_2604_nova(host);
    StepRunner run(host, profile);
    const auto v = run.step("nouveau").verify(run.ctx(), host.sys);
    const auto* black = gpuprov::testing::find_check(v, "nouveau.blacklisted");
    ASSERT_NE(black, nullptr);
    EXPECT_FALSE(black->passed);
    EXPECT_EQ(black->found, "not blacklisted: nova_core, nova_drm");
    EXPECT_EQ(run.check("nouveau").status, StepStatus::pending);
}

TEST_F(CompetingDrivers, EveryInstalledDebianKernelsImageIsJudged) {
    TestHost host;
    host.sys.add_file("/var/lib/initramfs-tools/" + kNewer, "");
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.sys.add_file("/boot/initrd.img-" + kKernel, "regenerated after the blacklist\n");
    // The newer kernel's image predates the blacklist: the next boot may pick it.
    host.sys.add_file("/boot/initrd.img-" + kNewer, "old\n");
    host.sys.set_mtime("/boot/initrd.img-" + kNewer, std::chrono::system_clock::time_point{});
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(contains(r.reason, "/boot/initrd.img-" + kNewer)) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::command), Strings{"update-initramfs -u -k all"});
    const auto v = run.step("nouveau").verify(run.ctx(), host.sys);
    const auto* ir = gpuprov::testing::find_check(v, "nouveau.initramfs");
    ASSERT_NE(ir, nullptr);
    EXPECT_FALSE(ir->passed);
    EXPECT_EQ(ir->found, "/boot/initrd.img-" + kNewer + " older (or missing)");
    EXPECT_EQ(ir->fix, "update-initramfs -u -k all");
}

// ---- EL: dracut per installed kernel ----

const std::string kElOld = "6.12.0-55.9.1.el10_0.x86_64";  // the running kernel (hosts/rocky-10)
const std::string kElNew = "6.12.0-55.27.1.el10_0.x86_64"; // sorts first (names, not versions)

/// A Rocky 10 host with two installed kernels (kernel-core's /lib/modules/<k>/vmlinuz), whose
/// dracut writes the image it is asked for and fails for the kernels in `failing`.
struct ElHost {
    FakeSystem sys;
    std::vector<Strings> dracut;
    std::set<std::string> failing;
    ElHost() {
        sys.load_tree("hosts/rocky-10");
        for (const auto& k : {kElOld, kElNew}) {
            sys.add_file("/lib/modules/" + k + "/vmlinuz", "kernel\n");
            sys.add_file("/boot/initramfs-" + k + ".img", "before gpuprov\n");
        }
        // A directory DKMS left for a removed kernel: no vmlinuz, so not a kernel to boot.
        sys.add_file("/lib/modules/6.12.0-1.el10.x86_64/extra/nvidia.ko", "");
        sys.on_command_prefix({"dracut"}, [this](const Command& c) {
            dracut.push_back(c.argv);
            if (failing.count(c.argv.back()) != 0) {
                return CommandResult{.exit_code = 1, .err = "dracut: no space left\n"};
            }
            sys.add_file(c.argv[2], "initramfs with modprobe.d\n");
            return CommandResult{};
        });
    }
};

TEST_F(CompetingDrivers, ElRegeneratesEveryInstalledKernelsImage) {
    ElHost host;
    StepRunner run(host.sys, profile);
    const auto r = run.check("nouveau");
    ASSERT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::command),
              (Strings{"dracut --force /boot/initramfs-" + kElNew + ".img " + kElNew,
                       "dracut --force /boot/initramfs-" + kElOld + ".img " + kElOld}));
    ASSERT_EQ(run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare),
              StepStatus::done);
    EXPECT_EQ(host.dracut.size(), 2U);
    EXPECT_EQ(run.check("nouveau").status, StepStatus::satisfied);
    const auto v = run.step("nouveau").verify(run.ctx(), host.sys);
    const auto* ir = gpuprov::testing::find_check(v, "nouveau.initramfs");
    ASSERT_NE(ir, nullptr);
    EXPECT_TRUE(ir->passed) << ir->found;
    EXPECT_EQ(ir->command,
              "/boot/initramfs-" + kElNew + ".img, /boot/initramfs-" + kElOld + ".img");
}

TEST_F(CompetingDrivers, ElRegeneratesOnlyTheStaleImage) {
    ElHost host;
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.sys.add_file("/boot/initramfs-" + kElOld + ".img", "regenerated after\n");
    host.sys.set_mtime("/boot/initramfs-" + kElNew + ".img",
                       std::chrono::system_clock::time_point{});
    StepRunner run(host.sys, profile);
    const auto r = run.check("nouveau");
    ASSERT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{"dracut --force /boot/initramfs-" + kElNew + ".img " + kElNew});
    (void)run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare);
    EXPECT_EQ(host.dracut, (std::vector<Strings>{{"dracut", "--force",
                                                  "/boot/initramfs-" + kElNew + ".img", kElNew}}));
    EXPECT_EQ(run.check("nouveau").status, StepStatus::satisfied);
}

TEST_F(CompetingDrivers, ElUndoesTheBlacklistWhenOneKernelsDracutFails) {
    ElHost host;
    host.failing.insert(kElNew);
    StepRunner run(host.sys, profile);
    const auto r = run.check("nouveau");
    EXPECT_THROW(run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare),
                 CommandError);
    EXPECT_FALSE(host.sys.exists(kBlacklistPath));
    // The next run plans both again.
    EXPECT_EQ(targets(run.check("nouveau"), Change::Kind::command).size(), 2U);
}

TEST_F(CompetingDrivers, DriverWaitsForTheRebootWhileNovaCoreHoldsTheGpus) {
    TestHost host; // the test profile's repositories are served for Debian 12

    make_ubuntu_2604_nova(host);
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    bool noted = false;
    for (const auto& c : r.changes) {
        noted = noted || contains(c.detail, "nova_core is loaded: the driver loads after a reboot");
    }
    EXPECT_TRUE(noted) << r.reason;
}

} // namespace
