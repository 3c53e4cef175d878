// The `facts --json` document: key names and null conventions are a contract (docs/facts.md).
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpuprov {
namespace {

using nlohmann::json;
using testing::FakeSystem;

json host_json(const std::string& name) {
    FakeSystem sys;
    sys.load_tree("hosts/" + name);
    sys.set_disk({1000, 400});
    return facts_to_json(detect_facts(sys, Matrix::builtin()));
}

TEST(FactsJson, TopLevelKeysAreStable) {
    const auto doc = host_json("debian-12");
    std::vector<std::string> keys;
    for (const auto& [key, _] : doc.items()) {
        keys.push_back(key);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"arch",
                                              "cuda",
                                              "cuda_default_link",
                                              "cudnn",
                                              "driver",
                                              "el",
                                              "gpus",
                                              "infiniband",
                                              "kernel",
                                              "kernel_headers",
                                              "kernels",
                                              "memory_bytes",
                                              "nouveau_loaded",
                                              "nova_core_loaded",
                                              "nvlink5_switch_count",
                                              "nvswitch_count",
                                              "os",
                                              "packages",
                                              "pkg_arch",
                                              "repo_arch",
                                              "root_disk",
                                              "runfile_driver",
                                              "secure_boot"}));
}

TEST(FactsJson, OsBlock) {
    const auto os = host_json("rocky-9").at("os");
    EXPECT_EQ(os.at("id"), "rocky");
    EXPECT_EQ(os.at("id_like"), json({"rhel", "centos", "fedora"}));
    EXPECT_EQ(os.at("version_id"), "9.3");
    EXPECT_TRUE(os.at("codename").is_null());
    EXPECT_EQ(os.at("pretty_name"), "Rocky Linux 9.3 (Blue Onyx)");
    EXPECT_EQ(os.at("family"), "rhel");
    EXPECT_EQ(os.at("repo_slug"), "rhel9");
    EXPECT_EQ(os.at("profile_os"), "rhel-9");
}

TEST(FactsJson, UnsupportedOsHasNullSlug) {
    EXPECT_TRUE(host_json("debian-11").at("os").at("repo_slug").is_null());
}

TEST(FactsJson, GpuEntries) {
    const auto doc = host_json("ubuntu-24.04");
    ASSERT_EQ(doc.at("gpus").size(), 8u);
    const auto& gpu = doc.at("gpus").at(0);
    EXPECT_EQ(gpu.at("address"), "0000:1b:00.0");
    EXPECT_EQ(gpu.at("vendor_id"), "0x10de");
    EXPECT_EQ(gpu.at("device_id"), "0x2330");
    EXPECT_EQ(gpu.at("class"), "0x030200");
    EXPECT_EQ(gpu.at("driver"), "nvidia");
    EXPECT_EQ(gpu.at("model"), "H100");
    EXPECT_EQ(gpu.at("architecture"), "hopper");
    EXPECT_EQ(gpu.at("compute_capability"), "9.0");
    EXPECT_TRUE(gpu.at("memory_gib").is_number_integer());
    EXPECT_EQ(gpu.at("nvswitch_system"), true);
    EXPECT_TRUE(gpu.at("name").is_string());
    EXPECT_EQ(doc.at("nvswitch_count"), 4);
    EXPECT_EQ(doc.at("nvlink5_switch_count"), 0);
}

TEST(FactsJson, DriverCudaCudnn) {
    const auto doc = host_json("ubuntu-20.04");
    EXPECT_EQ(doc.at("driver"), json({{"version", "515.76"}, {"open_module", false}}));
    EXPECT_EQ(doc.at("cuda").at(1),
              json({{"path", "/usr/local/cuda-11.8"}, {"version", "11.8.20220929"}}));
    EXPECT_EQ(doc.at("cuda_default_link"), "/usr/local/cuda-11.8");
    EXPECT_EQ(doc.at("cudnn").at("version"), "8.9.4");
    EXPECT_EQ(doc.at("cudnn").at("major"), 8);
    EXPECT_EQ(doc.at("cudnn").at("header"), "/usr/include/cudnn_version.h");
    EXPECT_EQ(doc.at("packages").at("libcudnn8"), "8.9.4.25-1+cuda11.8");
    EXPECT_TRUE(doc.at("secure_boot").is_null());
    EXPECT_EQ(doc.at("kernel_headers"), true);
    // No kernel list on the host (no initramfs-tools state): the running kernel, its tree there.
    EXPECT_EQ(doc.at("kernels"),
              json::array({{{"release", doc.at("kernel")}, {"build_tree", true}}}));
    EXPECT_EQ(doc.at("memory_bytes"), 62914556ull * 1024);
    EXPECT_EQ(doc.at("root_disk"),
              json({{"path", "/"}, {"total_bytes", 1000}, {"free_bytes", 400}}));
}

TEST(FactsJson, AbsentFactsAreNullOrEmptyNotMadeUp) {
    const auto doc = host_json("debian-12");
    EXPECT_TRUE(doc.at("driver").is_null());
    EXPECT_TRUE(doc.at("cudnn").is_null());
    EXPECT_EQ(doc.at("packages"), json::object());
    EXPECT_EQ(doc.at("secure_boot"), false);
    EXPECT_TRUE(doc.at("gpus").at(0).at("driver").is_null());

    const auto empty = facts_to_json(HostFacts{});
    EXPECT_TRUE(empty.at("memory_bytes").is_null());
    EXPECT_TRUE(empty.at("root_disk").is_null());
    EXPECT_TRUE(empty.at("kernel").is_null());
    EXPECT_TRUE(empty.at("os").at("id").is_null());
    EXPECT_EQ(empty.at("cuda"), json::array());
    EXPECT_TRUE(empty.at("cuda_default_link").is_null());
    EXPECT_EQ(empty.at("os").at("id_like"), json::array());
}

TEST(FactsJson, UnknownGpuHasNullNaming) {
    HostFacts facts;
    PciGpu gpu;
    gpu.address = "0000:01:00.0";
    gpu.vendor_id = 0x10de;
    gpu.device_id = 0x0abc;
    gpu.class_code = 0x030200;
    facts.gpus.push_back(gpu);
    const auto j = facts_to_json(facts).at("gpus").at(0);
    EXPECT_EQ(j.at("device_id"), "0x0abc");
    EXPECT_TRUE(j.at("model").is_null());
    EXPECT_TRUE(j.at("memory_gib").is_null());
    EXPECT_EQ(j.at("nvswitch_system"), false);
}

} // namespace
} // namespace gpuprov
