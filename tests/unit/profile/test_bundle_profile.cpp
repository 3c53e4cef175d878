// bundle.key_fingerprint (docs/air-gapped.md): the key an offline bundle must be signed with,
// pinned in the profile so cloud-init and fleet runs need no --bundle-key.
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;

TEST(BundleProfile, NoPinUnlessGiven) {
    EXPECT_TRUE(load("name: x\n").bundle_key.empty());
}

TEST(BundleProfile, ThePinIsNormalisedAsRepositoryKeysAre) {
    const auto p =
        load("name: x\nbundle:\n  key_fingerprint: \"5072 f327 86e1 3046 e084  c37c 5134 dc76 "
             "d111 3b78\"\n");
    EXPECT_EQ(p.bundle_key, "5072F32786E13046E084C37C5134DC76D1113B78");
    EXPECT_EQ(p.pos("bundle.key_fingerprint").line, 3);
}

TEST(BundleProfile, AShortKeyIdIsRefusedAtItsValue) {
    const auto e = load_error("name: x\nbundle: {key_fingerprint: D1113B78}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "bundle.key_fingerprint")) << e.what();
    EXPECT_TRUE(contains(e.message(), "40 hex digits")) << e.what();
}

TEST(BundleProfile, AnEmptyBundleSectionNamesTheMissingKey) {
    const auto e = load_error("name: x\nbundle: {}\n");
    EXPECT_TRUE(contains(e.message(), "key_fingerprint")) << e.what();
}

TEST(BundleProfile, MisspeltKeyNamesTheRightOne) {
    const auto e = load_error("name: x\nbundle: {key_fingerprnt: x}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "key_fingerprint")) << e.what();
}

} // namespace
} // namespace gpuprov
