// Profiles come from files root reads: hostile ones are refused before they cost memory or
// time, with the position of the offending token.
#include "profile_test_support.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>

namespace gpuprov {
namespace {

using test::contains;
using test::load_error;

// The classic "billion laughs": nine lines, each alias doubling nine-fold; expanded it is
// about a billion strings.
const char* kAliasBomb =
    "name: bomb\n"
    "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";

TEST(HostileInput, AnAliasBombIsRefusedAtItsFirstAnchor) {
    const auto start = std::chrono::steady_clock::now();
    const auto e = load_error(kAliasBomb);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "anchors (&name) are not allowed")) << e.what();
}

TEST(HostileInput, AliasesAndAnchorsAreRefusedWherever) {
    auto e = load_error("name: x\ndriver: &d {branch: \"550\"}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "anchors")) << e.what();
    e = load_error("name: &n x\n");
    EXPECT_TRUE(contains(e.message(), "anchors")) << e.what();
    // A '&' or '*' inside a quoted value is text, not YAML syntax.
    EXPECT_NO_THROW((void)load_profile_text("name: x\ndescription: \"R&D *fast* box\"\n", "t.yaml",
                                            Matrix::builtin()));
}

TEST(HostileInput, NestingDeeperThanAnySchemaNeedsIsRefused) {
    std::string deep = "name: x\ndescription: ";
    for (int i = 0; i < 40; ++i) {
        deep += "[";
    }
    for (int i = 0; i < 40; ++i) {
        deep += "]";
    }
    const auto e = load_error(deep + "\n");
    EXPECT_TRUE(contains(e.message(), "nested deeper than 16 levels")) << e.what();
}

// fuzz/fuzz_profile found it: yaml-cpp's parser hands out endless empty documents for a ','
// outside any flow collection, and the anchor check looped over documents until none was left.
TEST(HostileInput, AStrayTopLevelCommaIsRefusedNotLoopedOn) {
    for (const char* text : {",", "name: x\n,\n", "# comment\n,,\n"}) {
        const auto start = std::chrono::steady_clock::now();
        const auto e = load_error(text);
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << text;
        EXPECT_FALSE(e.message().empty()) << text;
    }
}

TEST(HostileInput, ANonRegularFileIsRefusedWithoutReadingIt) {
    const auto start = std::chrono::steady_clock::now();
    try {
        (void)load_profile("/dev/zero", Matrix::builtin());
        FAIL() << "/dev/zero loaded";
    } catch (const ProfileError& e) {
        EXPECT_TRUE(contains(e.message(), "not a regular file")) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(HostileInput, AFileOverOneMebibyteIsRefused) {
    const std::string path = ::testing::TempDir() + "gpuprov-huge-profile.yaml";
    {
        std::ofstream out(path, std::ios::binary);
        out << "name: x\ndescription: \"" << std::string(2u << 20, 'a') << "\"\n";
    }
    try {
        (void)load_profile(path, Matrix::builtin());
        FAIL() << "a 2 MiB profile loaded";
    } catch (const ProfileError& e) {
        EXPECT_TRUE(contains(e.message(), "larger than 1024 KiB")) << e.what();
    }
    std::remove(path.c_str());
}

} // namespace
} // namespace gpuprov
