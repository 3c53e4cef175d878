// The string helpers that several parsers share (src/util): one behaviour for all of them.
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>
#include <gtest/gtest.h>

using gpuprov::split_words;
using Words = std::vector<std::string>;

TEST(SplitWords, SpacesAndTabsSeparateRunsOfThemCountOnce) {
    // nvidia-smi's table columns are runs of spaces; nccl-tests' results and a sources.list line
    // may hold tabs.
    EXPECT_EQ(split_words("   0  NVIDIA H200     On  "), (Words{"0", "NVIDIA", "H200", "On"}));
    EXPECT_EQ(split_words("deb\t[arch=amd64]  http://x/\tbookworm main"),
              (Words{"deb", "[arch=amd64]", "http://x/", "bookworm", "main"}));
    EXPECT_EQ(split_words("  8388608 \t 2097152  float\r"), (Words{"8388608", "2097152", "float"}));
}

TEST(SplitWords, BlankInputHasNoWords) {
    EXPECT_TRUE(split_words("").empty());
    EXPECT_TRUE(split_words(" \t  \t").empty());
}

TEST(ToUpper, UpperCasesAsciiOnly) {
    EXPECT_EQ(gpuprov::to_upper("ab12:cd ef"), "AB12:CD EF");
    EXPECT_EQ(gpuprov::to_lower(gpuprov::to_upper("3bf863cc")), "3bf863cc");
}
