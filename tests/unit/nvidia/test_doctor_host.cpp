#include "doctor_test_util.hpp"

using namespace gpuprov;
using namespace gpuprov::testing;

TEST(DoctorToolkit, CudaNewerThanDriverSupports) {
    DoctorHost h;
    h.facts.cuda = {{"/usr/local/cuda-12.4", "12.4.1"}};
    h.options.matrix = &Matrix::builtin();
    auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"cuda-newer-than-driver"});
    EXPECT_EQ(findings[0].severity, "warning"); // same major: minor-version compatibility
    EXPECT_NE(findings[0].summary.find("(CUDA 12.2)"), std::string::npos);
    EXPECT_NE(findings[0].fix.find("550.54.14"), std::string::npos);

    h.facts.cuda = {{"/usr/local/cuda-13.0", "13.0.2"}};
    findings = h.run();
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].severity, "error");

    h.facts.cuda = {{"/usr/local/cuda-12.2", "12.2.2"}};
    EXPECT_TRUE(h.run().empty());
}

TEST(DoctorToolkit, NvccNotOnPath) {
    DoctorHost h;
    h.facts.cuda = {{"/usr/local/cuda-12.2", "12.2.2"}};
    h.sys.set_env("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"nvcc-not-on-path"});
    // A profile.d entry fixes it for the next login: not a finding.
    h.sys.add_file("/etc/profile.d/cuda.sh", "export PATH=/usr/local/cuda-12.2/bin:$PATH\n");
    EXPECT_TRUE(h.run().empty());
}

TEST(DoctorToolkit, DefaultLinkAtAnotherToolkit) {
    DoctorHost h;
    auto profile = driver_profile("535", "12.2");
    h.options.profile = &profile;
    h.facts.cuda = {{"/usr/local/cuda-12.2", "12.2.2"}, {"/usr/local/cuda-12.4", "12.4.1"}};
    h.facts.cuda_default_link = "/usr/local/cuda-12.4";
    const auto findings = h.run();
    ASSERT_NE(find_finding(findings, "cuda-link-mismatch"), nullptr);
    EXPECT_NE(find_finding(findings, "cuda-link-mismatch")
                  ->fix.find("update-alternatives --set cuda /usr/local/cuda-12.2"),
              std::string::npos);
    h.facts.cuda_default_link = "cuda-12.2"; // relative link
    EXPECT_EQ(find_finding(h.run(), "cuda-link-mismatch"), nullptr);
}

TEST(DoctorHostChecks, RunfileDriverNextToPackages) {
    DoctorHost h;
    h.sys.add_file("/usr/bin/nvidia-uninstall", "#!/bin/sh\n");
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"runfile-driver-conflict"});
    EXPECT_EQ(findings[0].evidence[0].command, "/usr/bin/nvidia-uninstall");
}

// After `nvidia-installer --uninstall` (driver.replace_runfile) the installer's log stays, beside
// the uninstaller's own: history, not a runfile driver next to the packages.
TEST(DoctorHostChecks, TheInstallerLogAfterAnUninstallIsNoConflict) {
    DoctorHost h;
    h.sys.add_file("/var/log/nvidia-installer.log", "installer version: 550.90.07\n");
    const auto before = h.run();
    ASSERT_EQ(finding_ids(before), std::vector<std::string>{"runfile-driver-conflict"});
    EXPECT_EQ(before[0].evidence[0].command, "/var/log/nvidia-installer.log");
    h.sys.add_file("/var/log/nvidia-uninstall.log", "uninstall done\n");
    EXPECT_TRUE(h.run().empty());
    // A runfile installed again after that uninstall is a conflict again.
    h.sys.add_file("/usr/bin/nvidia-uninstall", "#!/bin/sh\n");
    const auto again = h.run();
    ASSERT_EQ(finding_ids(again), std::vector<std::string>{"runfile-driver-conflict"});
    ASSERT_EQ(again[0].evidence.size(), 3U); // both traces and the packages
    EXPECT_EQ(again[0].evidence[1].command, "/var/log/nvidia-installer.log");
}

TEST(DoctorHostChecks, DpkgAuditProblems) {
    DoctorHost h;
    h.sys.on_command({"dpkg", "--audit"},
                     answer_ok(read_fixture("cmd/dpkg/audit-nvidia-dkms-470.txt")));
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"dpkg-audit"});
    EXPECT_EQ(findings[0].summary, "partially installed packages: nvidia-dkms-470 "
                                   "(half-configured), nvidia-driver-470 (unpacked)");
}

TEST(DoctorHostChecks, NcclWithoutPeerToPeer) {
    DoctorHost h;
    h.facts.packages.emplace("libnccl2", "2.22.3-1+cuda12.2");
    EXPECT_TRUE(h.run().empty()); // NVLink everywhere
    h.sys.on_command({"nvidia-smi", "topo", "-m"},
                     answer_ok(read_fixture("cmd/topo/pcie-4gpu-old-format.txt")));
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"nccl-no-p2p"});
    EXPECT_EQ(findings[0].severity, "warning");
}

TEST(DoctorHostChecks, TemperatureAboveThreshold) {
    DoctorHost h;
    script_query(h.sys, "query-580-a100.csv"); // 41 C and 37 C
    h.options.temperature_alert_c = 40;
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"gpu-temperature"});
    EXPECT_EQ(findings[0].summary, "above the 40 C alert threshold: GPU0 41 C");
    h.options.temperature_alert_c = 85;
    EXPECT_TRUE(h.run().empty());
}

TEST(DoctorHostChecks, RunfileDriverAloneIsExplained) {
    DoctorHost h;
    h.facts.packages.clear();
    h.facts.runfile_driver = RunfileDriver{
        .version = "550.90.07",
        .evidence = {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07 belongs to no "
                     "installed package"}};
    const auto findings = h.run();
    const auto* f = find_finding(findings, "runfile-driver");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, "warning");
    EXPECT_NE(f->summary.find("driver 550.90.07 was installed with NVIDIA's .run installer"),
              std::string::npos);
    ASSERT_EQ(f->evidence.size(), 1U);
    EXPECT_EQ(f->evidence[0].command, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07");
    EXPECT_EQ(f->evidence[0].excerpt, "belongs to no installed package");
    EXPECT_NE(f->fix.find("nvidia-installer --uninstall"), std::string::npos);
    EXPECT_NE(f->fix.find("`driver.replace_runfile: true`"), std::string::npos) << f->fix;
    // With driver packages next to it, the conflict finding speaks instead.
    h.facts.packages = {{"nvidia-driver-535", "535.129.03-0ubuntu1"}};
    EXPECT_EQ(find_finding(h.run(), "runfile-driver"), nullptr);
}

// ---- InfiniBand ----

namespace gpuprov::testing {
namespace {

IbPort ib_port(int n, std::string state, std::string phys) {
    return IbPort{.number = n,
                  .state = std::move(state),
                  .phys_state = std::move(phys),
                  .rate = "200 Gb/sec (4X HDR)",
                  .rate_gbps = 200,
                  .link_layer = "InfiniBand"};
}

TEST(DoctorInfiniband, HealthyFabricWithPeermemSaysNothing) {
    DoctorHost h;
    h.facts.driver = LoadedDriver{.version = "535.129.03", .open_module = false};
    h.facts.ib_hca_pci = {"0000:0c:00.0"};
    h.facts.infiniband = {IbDevice{"mlx5_0", "0000:0c:00.0", {ib_port(1, "ACTIVE", "LinkUp")}}};
    h.facts.peermem_loaded = true;
    EXPECT_TRUE(h.run().empty());
}

TEST(DoctorInfiniband, EachDownPortGetsItsCause) {
    DoctorHost h;
    h.facts.driver = LoadedDriver{.version = "535.129.03", .open_module = false};
    h.facts.peermem_loaded = true;
    h.facts.ib_hca_pci = {"0000:0c:00.0", "0000:8a:00.0", "0000:ca:00.0"};
    h.facts.infiniband = {
        IbDevice{"mlx5_0", "0000:0c:00.0", {ib_port(1, "DOWN", "Polling")}},
        IbDevice{"mlx5_1", "0000:8a:00.0", {ib_port(1, "INIT", "LinkUp")}},
    };
    const auto findings = h.run();
    EXPECT_EQ(finding_ids(findings),
              (std::vector<std::string>{"ib-hca-without-rdma-device", "ib-port-not-active"}));
    EXPECT_TRUE(contains(findings[0].summary, "0000:ca:00.0")) << findings[0].summary;
    const auto& ports = findings[1];
    EXPECT_EQ(ports.severity, "error"); // no ACTIVE port at all
    EXPECT_TRUE(contains(ports.summary, "NET/Socket")) << ports.summary;
    const auto& lines = ports.evidence[0].excerpt;
    EXPECT_TRUE(contains(lines, "mlx5_0:1 DOWN (Polling): no link")) << lines;
    EXPECT_TRUE(contains(lines, "mlx5_1:1 INIT (LinkUp): link up but no subnet manager")) << lines;
}

TEST(DoctorInfiniband, NoGpuDirectWithTheProprietaryModuleAndNoPeermem) {
    DoctorHost h;
    h.facts.driver = LoadedDriver{.version = "535.129.03", .open_module = false};
    h.facts.ib_hca_pci = {"0000:0c:00.0"};
    h.facts.infiniband = {IbDevice{"mlx5_0", "0000:0c:00.0", {ib_port(1, "ACTIVE", "LinkUp")}}};
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"ib-no-gpudirect-rdma"});
    EXPECT_TRUE(contains(findings[0].fix, "DOCA-OFED"));
    // The open module on 5.15 has DMA-BUF: nothing to say.
    h.facts.driver->open_module = true;
    EXPECT_TRUE(h.run().empty());
}

} // namespace
} // namespace gpuprov::testing

TEST(DoctorFabric, FabricManagerRefusingTheLoadedDriverIsNamed) {
    DoctorHost h;
    const std::vector<std::string> journal = {
        "journalctl", "-u", "nvidia-fabricmanager", "-b", "--no-pager", "-n", "200"};
    // No fabric manager package: its journal is not read (an unscripted command fails the test).
    EXPECT_EQ(find_finding(h.run(), "fabric-manager-version-skew"), nullptr);
    h.facts.packages["nvidia-fabricmanager"] = "595.71.05-1ubuntu1";
    // 595 fabric manager beside the 590 module still loaded, and the unit failed.
    h.sys.on_command(journal,
                     answer_ok(read_fixture("cmd/fabricmanager/journal-595-on-590-module.txt")));
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"},
                     answer_failed(3, "failed\n", ""));
    const auto findings = h.run(); // find_finding points into it
    const auto* f = find_finding(findings, "fabric-manager-version-skew");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, "error");
    EXPECT_NE(f->summary.find("fabric manager 595.71.05 refuses the loaded driver 590.48.01"),
              std::string::npos)
        << f->summary;
    ASSERT_FALSE(f->evidence.empty());
    EXPECT_NE(f->evidence[0].excerpt.find("don't match with driver version 590.48.01"),
              std::string::npos);
    EXPECT_NE(f->fix.find("reboot"), std::string::npos);
    // Running since (rebooted into the matching module): the old line is history.
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"}, answer_ok("active\n"));
    EXPECT_EQ(find_finding(h.run(), "fabric-manager-version-skew"), nullptr);
}

TEST(DoctorMig, PendingModeIsReportedWithTheReset) {
    DoctorHost h;
    const std::vector<std::string> argv = {"nvidia-smi",
                                           "--query-gpu=index,mig.mode.current,mig.mode.pending",
                                           "--format=csv,noheader"};
    h.sys.on_command(argv, answer_ok("0, Enabled, Enabled\n1, Disabled, Enabled\n"));
    const auto findings = h.run();
    const auto* f = find_finding(findings, "mig-mode-pending");
    ASSERT_NE(f, nullptr) << ::testing::PrintToString(finding_ids(findings));
    EXPECT_EQ(f->severity, "warning");
    EXPECT_NE(f->summary.find("GPU 1: MIG mode is disabled but enabled is pending"),
              std::string::npos)
        << f->summary;
    EXPECT_NE(f->fix.find("sudo nvidia-smi -i 1 -r"), std::string::npos) << f->fix;
    EXPECT_EQ(std::count_if(findings.begin(), findings.end(),
                            [](const Finding& x) { return x.id == "mig-mode-pending"; }),
              1);
    // Settled modes, and GPUs without MIG ([N/A]), say nothing.
    h.sys.on_command(argv, answer_ok("0, Enabled, Enabled\n1, [N/A], [N/A]\n"));
    EXPECT_EQ(find_finding(h.run(), "mig-mode-pending"), nullptr);
}
