// os-release parsing and classification, on the real files under tests/fixtures/os/.
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;
using testing::read_fixture;

OsInfo classified(std::string_view content) {
    auto os = parse_os_release(content);
    classify_os(os);
    return os;
}

TEST(OsRelease, Ubuntu2204Verbatim) {
    const auto os = parse_os_release(read_fixture("os/ubuntu-22.04/etc/os-release"));
    EXPECT_EQ(os.id, "ubuntu");
    EXPECT_EQ(os.id_like, std::vector<std::string>{"debian"});
    EXPECT_EQ(os.version_id, "22.04");
    EXPECT_EQ(os.codename, "jammy");
    EXPECT_EQ(os.pretty_name, "Ubuntu 22.04.2 LTS");
}

TEST(OsRelease, QuotedValuesAndBlankLinesOfRhel) {
    const auto os = parse_os_release(read_fixture("os/rhel-9/etc/os-release"));
    EXPECT_EQ(os.id, "rhel");
    EXPECT_EQ(os.id_like, std::vector<std::string>{"fedora"});
    EXPECT_EQ(os.version_id, "9.6");
    EXPECT_EQ(os.codename, "");
    EXPECT_EQ(os.pretty_name, "Red Hat Enterprise Linux 9.6 (Plow)");
}

TEST(OsRelease, IdLikeIsSplitIntoWords) {
    const auto os = parse_os_release(read_fixture("os/rocky-9/usr/lib/os-release"));
    EXPECT_EQ(os.id, "rocky");
    EXPECT_EQ(os.id_like, (std::vector<std::string>{"rhel", "centos", "fedora"}));
}

TEST(OsRelease, UbuntuCodenameIsTheFallback) {
    const auto os = parse_os_release("ID=ubuntu\nVERSION_ID=\"22.04\"\nUBUNTU_CODENAME=jammy\n");
    EXPECT_EQ(os.codename, "jammy");
    const auto both = parse_os_release("VERSION_CODENAME=noble\nUBUNTU_CODENAME=jammy\n");
    EXPECT_EQ(both.codename, "noble");
}

TEST(OsRelease, ShellQuotingAndEscapes) {
    const auto os = parse_os_release("# comment line\n"
                                     "   \n"
                                     "ID='debian'\n"
                                     "PRETTY_NAME=\"A \\\"quoted\\\" \\$name \\\\ here\"\n"
                                     "VERSION_ID=12 # trailing comment\n"
                                     "VERSION_CODENAME=book\\worm\n");
    EXPECT_EQ(os.id, "debian");
    EXPECT_EQ(os.pretty_name, "A \"quoted\" $name \\ here");
    EXPECT_EQ(os.version_id, "12");
    EXPECT_EQ(os.codename, "bookworm");
}

TEST(OsRelease, BackslashBeforeOrdinaryCharacterIsKeptInDoubleQuotes) {
    EXPECT_EQ(parse_os_release("PRETTY_NAME=\"a\\nb\"\n").pretty_name, "a\\nb");
}

TEST(OsRelease, CrlfLineEndings) {
    const auto os = parse_os_release("ID=ubuntu\r\nVERSION_ID=\"24.04\"\r\n");
    EXPECT_EQ(os.id, "ubuntu");
    EXPECT_EQ(os.version_id, "24.04");
}

TEST(OsRelease, GarbageLosesOnlyTheBadLines) {
    const auto os = parse_os_release("this is not a key value line\n"
                                     "=novalue\n"
                                     "lower_case=ignored\n"
                                     "PRETTY_NAME=\"never closed\n"
                                     "ID=rocky\n"
                                     "VERSION_ID=\"9.3\"\n"
                                     "\x01\x02\xff\n");
    EXPECT_EQ(os.id, "rocky");
    EXPECT_EQ(os.version_id, "9.3");
    EXPECT_EQ(os.pretty_name, "");
}

TEST(OsRelease, EmptyInput) {
    const auto os = classified("");
    EXPECT_EQ(os.id, "");
    EXPECT_EQ(os.family, "");
    EXPECT_EQ(os.repo_slug, "");
    EXPECT_EQ(os.profile_os, "");
}

TEST(OsRelease, IdIsLowercased) {
    EXPECT_EQ(parse_os_release("ID=Ubuntu\nID_LIKE=\"Debian\"\n").id, "ubuntu");
}

struct SlugCase {
    const char* fixture;
    const char* family;
    const char* slug;
    const char* profile_os;
};

class OsFixtures : public ::testing::TestWithParam<SlugCase> {};

// The acceptance list: each real os-release → family, NVIDIA repo directory, profile spelling.
TEST_P(OsFixtures, ClassifiesLikeNvidiaRepos) {
    const auto& c = GetParam();
    FakeSystem sys;
    sys.load_tree(std::string("os/") + c.fixture);
    const auto facts = detect_facts(sys, Matrix::builtin());
    EXPECT_EQ(facts.os.family, c.family);
    EXPECT_EQ(facts.os.repo_slug, c.slug);
    EXPECT_EQ(facts.os.profile_os, c.profile_os);
}

INSTANTIATE_TEST_SUITE_P(
    RealFiles, OsFixtures,
    ::testing::Values(SlugCase{"ubuntu-20.04", "debian", "ubuntu2004", "ubuntu-20.04"},
                      SlugCase{"ubuntu-22.04", "debian", "ubuntu2204", "ubuntu-22.04"},
                      SlugCase{"ubuntu-24.04", "debian", "ubuntu2404", "ubuntu-24.04"},
                      SlugCase{"ubuntu-26.04", "debian", "ubuntu2604", "ubuntu-26.04"},
                      SlugCase{"debian-12", "debian", "debian12", "debian-12"},
                      // Debian 13: NVIDIA's debian13 repository (its own key, 8793F200).
                      SlugCase{"debian-13", "debian", "debian13", "debian-13"},
                      SlugCase{"rhel-8", "rhel", "rhel8", "rhel-8"},
                      SlugCase{"rhel-9", "rhel", "rhel9", "rhel-9"},
                      SlugCase{"rocky-9", "rhel", "rhel9", "rhel-9"},
                      // RHEL 10 and its rebuilds: NVIDIA's rhel10 repository.
                      SlugCase{"rhel-10", "rhel", "rhel10", "rhel-10"},
                      SlugCase{"rocky-10", "rhel", "rhel10", "rhel-10"},
                      SlugCase{"alma-10", "rhel", "rhel10", "rhel-10"},
                      SlugCase{"oracle-10", "rhel", "rhel10", "rhel-10"},
                      SlugCase{"debian-11", "debian", "", "debian-11"},
                      SlugCase{"amzn-2023", "rhel", "", "amzn-2023"}),
    [](const auto& param_info) {
        std::string name = param_info.param.fixture;
        for (auto& ch : name) {
            if (ch == '-' || ch == '.') {
                ch = '_';
            }
        }
        return name;
    });

TEST(ClassifyOs, AlmaAndOracleUseTheRhelRepo) {
    EXPECT_EQ(classified("ID=\"almalinux\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"8.10\"\n")
                  .repo_slug,
              "rhel8");
    const auto ol = classified("ID=\"ol\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"9.4\"\n");
    EXPECT_EQ(ol.repo_slug, "rhel9");
    EXPECT_EQ(ol.profile_os, "rhel-9");
}

TEST(ClassifyOs, UnsupportedReleasesGetNoSlugButKeepTheirName) {
    const auto bionic = classified("ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"18.04\"\n");
    EXPECT_EQ(bionic.family, "debian");
    EXPECT_EQ(bionic.repo_slug, "");
    EXPECT_EQ(bionic.profile_os, "ubuntu-18.04");

    // No NVIDIA repository for an EL major gpuprov does not know (7 is long gone, 11 not out).
    const auto rhel11 = classified("ID=\"rhel\"\nID_LIKE=\"centos fedora\"\nVERSION_ID=\"11.0\"\n");
    EXPECT_EQ(rhel11.family, "rhel");
    EXPECT_EQ(rhel11.repo_slug, "");
    EXPECT_EQ(rhel11.profile_os, "rhel-11");
    EXPECT_EQ(classified("ID=\"rhel\"\nVERSION_ID=\"7.9\"\n").repo_slug, "");

    // Debian 13 has NVIDIA's debian13 repository (the real file is in RealFiles); 14 has none.
    const auto forky = classified("ID=debian\nVERSION_ID=\"14\"\n");
    EXPECT_EQ(forky.repo_slug, "");
    EXPECT_EQ(forky.profile_os, "debian-14");
    EXPECT_EQ(classified("ID=debian\nVERSION_ID=\"13\"\n").repo_slug, "debian13");
}

TEST(ClassifyOs, DerivativesFollowIdLike) {
    const auto mint = classified("ID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"21.3\"\n");
    EXPECT_EQ(mint.family, "debian");
    EXPECT_EQ(mint.repo_slug, ""); // not Ubuntu's own VERSION_ID: no guessing
    const auto centos = classified("ID=\"centos\"\nID_LIKE=\"rhel fedora\"\nVERSION_ID=\"9\"\n");
    EXPECT_EQ(centos.family, "rhel");
    EXPECT_EQ(centos.repo_slug, "");
    const auto opensuse = classified("ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n"
                                     "VERSION_ID=\"15.5\"\n");
    EXPECT_EQ(opensuse.family, "");
    EXPECT_EQ(opensuse.repo_slug, "");
}

TEST(ClassifyOs, DebianTestingWithoutVersionId) {
    const auto sid = classified("ID=debian\nVERSION_CODENAME=trixie\n");
    EXPECT_EQ(sid.family, "debian");
    EXPECT_EQ(sid.repo_slug, "");
    EXPECT_EQ(sid.profile_os, "");
}

TEST(ClassifyOs, ReclassifyingClearsOldAnswers) {
    auto os = classified("ID=ubuntu\nVERSION_ID=\"22.04\"\n");
    ASSERT_EQ(os.repo_slug, "ubuntu2204");
    os.version_id = "25.10";
    classify_os(os);
    EXPECT_EQ(os.repo_slug, "");
    EXPECT_EQ(os.profile_os, "ubuntu-25.10");
}

TEST(ReadOs, FallsBackToUsrLib) {
    FakeSystem sys;
    sys.add_file("/usr/lib/os-release", read_fixture("os/debian-12/etc/os-release"));
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).os.repo_slug, "debian12");
}

TEST(ReadOs, MissingFilesLeaveTheOsEmpty) {
    FakeSystem sys;
    const auto facts = detect_facts(sys, Matrix::builtin());
    EXPECT_EQ(facts.os.id, "");
    EXPECT_EQ(facts.os.repo_slug, "");
    EXPECT_EQ(facts.pkg_arch, "");
}

} // namespace
} // namespace gpuprov

namespace gpuprov {
namespace {

OsInfo classified_fixture(const std::string& rel) {
    auto os = parse_os_release(testing::read_fixture(rel));
    classify_os(os);
    return os;
}

TEST(ClassifyOsEl, AlmaOracleAndCentosFixturesMapToRhelRepos) {
    const auto alma = classified_fixture("os/alma-9/etc/os-release");
    EXPECT_EQ(alma.repo_slug, "rhel9");
    EXPECT_EQ(alma.end_of_life, "");
    const auto ol = classified_fixture("os/oracle-9/etc/os-release");
    EXPECT_EQ(ol.family, "rhel"); // ID_LIKE="fedora" only, but ID=ol
    EXPECT_EQ(ol.repo_slug, "rhel9");
    EXPECT_EQ(ol.profile_os, "rhel-9");
    const auto stream9 = classified_fixture("os/centos-stream-9/etc/os-release");
    EXPECT_EQ(stream9.repo_slug, "rhel9");
    EXPECT_EQ(stream9.profile_os, "rhel-9");
    EXPECT_EQ(stream9.end_of_life, "2027-05-31");
    const auto centos8 = classified_fixture("os/centos-8/etc/os-release");
    EXPECT_EQ(centos8.repo_slug, "rhel8");
    EXPECT_EQ(centos8.end_of_life, "2021-12-31");
    auto stream8 = centos8;
    stream8.pretty_name = "CentOS Stream 8";
    classify_os(stream8);
    EXPECT_EQ(stream8.end_of_life, "2024-05-31");
}

TEST(ClassifyOsEl, EndOfLifeWarningOnlyAfterTheDate) {
    const auto centos8 = classified_fixture("os/centos-8/etc/os-release");
    const auto w = end_of_life_warning(centos8, "2026-12-01");
    EXPECT_NE(w.find("CentOS Linux 8 reached its end of life on 2021-12-31"), std::string::npos)
        << w;
    EXPECT_NE(w.find("rhel8"), std::string::npos) << w;
    const auto stream9 = classified_fixture("os/centos-stream-9/etc/os-release");
    EXPECT_EQ(end_of_life_warning(stream9, "2026-12-01"), "");
    EXPECT_NE(end_of_life_warning(stream9, "2027-06-01"), "");
    EXPECT_EQ(end_of_life_warning(classified_fixture("os/rhel-9/etc/os-release"), "2099-01-01"),
              "");
}

TEST(ClassifyOsEl, CentosSevenAndTenStayRefused) {
    auto c7 = parse_os_release("NAME=\"CentOS Linux\"\nID=\"centos\"\nVERSION_ID=\"7\"\n"
                               "PRETTY_NAME=\"CentOS Linux 7 (Core)\"\n");
    classify_os(c7);
    EXPECT_EQ(c7.repo_slug, "");
    auto s10 =
        parse_os_release("ID=\"centos\"\nVERSION_ID=\"10\"\nPRETTY_NAME=\"CentOS Stream 10\"\n");
    classify_os(s10);
    EXPECT_EQ(s10.repo_slug, "");
}

TEST(ClassifyOsEl, SupportedListNamesEveryFamily) {
    const auto list = supported_os_list();
    for (const char* name : {"Ubuntu", "Debian", "RHEL", "Rocky Linux", "AlmaLinux", "Oracle Linux",
                             "CentOS Stream", "CentOS Linux 8"}) {
        EXPECT_NE(list.find(name), std::string::npos) << name;
    }
}

} // namespace
} // namespace gpuprov
