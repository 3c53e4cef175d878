#include <fake_system.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

TEST(SmiBanner, EveryTableLayout) {
    struct Case {
        const char* file;
        const char* driver;
        const char* cuda;
    };
    for (const auto& c : {Case{"banner-450.txt", "450.57", "11.0"},
                          Case{"table-legacy-t4.txt", "535.86.10", "12.2"},
                          Case{"table-535-h100.txt", "535.129.03", "12.2"},
                          Case{"table-580-a100.txt", "580.126.09", "13.0"},
                          Case{"table-610-b200.txt", "610.43.02", "13.3"}}) {
        SCOPED_TRACE(c.file);
        const auto b = parse_smi_banner(read_fixture(std::string("cmd/nvidia-smi/") + c.file));
        ASSERT_TRUE(b.has_value());
        EXPECT_EQ(b->driver_version, c.driver);
        EXPECT_EQ(b->smi_version, c.driver);
        EXPECT_EQ(b->cuda_version, c.cuda);
    }
}

TEST(SmiBanner, ErrorOutputHasNoBanner) {
    EXPECT_FALSE(parse_smi_banner(read_fixture("cmd/nvidia-smi/error-driver-not-loaded.txt")));
}

TEST(SmiFailure, DriverNotLoadedOnOneOrTwoLines) {
    EXPECT_EQ(classify_smi_failure(read_fixture("cmd/nvidia-smi/error-driver-not-loaded.txt")),
              SmiFailure::driver_not_loaded);
    EXPECT_EQ(
        classify_smi_failure(read_fixture("cmd/nvidia-smi/error-driver-not-loaded-2lines.txt")),
        SmiFailure::driver_not_loaded);
}

TEST(SmiFailure, NvmlMismatchAndUnknown) {
    EXPECT_EQ(classify_smi_failure(read_fixture("cmd/nvidia-smi/error-nvml-mismatch.txt")),
              SmiFailure::version_mismatch);
    EXPECT_EQ(classify_smi_failure("No devices were found\n"), SmiFailure::none);
    EXPECT_EQ(classify_smi_failure(read_fixture("cmd/nvidia-smi/table-535-h100.txt")),
              SmiFailure::none);
}
