#include <gpuprov/version.hpp>
#include <gtest/gtest.h>

using gpuprov::compare_deb_versions;
using gpuprov::DottedVersion;

TEST(DottedVersion, ParsesAndCompares) {
    const auto a = DottedVersion::parse("12.4");
    const auto b = DottedVersion::parse("12.4.0");
    const auto c = DottedVersion::parse("12.10");
    ASSERT_TRUE(a && b && c);
    EXPECT_TRUE(*a == *b);
    EXPECT_TRUE(*a < *c); // numeric, not lexical
    EXPECT_EQ(c->str(), "12.10");
    EXPECT_TRUE(DottedVersion::parse("550.54.14")->has_prefix(*DottedVersion::parse("550")));
    EXPECT_FALSE(DottedVersion::parse("12.4a"));
    EXPECT_FALSE(DottedVersion::parse(""));
    EXPECT_FALSE(DottedVersion::parse("1..2"));
}

TEST(DottedVersion, PrintsNvidiaDriverVersionsAsWritten) {
    // NVIDIA writes 580.65.06; printing 580.65.6 names a driver that does not exist.
    const auto d = DottedVersion::parse("580.65.06");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->str(), "580.65.06");
    EXPECT_EQ(d->parts[2], 6);
    EXPECT_TRUE(*d == *DottedVersion::parse("580.65.6")); // zeros never change the order
    EXPECT_TRUE(*DottedVersion::parse("580.65.06") < *DottedVersion::parse("580.65.10"));
    EXPECT_EQ(DottedVersion::parse("450.80.02")->str(), "450.80.02");
    const DottedVersion built{{12, 4}};
    EXPECT_EQ(built.str(), "12.4");
}

TEST(DebVersion, FollowsDpkgOrdering) {
    EXPECT_LT(compare_deb_versions("8.9.7.29-1+cuda12.2", "9.1.0.70-1"), 0);
    EXPECT_GT(compare_deb_versions("1:1.0", "2.0"), 0);       // epoch wins
    EXPECT_LT(compare_deb_versions("1.0~rc1-1", "1.0-1"), 0); // tilde sorts first
    EXPECT_EQ(compare_deb_versions("550.54.15-1", "550.54.15-1"), 0);
    EXPECT_LT(compare_deb_versions("550.54.14-1", "550.54.15-1"), 0);
    EXPECT_LT(compare_deb_versions("12.4.1-1", "12.10.0-1"), 0);
    EXPECT_GT(compare_deb_versions("2.21.5-1+cuda12.5", "2.21.5-1+cuda12.4"), 0);
}

#include <gpuprov/diff.hpp>

TEST(UnifiedDiff, NewFileAndChangedLine) {
    EXPECT_EQ(gpuprov::unified_diff("/etc/x.conf", std::nullopt, "a\nb\n"),
              "--- /dev/null\n+++ b/etc/x.conf\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    EXPECT_EQ(gpuprov::unified_diff("/etc/x.conf", std::string("a\nb\nc\n"), "a\nB\nc\n"),
              "--- a/etc/x.conf\n+++ b/etc/x.conf\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    EXPECT_EQ(gpuprov::unified_diff("/etc/x.conf", std::string("same\n"), "same\n"), "");
}
