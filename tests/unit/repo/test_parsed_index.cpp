// The parsed-index cache: a later plan reuses the records only for the very Packages file they
// came from (same SHA-256 as the verified InRelease says, same size/inode/mtime on disk).
#include "fake_system.hpp"
#include "parsed_index.hpp"

#include <gpuprov/repo.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using namespace gpuprov::repo_detail;
using gpuprov::testing::FakeSystem;

namespace {

const std::string packages = "/var/cache/gpuprov/repos/cuda/Packages";
const std::string sha = std::string(64, 'a');

std::vector<PackageRecord> sample() {
    return {{.name = "cuda-drivers-550",
             .version = "550.90.07-1",
             .architecture = "amd64",
             .depends = "nvidia-driver-550 (>= 550.90.07), cuda-drivers-550-benchfill-1",
             .provides = "",
             .filename = "./cuda-drivers-550_550.90.07-1_amd64.deb",
             .sha256 = std::string(64, 'b')},
            // Field text with the format's own delimiters and digits in it.
            {.name = "x",
             .version = "1:2-3",
             .architecture = "all",
             .depends = "12:34\n5",
             .provides = "p (= 1)",
             .filename = "",
             .sha256 = ""}};
}

bool same(const std::vector<PackageRecord>& a, const std::vector<PackageRecord>& b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto t = [](const PackageRecord& r) {
            return std::tie(r.name, r.version, r.architecture, r.depends, r.provides, r.filename,
                            r.sha256);
        };
        if (t(a[i]) != t(b[i])) {
            return false;
        }
    }
    return true;
}

struct Saved {
    FakeSystem sys;
    Saved() {
        sys.add_file(packages, "Package: cuda-drivers-550\n...");
        save_parsed_index(sys, packages, sha, sample());
    }
    [[nodiscard]] std::string parsed() const { return *sys.file(packages + ".parsed"); }
};

} // namespace

TEST(ParsedIndex, RoundTripsEveryField) {
    Saved s;
    const auto loaded = load_parsed_index(s.sys, packages, sha);
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(same(*loaded, sample()));
}

TEST(ParsedIndex, AnotherSignedChecksumIsNotReused) {
    Saved s;
    EXPECT_FALSE(load_parsed_index(s.sys, packages, std::string(64, 'c')));
}

TEST(ParsedIndex, RewrittenPackagesIsNotReusedEvenWithTheSameBytes) {
    Saved s;
    s.sys.add_file(packages, *s.sys.file(packages)); // a new inode and mtime, same content
    EXPECT_FALSE(load_parsed_index(s.sys, packages, sha));
}

TEST(ParsedIndex, MissingPackagesOrParsedFileIsNotReused) {
    Saved s;
    s.sys.remove_file(packages);
    EXPECT_FALSE(load_parsed_index(s.sys, packages, sha));
    FakeSystem empty;
    empty.add_file(packages, "x");
    EXPECT_FALSE(load_parsed_index(empty, packages, sha));
}

TEST(ParsedIndex, DamagedFilesAreRefused) {
    Saved s;
    const auto good = s.parsed();
    const auto refused = [&](const std::string& content) {
        s.sys.add_file(packages + ".parsed", content);
        return !load_parsed_index(s.sys, packages, sha);
    };
    EXPECT_TRUE(refused(good.substr(0, good.size() - 1))) << "cut short";
    EXPECT_TRUE(refused(good + "0:")) << "trailing bytes";
    EXPECT_TRUE(refused(""));
    auto more = good;
    more.replace(more.find("records 2"), 9, "records 3");
    EXPECT_TRUE(refused(more)) << "count larger than the records";
    auto huge = good;
    huge.replace(huge.find("records 2"), 9, "records 99999999999");
    EXPECT_TRUE(refused(huge)) << "count larger than the file could hold";
    auto len = good;
    len.replace(len.find("16:cuda-drivers-550"), 3, "99:");
    EXPECT_TRUE(refused(len)) << "field length past the end";
    auto magic = good;
    magic[0] = 'G';
    EXPECT_TRUE(refused(magic));
    EXPECT_FALSE(refused(good));
}
