#include "fake_system.hpp"

#include <gpuprov/repo.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

namespace {

PackageIndex fixture_index() {
    return PackageIndex(parse_packages_file(read_fixture("repo/Packages")));
}

std::vector<std::string> versions_of(const PackageIndex& index, std::string_view name) {
    std::vector<std::string> out;
    for (const auto* r : index.versions(name)) {
        out.push_back(r->version);
    }
    return out;
}

} // namespace

TEST(Packages, ParsesEveryParagraphAndItsFields) {
    const auto records = parse_packages_file(read_fixture("repo/Packages"));
    ASSERT_EQ(records.size(), 12u);
    const auto& first = records[0];
    EXPECT_EQ(first.name, "cuda-toolkit-12-4");
    EXPECT_EQ(first.version, "12.4.1-1");
    EXPECT_EQ(first.architecture, "amd64");
    EXPECT_EQ(first.depends, "cuda-compiler-12-4 (>= 12.4.1), cuda-libraries-12-4 (>= 12.4.1)");
    EXPECT_EQ(first.filename, "./cuda-toolkit-12-4_12.4.1-1_amd64.deb");
    EXPECT_EQ(first.sha256, "1f3a6bd1e0bb5b4c3bbd4a4e1a8e6c0f3f1c2b5e0e1e3c8a9b7d6f5e4d3c2b1a");
    // The multi-line Description (with its " ." paragraph line) must not leak into the next
    // record or end this one early.
    EXPECT_EQ(records[1].name, "cuda-toolkit-12-4");
    EXPECT_EQ(records[1].version, "12.4.0-1");
    EXPECT_EQ(records[5].provides, "libcudnn9");
}

TEST(Packages, ContinuationLinesJoinTheFieldTheyFollow) {
    const auto records = parse_packages_file("Package: a\nVersion: 1\nDepends: b,\n c (>= 2),\n"
                                             "\td\nArchitecture: all\n");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].depends, "b,\nc (>= 2),\nd");
    EXPECT_EQ(records[0].architecture, "all");
}

TEST(Packages, CrlfCaseInsensitiveFieldsAndBlankLinesWithSpaces) {
    const auto records =
        parse_packages_file("package: a\r\nVERSION: 1.0-1\r\n  \r\nPackage: b\r\nVersion: 2\r\n");
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].name, "a");
    EXPECT_EQ(records[0].version, "1.0-1");
    EXPECT_EQ(records[1].name, "b");
}

TEST(Packages, ParagraphWithoutVersionIsSkipped) {
    const auto records = parse_packages_file("Package: a\n\nPackage: b\nVersion: 1\n\n\n");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].name, "b");
}

TEST(PackageIndex, VersionsAreNewestFirstByDpkgRules) {
    const auto index = fixture_index();
    // 9.10 > 9.9 > 9.1: a string sort would put 9.9 first.
    EXPECT_EQ(versions_of(index, "libcudnn9-cuda-12"),
              (std::vector<std::string>{"9.10.2.21-1", "9.9.0.52-1", "9.1.0.70-1"}));
    EXPECT_EQ(index.newest("cuda-drivers-550")->version, "550.127.08-1");
}

TEST(PackageIndex, TwelveTenIsNewerThanTwelveNine) {
    const PackageIndex index({{.name = "cuda-toolkit-config-common", .version = "12.9.79-1"},
                              {.name = "cuda-toolkit-config-common", .version = "12.10.0-1"},
                              {.name = "cuda-toolkit-config-common", .version = "12.1.105-1"}});
    EXPECT_EQ(index.newest("cuda-toolkit-config-common")->version, "12.10.0-1");
    EXPECT_EQ(index.newest_with_prefix("cuda-toolkit-config-common", "12.9")->version, "12.9.79-1");
}

TEST(PackageIndex, NewestWithPrefixPicksTheExactBuild) {
    const auto index = fixture_index();
    EXPECT_EQ(index.newest_with_prefix("libcudnn8", "8.9.7.29-1+cuda12.2")->version,
              "8.9.7.29-1+cuda12.2");
    EXPECT_EQ(index.newest_with_prefix("libcudnn8", "8.9.7.29-1+cuda11.8")->version,
              "8.9.7.29-1+cuda11.8");
    EXPECT_EQ(index.newest_with_prefix("libcudnn8", "8.9.7.29-1+cuda12.4"), nullptr);
    EXPECT_EQ(index.newest_with_prefix("cuda-drivers-550", "550.54.")->version, "550.54.15-1");
    EXPECT_EQ(index.newest_with_prefix("cuda-drivers-550", "550.")->version, "550.127.08-1");
    EXPECT_EQ(index.newest_with_prefix("cuda-drivers-535", "535."), nullptr);
}

TEST(PackageIndex, PrefixIgnoresEpochUnlessItNamesOne) {
    const PackageIndex index({{.name = "nvidia-driver-550", .version = "1:550.54.15-0ubuntu1"},
                              {.name = "nvidia-driver-550", .version = "550.40.07-1"}});
    EXPECT_EQ(index.newest_with_prefix("nvidia-driver-550", "550.54")->version,
              "1:550.54.15-0ubuntu1");
    EXPECT_EQ(index.newest_with_prefix("nvidia-driver-550", "1:550.40"), nullptr);
    EXPECT_EQ(index.newest("nvidia-driver-550")->version, "1:550.54.15-0ubuntu1");
}

TEST(PackageIndex, NamesWithPrefixAreSortedAndUnique) {
    const auto index = fixture_index();
    EXPECT_EQ(index.names_with_prefix("cuda-toolkit-"),
              (std::vector<std::string>{"cuda-toolkit-12-4", "cuda-toolkit-12-9"}));
    EXPECT_EQ(index.names_with_prefix("libcudnn"),
              (std::vector<std::string>{"libcudnn8", "libcudnn9-cuda-12"}));
    EXPECT_TRUE(index.names_with_prefix("tensorrt").empty());
}

TEST(PackageIndex, UnknownPackageHasNothing) {
    const auto index = fixture_index();
    EXPECT_EQ(index.size(), 12u);
    EXPECT_TRUE(index.has("libnccl2"));
    EXPECT_FALSE(index.has("cuda-12-4"));
    EXPECT_EQ(index.newest("cuda-12-4"), nullptr);
    EXPECT_TRUE(index.versions("cuda-12-4").empty());
    EXPECT_EQ(index.newest("libnccl2")->version, "2.21.5-1+cuda12.4");
}
