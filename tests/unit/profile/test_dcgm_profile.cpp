// monitoring.dcgm / monitoring.dcgm_exporter (docs/dcgm.md): booleans, the exporter only with
// DCGM, errors at the value's file:line:col.
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;

TEST(DcgmProfile, OffUnlessAsked) {
    const auto p = load("name: x\nmonitoring: {}\n");
    ASSERT_TRUE(p.monitoring);
    EXPECT_FALSE(p.monitoring->dcgm);
    EXPECT_FALSE(p.monitoring->dcgm_exporter);
}

TEST(DcgmProfile, DcgmWithoutTheExporter) {
    const auto p = load("name: x\nmonitoring: {dcgm: true, dcgm_exporter: false}\n");
    ASSERT_TRUE(p.monitoring);
    EXPECT_TRUE(p.monitoring->dcgm);
    EXPECT_FALSE(p.monitoring->dcgm_exporter);
}

TEST(DcgmProfile, ExporterWithDcgm) {
    const auto p = load("name: x\nmonitoring:\n  dcgm: true\n  dcgm_exporter: true\n");
    EXPECT_TRUE(p.monitoring->dcgm_exporter);
}

TEST(DcgmProfile, ExporterWithoutDcgmIsRefusedAtItsValue) {
    const auto e = load_error("name: x\nmonitoring:\n  dcgm_exporter: true\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.col(), 18);
    EXPECT_TRUE(contains(e.message(), "needs 'monitoring.dcgm: true'")) << e.what();
}

TEST(DcgmProfile, NotABooleanIsRefused) {
    const auto e = load_error("name: x\nmonitoring: {dcgm: yes-please}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "monitoring.dcgm")) << e.what();
}

TEST(DcgmProfile, MisspeltKeyNamesTheRightOne) {
    const auto e = load_error("name: x\nmonitoring: {dcmg: true}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "dcgm")) << e.what();
}

} // namespace
} // namespace gpuprov
