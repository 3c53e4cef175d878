// verify's InfiniBand checks: ports judged by link layer, state and rate; the verbs userspace;
// GPUDirect RDMA by mode; /etc/nccl.conf. Port values are the kernel's own texts (fixtures
// README: the procfs tree and a public ibstatus session).
#include "nvidia_test_util.hpp"

#include <optional>

namespace gpuprov {
namespace {

using testing::answer_failed;
using testing::answer_missing;
using testing::answer_ok;
using testing::contains;
using testing::FakeSystem;
using testing::read_fixture;

IbPort port(int n, std::string state, std::string rate, std::string layer = "InfiniBand") {
    return IbPort{.number = n,
                  .state = std::move(state),
                  .phys_state = "LinkUp",
                  .rate = rate,
                  .rate_gbps = parse_ib_rate_gbps(rate),
                  .link_layer = std::move(layer)};
}

struct IbChecks : ::testing::Test {
    FakeSystem sys;
    Profile profile = testing::driver_profile("550", "12.4");
    HostFacts facts = testing::debian_facts("6.1.0-28-amd64");

    IbChecks() {
        profile.driver->flavor = "open";
        profile.infiniband = InfinibandSpec{.min_rate_gbps = 200};
        facts.driver = LoadedDriver{.version = "550.90.07", .open_module = true};
        facts.ib_hca_pci = {"0000:0c:00.0", "0000:8a:00.0"};
        // An HDR InfiniBand port and a RoCE port for storage on a second ConnectX.
        facts.infiniband = {
            IbDevice{"mlx5_0", "0000:0c:00.0", {port(1, "ACTIVE", "200 Gb/sec (4X HDR)")}},
            IbDevice{
                "mlx5_1", "0000:8a:00.0", {port(1, "ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet")}},
        };
        sys.on_command({"ibv_devinfo", "-l"}, answer_ok("2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n"));
        sys.add_file("/etc/nccl.conf", "# Managed by gpuprov\nNCCL_IB_HCA==mlx5_0:1\n");
    }

    std::vector<CheckOutcome> run() { return check_infiniband({profile, facts, matrix()}, sys); }
    static const Matrix& matrix() { return Matrix::builtin(); }
};

const CheckOutcome* find(const std::vector<CheckOutcome>& all, const std::string& id) {
    for (const auto& c : all) {
        if (c.id == id) {
            return &c;
        }
    }
    return nullptr;
}

// Over a temporary list (a call's result) the outcome is copied out: a pointer into it would
// dangle at the end of the statement (ASan caught `const auto* c = find(run(...), id)`).
std::optional<CheckOutcome> find(std::vector<CheckOutcome>&& all, const std::string& id) {
    const auto* c = find(static_cast<const std::vector<CheckOutcome>&>(all), id);
    return c != nullptr ? std::optional<CheckOutcome>(*c) : std::nullopt;
}

TEST_F(IbChecks, AHealthyHdrHostPassesAndTheRocePortIsNotNcclsPort) {
    const auto all = run();
    for (const auto& c : all) {
        EXPECT_TRUE(c.passed) << c.id << ": " << c.found;
        EXPECT_EQ(c.step, "infiniband");
    }
    ASSERT_NE(find(all, "infiniband.dmabuf"), nullptr); // open module on 6.1: DMA-BUF
    EXPECT_EQ(find(all, "infiniband.peermem"), nullptr);
    EXPECT_EQ(find(all, "infiniband.nccl-conf")->expected, "NCCL_IB_HCA==mlx5_0:1");
    EXPECT_EQ(infiniband_ports_for_nccl(facts), std::vector<std::string>{"mlx5_0:1"});
}

TEST_F(IbChecks, APortWithoutASubnetManagerFailsWithTheFix) {
    facts.infiniband[0].ports[0].state = "INIT";
    const auto all = run();
    const auto* ports = find(all, "infiniband.ports");
    ASSERT_NE(ports, nullptr);
    EXPECT_FALSE(ports->passed);
    EXPECT_EQ(ports->found, "0 ACTIVE; not ACTIVE: mlx5_0:1 INIT (LinkUp)");
    EXPECT_TRUE(contains(ports->excerpt, "mlx5_0:1 INIT")) << ports->excerpt;
    EXPECT_TRUE(contains(ports->fix, "mlx5_0:1: link up but no subnet manager")) << ports->fix;
    // No ACTIVE port: the rate cannot be judged as met, and says why rather than "at or above".
    const auto* rate = find(all, "infiniband.rate");
    EXPECT_FALSE(rate->passed);
    EXPECT_EQ(rate->found, "no ACTIVE InfiniBand port to measure");
    EXPECT_TRUE(contains(rate->fix, "infiniband.ports")) << rate->fix;
}

TEST_F(IbChecks, APulledCableNamesThePortItsStatesAndTheCause) {
    // The kernel's texts for a port with no link: "1: DOWN", "2: Polling", reported at SDR.
    facts.infiniband[0].ports[0] = port(1, parse_ib_state("1: DOWN"), "10 Gb/sec (4X SDR)");
    facts.infiniband[0].ports[0].phys_state = parse_ib_state("2: Polling");
    const auto down = run();
    const auto* ports = find(down, "infiniband.ports");
    ASSERT_NE(ports, nullptr);
    EXPECT_FALSE(ports->passed);
    EXPECT_EQ(ports->found, "0 ACTIVE; not ACTIVE: mlx5_0:1 DOWN (Polling)");
    EXPECT_EQ(ports->fix, "mlx5_0:1: no link: check the cable and the switch port; NCCL uses a "
                          "port only once it reads ACTIVE");
    // The RoCE port of mlx5_1 is ACTIVE but never counts for InfiniBand.
    profile.infiniband->min_active_ports = 2;
    facts.infiniband[0].ports[0] = port(1, "ACTIVE", "200 Gb/sec (4X HDR)");
    const auto two = run();
    const auto* few = find(two, "infiniband.ports");
    EXPECT_FALSE(few->passed);
    EXPECT_EQ(few->found, "1 ACTIVE");
    EXPECT_TRUE(contains(few->fix, "RoCE ports do not count")) << few->fix;
}

TEST_F(IbChecks, APortThatTrainedBelowTheMinimumFails) {
    facts.infiniband[0].ports[0] = port(1, "ACTIVE", "25 Gb/sec (1X EDR)");
    const auto all = run();
    const auto* rate = find(all, "infiniband.rate");
    ASSERT_NE(rate, nullptr);
    EXPECT_FALSE(rate->passed);
    EXPECT_EQ(rate->found, "slower: mlx5_0:1 25 Gb/sec (1X EDR)");
}

TEST_F(IbChecks, AnHcaWithoutAnRdmaDeviceIsNamed) {
    facts.ib_hca_pci.push_back("0000:ca:00.0");
    const auto all = run();
    const auto* dev = find(all, "infiniband.devices");
    EXPECT_FALSE(dev->passed);
    EXPECT_TRUE(contains(dev->found, "no RDMA device for 0000:ca:00.0")) << dev->found;
    EXPECT_TRUE(contains(dev->fix, "mlx5_ib"));
}

TEST_F(IbChecks, VerbsMustListEveryDevice) {
    sys.on_command({"ibv_devinfo", "-l"}, answer_ok(read_fixture("cmd/ibv_devinfo/list-0.txt")));
    const auto none = run();
    const auto* verbs = find(none, "infiniband.verbs");
    EXPECT_FALSE(verbs->passed);
    EXPECT_EQ(verbs->found, "no devices; missing mlx5_0, mlx5_1");
    // The devices exist, so what is missing is a provider, not only the tools.
    EXPECT_TRUE(contains(verbs->fix, "verbs providers")) << verbs->fix;
    sys.on_command({"ibv_devinfo", "-l"}, answer_missing());
    EXPECT_FALSE(find(run(), "infiniband.verbs")->passed);
    sys.on_command({"ibv_devinfo", "-l"}, answer_ok("1 HCA found:\n\tmlx5_0\n"));
    const auto one = run();
    const auto* partial = find(one, "infiniband.verbs");
    EXPECT_FALSE(partial->passed);
    EXPECT_TRUE(contains(partial->found, "missing mlx5_1")) << partial->found;
}

TEST(IbDevinfoList, RealOutputs) {
    EXPECT_EQ(parse_ibv_devinfo_list(read_fixture("cmd/ibv_devinfo/list-8-ionic.txt")).size(), 8u);
    EXPECT_EQ(parse_ibv_devinfo_list(read_fixture("cmd/ibv_devinfo/list-8-ionic.txt"))[7],
              "ionic_7");
    EXPECT_TRUE(parse_ibv_devinfo_list(read_fixture("cmd/ibv_devinfo/list-0.txt")).empty());
    EXPECT_TRUE(parse_ibv_devinfo_list("libibverbs: Warning: no userspace device-specific driver "
                                       "found for /sys/class/infiniband_verbs/uverbs0\n")
                    .empty());
}

TEST_F(IbChecks, PeermemWithTheProprietaryModule) {
    profile.driver->flavor = "proprietary";
    facts.driver->open_module = false;
    const auto all = run();
    const auto* peermem = find(all, "infiniband.peermem");
    ASSERT_NE(peermem, nullptr);
    EXPECT_FALSE(peermem->passed);
    EXPECT_TRUE(contains(peermem->fix, "ib_register_peer_memory_client")) << peermem->fix;
    sys.add_dir("/sys/module/nvidia_peermem");
    EXPECT_TRUE(find(run(), "infiniband.peermem")->passed);
}

TEST_F(IbChecks, GpuDirectModeFollowsFlavorAndKernel) {
    EXPECT_EQ(gpudirect_mode(profile, facts), GpuDirectMode::dmabuf);
    facts.kernel = "5.4.0-169-generic"; // older than DMA-BUF's 5.12
    EXPECT_EQ(gpudirect_mode(profile, facts), GpuDirectMode::peermem);
    facts.kernel = "5.15.0-91-generic";
    profile.driver->flavor = "proprietary";
    EXPECT_EQ(gpudirect_mode(profile, facts), GpuDirectMode::peermem);
    profile.infiniband->gpudirect_rdma = GpuDirectMode::off;
    EXPECT_EQ(gpudirect_mode(profile, facts), GpuDirectMode::off);
    // dmabuf asked for on a proprietary module: the check says why it cannot work.
    profile.infiniband->gpudirect_rdma = GpuDirectMode::dmabuf;
    facts.driver->open_module = false;
    EXPECT_FALSE(find(run(), "infiniband.dmabuf")->passed);
}

TEST_F(IbChecks, NcclConfMustNameTheInfinibandPorts) {
    sys.add_file("/etc/nccl.conf", "NCCL_IB_HCA=mlx5\n");
    const auto all = run();
    const auto* conf = find(all, "infiniband.nccl-conf");
    EXPECT_FALSE(conf->passed);
    EXPECT_EQ(conf->found, "NCCL_IB_HCA=mlx5");
}

TEST_F(IbChecks, NoHcaFailsOnlyWhenRequired) {
    facts.ib_hca_pci.clear();
    facts.infiniband.clear();
    auto all = run();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].id, "infiniband.hca");
    EXPECT_FALSE(all[0].passed);
    profile.infiniband->required = false;
    EXPECT_TRUE(run().empty());
    profile.infiniband.reset();
    EXPECT_TRUE(run().empty());
}

} // namespace
} // namespace gpuprov
