// libcurl is opened at run time, not linked: a host without it gets an error naming every
// library tried and the package to install, and a library that is not libcurl is refused.
#include "http_curl.hpp"

#include <gpuprov/local_system.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;

TEST(CurlLibrary, MissingLibraryNamesEveryCandidateAndThePackage) {
    const auto load = detail::load_curl({"libgpuprov-absent-a.so.4", "libgpuprov-absent-b.so.4"});
    EXPECT_FALSE(load.ok);
    EXPECT_NE(load.error.find("libgpuprov-absent-a.so.4"), std::string::npos) << load.error;
    EXPECT_NE(load.error.find("libgpuprov-absent-b.so.4"), std::string::npos) << load.error;
    EXPECT_NE(load.error.find("apt-get install libcurl4"), std::string::npos) << load.error;
    EXPECT_NE(load.error.find("dnf install libcurl"), std::string::npos) << load.error;
}

TEST(CurlLibrary, ALibraryThatIsNotLibcurlIsRefused) {
    const auto load = detail::load_curl({"libm.so.6"});
    EXPECT_FALSE(load.ok);
    EXPECT_NE(load.error.find("libm.so.6: not libcurl (no curl_global_init)"), std::string::npos)
        << load.error;
}

TEST(CurlLibrary, TheNextCandidateLoadsWhenTheFirstIsMissing) {
    // libcurl.so.4 is on the build host: libcurl4-openssl-dev (its headers) depends on it.
    const auto load = detail::load_curl({"libgpuprov-absent.so.4", "libcurl.so.4"});
    ASSERT_TRUE(load.ok) << load.error;
    EXPECT_EQ(load.soname, "libcurl.so.4");
    EXPECT_STREQ(load.api.easy_strerror(CURLE_COULDNT_RESOLVE_HOST), "Couldn't resolve host name");
}

TEST(CurlLibrary, AFetchWithAnUnsupportedSchemeFailsWithoutRetrying) {
    LocalSystem sys;
    FetchRequest req;
    req.url = "ftp://127.0.0.1/key.asc";
    req.attempts = 3;
    const auto r = sys.fetch(req);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.attempts, 1);
    EXPECT_EQ(r.http_status, 0);
    EXPECT_FALSE(r.error.empty());
}
