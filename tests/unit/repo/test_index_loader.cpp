#include "fake_system.hpp"
#include "gpgv_stand_in.hpp"
#include "parsed_index.hpp"

#include <filesystem>
#include <fstream>
#include <gpuprov/local_system.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;
using gpuprov::testing::read_fixture;
namespace fs = std::filesystem;

namespace {

constexpr const char* repo_url = "https://developer.download.nvidia.com/compute/cuda/repos/"
                                 "ubuntu2204/x86_64/";
constexpr const char* key_url = "https://developer.download.nvidia.com/compute/cuda/repos/"
                                "ubuntu2204/x86_64/test.pub";
constexpr const char* cache = "/home/ann/.cache/gpuprov/repos";

std::string fpr(const char* which) {
    return std::string(trim(read_fixture(std::string("repo/") + which + ".fpr")));
}

ResolvedRepo test_repo() {
    return {.name = "cuda",
            .url = repo_url,
            .key_url = key_url,
            .key_fingerprint = fpr("test-key"),
            .allow_insecure = false};
}

FetchResult ok(std::string body) {
    return {.ok = true, .http_status = 200, .body = std::move(body), .error = {}, .attempts = 1};
}

/// A host serving the fixture repository. gpgv is scripted unless `real_gpgv`.
struct Served {
    FakeSystem sys;

    explicit Served(std::string inrelease = read_fixture("repo/InRelease"),
                    std::string packages = read_fixture("repo/Packages")) {
        sys.on_url(key_url, ok(read_fixture("repo/test-key.asc")));
        sys.on_url(std::string(repo_url) + "InRelease", ok(std::move(inrelease)));
        sys.on_url(std::string(repo_url) + "Packages", ok(std::move(packages)));
    }

    void script_gpgv(const std::string& status, int exit_code = 0) {
        sys.on_command_prefix({"gpgv"}, [status, exit_code](const Command& cmd) {
            return gpuprov::testing::gpgv_answer(cmd, status, exit_code);
        });
    }

    void script_valid_signature() {
        const auto f = fpr("test-key");
        script_gpgv("[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 961FA89CEC068B3B test\n[GNUPG:] VALIDSIG " +
                    f + " 2026-12-02 1796215002 0 4 0 1 10 01 " + f + "\n");
    }

    /// Runs the real gpgv on the keyring the loader wrote into the fake, so signatures are
    /// checked for real while the host stays untouched.
    void use_real_gpgv(const fs::path& tmp) {
        sys.on_command_prefix({"gpgv"}, [this, tmp](const Command& cmd) {
            EXPECT_EQ(cmd.argv.size(), 8u);
            const auto keyring = sys.file(cmd.argv.at(2));
            EXPECT_TRUE(keyring) << "gpgv keyring " << cmd.argv.at(2) << " was not written";
            const auto real_keyring = tmp / "keyring.gpg";
            std::ofstream(real_keyring, std::ios::binary) << keyring.value_or("");
            auto real = cmd;
            real.argv[2] = real_keyring.string();
            return LocalSystem().query(real);
        });
    }
};

bool gpgv_installed() {
    return !LocalSystem().query({.argv = {"gpgv", "--version"}}).not_found;
}

fs::path temp_dir() {
    auto dir = fs::temp_directory_path() /
               ("gpuprov-repo-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

const std::string cache_dir = std::string(cache) + "/cuda/";

} // namespace

TEST(IndexLoader, VerifiesWithRealGpgvAndFillsTheCache) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed";
    }
    const auto tmp = temp_dir();
    Served s;
    s.use_real_gpgv(tmp);
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(r.index) << r.error;
    EXPECT_FALSE(r.from_cache);
    EXPECT_EQ(r.index->newest("cuda-toolkit-12-4")->version, "12.4.1-1");
    EXPECT_EQ(r.index->newest("libcudnn9-cuda-12")->version, "9.10.2.21-1");
    ASSERT_TRUE(r.key);
    EXPECT_EQ(r.key->fingerprint, fpr("test-key"));

    ASSERT_EQ(s.sys.queries.size(), 1u);
    EXPECT_EQ(s.sys.queries[0],
              (std::vector<std::string>{"gpgv", "--keyring", cache_dir + "key.gpg", "--status-fd",
                                        "2", "--output", "-", "-"}));
    // The keyring apt and gpgv read is the dearmored key; the stamp is written last so a
    // half-filled cache is never trusted.
    EXPECT_EQ(s.sys.file(cache_dir + "key.gpg"), read_fixture("repo/test-key.gpg"));
    EXPECT_EQ(s.sys.file(cache_dir + "InRelease"), read_fixture("repo/InRelease"));
    EXPECT_EQ(s.sys.file(cache_dir + "Packages"), read_fixture("repo/Packages"));
    ASSERT_FALSE(s.sys.files_written.empty());
    EXPECT_EQ(s.sys.files_written.back(), cache_dir + "stamp");
    for (const auto& path : s.sys.files_written) {
        EXPECT_TRUE(starts_with(path, cache)) << path << " is outside the cache";
    }
    fs::remove_all(tmp);
}

TEST(IndexLoader, RealGpgvRefusesInReleaseSignedByAnotherKey) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed";
    }
    const auto tmp = temp_dir();
    Served s(read_fixture("repo/InRelease.other"));
    s.use_real_gpgv(tmp);
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, std::string(repo_url) + "InRelease")) << r.error;
    EXPECT_TRUE(contains(r.error, "not signed by the pinned key " + fpr("test-key"))) << r.error;
    EXPECT_FALSE(s.sys.file(cache_dir + "InRelease"));
    EXPECT_FALSE(s.sys.file(cache_dir + "stamp"));
    fs::remove_all(tmp);
}

TEST(IndexLoader, RealGpgvCatchesAlteredInRelease) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed";
    }
    const auto tmp = temp_dir();
    auto altered =
        replace_all(read_fixture("repo/InRelease"), "Label: NVIDIA CUDA", "Label: NVIDIA CUDB");
    ASSERT_NE(altered, read_fixture("repo/InRelease"));
    Served s(altered);
    s.use_real_gpgv(tmp);
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "BAD signature")) << r.error;
    fs::remove_all(tmp);
}

TEST(IndexLoader, WrongKeyFingerprintStopsBeforeAnythingElse) {
    Served s;
    s.sys.on_url(key_url, ok(read_fixture("repo/other-key.asc")));
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_EQ(r.error, std::string("key at ") + key_url + " has fingerprint " + fpr("other-key") +
                           ", profile pins " + fpr("test-key"));
    EXPECT_TRUE(s.sys.queries.empty());
    EXPECT_TRUE(s.sys.files_written.empty());
    EXPECT_EQ(s.sys.urls_fetched, std::vector<std::string>{key_url});
}

// apt 3 with sqv (Debian 13): a pinned key bound only with SHA-1 is refused before anything else,
// as apt-get update would refuse it (docs/security.md "Key policy"); apt 2 (gpgv) goes on.
TEST(IndexLoader, Sha1BoundKeyIsRefusedFirstOnAnApt3SqvHostOnly) {
    const auto status = [](const char* apt) {
        return std::string("Package: apt\nStatus: install ok installed\nVersion: ") + apt + "\n";
    };
    auto repo = test_repo();
    repo.key_fingerprint = fpr("sha1-bound-key");
    {
        Served s;
        s.sys.on_url(key_url, ok(read_fixture("repo/sha1-bound-key.asc")));
        s.sys.add_file("/var/lib/dpkg/status", status("3.0.4"));
        s.sys.add_file("/usr/bin/sqv", "ELF");
        const auto r = load_package_index(s.sys, repo, cache, std::chrono::hours(6));
        EXPECT_FALSE(r.index);
        EXPECT_TRUE(contains(r.error, "key " + fpr("sha1-bound-key") +
                                          " would be refused by this host's apt (apt 3.0.4 "
                                          "verifies with sqv"))
            << r.error;
        EXPECT_TRUE(contains(r.error, "SHA-1")) << r.error;
        EXPECT_TRUE(contains(r.error, std::string("(key from ") + key_url + ")")) << r.error;
        EXPECT_TRUE(s.sys.queries.empty());
        EXPECT_TRUE(s.sys.files_written.empty());
        EXPECT_EQ(s.sys.urls_fetched, std::vector<std::string>{key_url});
    }
    {
        Served s;
        s.sys.on_url(key_url, ok(read_fixture("repo/sha1-bound-key.asc")));
        s.script_valid_signature(); // by the test key, not the pin: refused later, by gpgv
        s.sys.add_file("/var/lib/dpkg/status", status("2.6.1"));
        s.sys.add_file("/usr/bin/sqv", "ELF");
        const auto r = load_package_index(s.sys, repo, cache, std::chrono::hours(6));
        EXPECT_FALSE(contains(r.error, "would be refused")) << r.error;
        EXPECT_GT(s.sys.urls_fetched.size(), 1U); // on to the InRelease
    }
}

TEST(IndexLoader, PinWrittenWithSpacesAndLowerCaseStillMatches) {
    Served s;
    s.script_valid_signature();
    auto repo = test_repo();
    std::string spaced;
    for (std::size_t i = 0; i < repo.key_fingerprint.size(); i += 4) {
        spaced += to_lower(repo.key_fingerprint.substr(i, 4)) + " ";
    }
    repo.key_fingerprint = spaced;
    const auto r = load_package_index(s.sys, repo, cache, std::chrono::hours(6));
    EXPECT_TRUE(r.index) << r.error;
}

TEST(IndexLoader, HttpErrorNamesUrlAndStatus) {
    Served s;
    s.script_valid_signature();
    s.sys.on_url(std::string(repo_url) + "InRelease",
                 {.ok = false, .http_status = 500, .body = {}, .error = "HTTP 500", .attempts = 4});
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_EQ(r.error,
              std::string("cannot fetch ") + repo_url + "InRelease: HTTP 500 (4 attempts)");
}

TEST(IndexLoader, UnscriptedKeyUrlFailsWithItsUrl) {
    FakeSystem sys;
    const auto r = load_package_index(sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, key_url)) << r.error;
}

TEST(IndexLoader, TruncatedPackagesIsRefused) {
    const auto full = read_fixture("repo/Packages");
    Served s(read_fixture("repo/InRelease"), full.substr(0, full.size() / 2));
    s.script_valid_signature();
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, std::string("Packages at ") + repo_url + "Packages is " +
                                      std::to_string(full.size() / 2) + " bytes, InRelease says " +
                                      std::to_string(full.size())))
        << r.error;
    EXPECT_FALSE(s.sys.file(cache_dir + "stamp"));
}

TEST(IndexLoader, SameSizeAlteredPackagesFailsSha256) {
    auto altered =
        replace_all(read_fixture("repo/Packages"), "Version: 12.4.1-1", "Version: 12.4.9-1");
    Served s(read_fixture("repo/InRelease"), altered);
    s.script_valid_signature();
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "has SHA256 ")) << r.error;
    EXPECT_TRUE(contains(r.error, std::string(repo_url) + "Packages")) << r.error;
}

TEST(IndexLoader, ValidSignatureFromAnotherPrimaryKeyIsRefused) {
    Served s;
    const auto other = fpr("other-key");
    s.script_gpgv("[GNUPG:] VALIDSIG " + other + " 2026-12-02 1796215002 0 4 0 1 10 01 " + other +
                  "\n");
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "signed by " + other)) << r.error;
}

TEST(IndexLoader, SignatureBySubkeyOfPinnedKeyIsAccepted) {
    Served s;
    s.script_gpgv("[GNUPG:] VALIDSIG 1111222233334444555566667777888899990000 2026-12-02 "
                  "1796215002 0 4 0 1 10 01 " +
                  fpr("test-key") + "\n");
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_TRUE(r.index) << r.error;
}

TEST(IndexLoader, ExpiredKeySignatureIsRefusedEvenWithValidSig) {
    Served s;
    const auto f = fpr("test-key");
    s.script_gpgv("[GNUPG:] EXPKEYSIG 961FA89CEC068B3B test\n[GNUPG:] VALIDSIG " + f +
                  " 2026-12-02 1796215002 0 4 0 1 10 01 " + f + "\n");
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "expired key")) << r.error;
}

TEST(IndexLoader, MissingGpgvSaysWhichPackageToInstall) {
    Served s;
    s.sys.on_command_prefix({"gpgv"}, [](const Command&) {
        return CommandResult{.exit_code = 127, .not_found = true};
    });
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "gpgv is not installed")) << r.error;
}

TEST(IndexLoader, UnsignedTextAppendedToInReleaseIsRefused) {
    Served s(read_fixture("repo/InRelease") + "SHA256:\n " + std::string(64, 'a') +
             " 10 Packages\n");
    s.script_valid_signature();
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "not a single clear-signed message")) << r.error;
}

TEST(IndexLoader, PlainHttpNeedsAllowInsecure) {
    Served s;
    s.script_valid_signature();
    auto repo = test_repo();
    repo.url = "http://mirror.internal/cuda/";
    auto r = load_package_index(s.sys, repo, cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "http://mirror.internal/cuda/ is not https://")) << r.error;
    EXPECT_TRUE(s.sys.urls_fetched.empty());

    s.sys.on_url("http://mirror.internal/cuda/InRelease", ok(read_fixture("repo/InRelease")));
    s.sys.on_url("http://mirror.internal/cuda/Packages", ok(read_fixture("repo/Packages")));
    repo.allow_insecure = true;
    r = load_package_index(s.sys, repo, cache, std::chrono::hours(6));
    EXPECT_TRUE(r.index) << r.error;
}

TEST(IndexLoader, FreshCacheIsUsedWithoutNetworkAndStillVerified) {
    Served s;
    s.script_valid_signature();
    const auto first = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(first.index) << first.error;
    const auto fetched = s.sys.urls_fetched.size();
    const auto queried = s.sys.queries.size();

    s.sys.sleep(std::chrono::hours(1));
    const auto second = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(second.index) << second.error;
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(s.sys.urls_fetched.size(), fetched);
    EXPECT_EQ(s.sys.queries.size(), queried + 1); // the signature is checked again
    EXPECT_EQ(second.index->size(), first.index->size());
    EXPECT_EQ(second.key->fingerprint, fpr("test-key"));
}

TEST(IndexLoader, CachedLoadTakesTheParsedCopyOfThatVeryPackagesFile) {
    Served s;
    s.script_valid_signature();
    const auto first = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(first.index) << first.error;
    ASSERT_TRUE(s.sys.file(cache_dir + "Packages.parsed")) << "the fetch saves the parsed copy";
    // A parsed copy bound to the same signed SHA-256 and the same file on disk is what a cached
    // load returns: Packages is neither hashed nor parsed again.
    const auto signed_sha = release_entry(read_fixture("repo/InRelease"), "Packages")->sha256;
    const std::vector<PackageRecord> marker{{.name = "from-parsed-copy", .version = "1"}};
    repo_detail::save_parsed_index(s.sys, cache_dir + "Packages", signed_sha, marker);
    auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(r.index) << r.error;
    EXPECT_TRUE(r.from_cache);
    EXPECT_EQ(r.index->size(), 1u);
    EXPECT_TRUE(r.index->has("from-parsed-copy"));
    // Packages rewritten (same bytes, a new file): parsed again and the copy renewed.
    s.sys.add_file(cache_dir + "Packages", read_fixture("repo/Packages"));
    r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(r.index) << r.error;
    EXPECT_TRUE(r.from_cache);
    EXPECT_EQ(r.index->size(), first.index->size());
    EXPECT_FALSE(r.index->has("from-parsed-copy"));
    r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_EQ(r.index->size(), first.index->size()) << "the renewed copy matches the file";
}

TEST(IndexLoader, StaleCacheIsRefetched) {
    Served s;
    s.script_valid_signature();
    ASSERT_TRUE(load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6)).index);
    const auto fetched = s.sys.urls_fetched.size();
    s.sys.sleep(std::chrono::hours(7));
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(r.index) << r.error;
    EXPECT_FALSE(r.from_cache);
    EXPECT_EQ(s.sys.urls_fetched.size(), fetched + 3);
}

TEST(IndexLoader, CacheTamperedPackagesIsNotTrusted) {
    Served s;
    s.script_valid_signature();
    ASSERT_TRUE(load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6)).index);
    s.sys.add_file(cache_dir + "Packages", "Package: evil\nVersion: 9\n");
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    ASSERT_TRUE(r.index) << r.error;
    EXPECT_FALSE(r.from_cache);
    EXPECT_FALSE(r.index->has("evil"));
    EXPECT_EQ(s.sys.file(cache_dir + "Packages"), read_fixture("repo/Packages"));
}

TEST(IndexLoader, CacheForAnotherPinIsNotReused) {
    Served s;
    s.script_valid_signature();
    ASSERT_TRUE(load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6)).index);
    auto repinned = test_repo();
    repinned.key_fingerprint = fpr("other-key");
    const auto r = load_package_index(s.sys, repinned, cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "profile pins " + fpr("other-key"))) << r.error;
}

TEST(IndexLoader, EmptyCacheDirIsAnError) {
    Served s;
    const auto r = load_package_index(s.sys, test_repo(), "", std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "no cache directory")) << r.error;
}

// ---- signatures as apt checks them: the signed bytes gpgv returns, weak digests, dates ----

namespace {

/// A host serving a Release signed by the signature-check key (regenerate.sh), pinned.
struct SigcheckServed : Served {
    explicit SigcheckServed(const std::string& inrelease)
        : Served(read_fixture("repo/" + inrelease)) {
        sys.on_url(key_url, ok(read_fixture("repo/sigcheck-key.asc")));
    }
    static ResolvedRepo repo() {
        auto r = test_repo();
        r.key_fingerprint = fpr("sigcheck-key");
        return r;
    }
};

/// Loads the sigcheck fixture `inrelease` with the real gpgv; the load's error, and whether the
/// cache was left without a stamp (never trusted).
struct RealGpgvRefusal {
    std::string error;
    bool refused_uncached = false;
};
RealGpgvRefusal load_with_real_gpgv(const std::string& inrelease) {
    const auto tmp = temp_dir();
    SigcheckServed s(inrelease);
    s.use_real_gpgv(tmp);
    const auto r = load_package_index(s.sys, SigcheckServed::repo(), cache, std::chrono::hours(6));
    fs::remove_all(tmp);
    return {r.error, !r.index && !s.sys.file(cache_dir + "stamp")};
}

} // namespace

TEST(IndexLoader, RealGpgvRefusesASha1SignedInReleaseAsAptDoes) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed";
    }
    const auto r = load_with_real_gpgv("InRelease.sha1");
    EXPECT_TRUE(r.refused_uncached);
    EXPECT_TRUE(contains(r.error, "weak digest SHA1")) << r.error;
}

TEST(IndexLoader, RealGpgvRefusesAnExpiredRelease) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed";
    }
    const auto r = load_with_real_gpgv("InRelease.expired");
    EXPECT_TRUE(r.refused_uncached);
    EXPECT_TRUE(contains(r.error, "is expired (Valid-Until Sun, 08 Nov 2026 00:00:00 UTC, 23d 0h "
                                  "ago)"))
        << r.error;
}

TEST(IndexLoader, RealGpgvRefusesAReleaseDatedInTheFuture) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed";
    }
    const auto r = load_with_real_gpgv("InRelease.future");
    EXPECT_TRUE(r.refused_uncached);
    EXPECT_TRUE(contains(r.error, "is not valid yet")) << r.error;
    EXPECT_TRUE(contains(r.error, "1d 0h ahead")) << r.error;
}

TEST(IndexLoader, WeakDigestsInValidsigAreRefusedStrongOnesAccepted) {
    // gpgv's VALIDSIG field 8 is the hash algorithm (RFC 4880 9.4): 1 MD5, 2 SHA1, 3 RIPEMD160,
    // 8 SHA256, 9 SHA384, 10 SHA512, 11 SHA224.
    const auto f = fpr("test-key");
    for (const auto& [algo, name] : std::vector<std::pair<std::string, std::string>>{
             {"1", "MD5"}, {"2", "SHA1"}, {"3", "RIPEMD160"}, {"99", "unknown digest 99"}}) {
        Served s;
        s.script_gpgv(
            "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 961FA89CEC068B3B test\n[GNUPG:] VALIDSIG " + f +
            " 2026-12-02 1796215002 0 4 0 1 " + algo + " 01 " + f + "\n");
        const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
        EXPECT_FALSE(r.index) << algo;
        EXPECT_TRUE(contains(r.error, "weak digest " + name)) << r.error;
    }
    for (const std::string algo : {"8", "9", "10", "11"}) {
        Served s;
        s.script_gpgv("[GNUPG:] VALIDSIG " + f + " 2026-12-02 1796215002 0 4 0 1 " + algo + " 01 " +
                      f + "\n");
        const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
        EXPECT_TRUE(r.index) << algo << ": " << r.error;
    }
}

TEST(IndexLoader, WhatIsParsedIsWhatGpgvReturnedNotTheDownloadedFile) {
    // gpgv's --output is the signed text; a stand-in that returns a different Packages hash
    // shows the loader reads gpgv's bytes (and so checks Packages against them).
    Served s;
    const auto f = fpr("test-key");
    s.sys.on_command_prefix({"gpgv"}, [f](const Command& cmd) {
        auto r = gpuprov::testing::gpgv_answer(
            cmd, "[GNUPG:] VALIDSIG " + f + " 2026-12-02 1796215002 0 4 0 1 10 01 " + f + "\n");
        r.out = replace_all(r.out, "08dc33e2", "18dc33e2");
        return r;
    });
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "InRelease says 18dc33e2")) << r.error;
}

TEST(IndexLoader, NoSignedTextFromGpgvIsRefused) {
    Served s;
    const auto f = fpr("test-key");
    s.sys.on_command_prefix({"gpgv"}, [f](const Command&) {
        return CommandResult{.err = "[GNUPG:] VALIDSIG " + f +
                                    " 2026-12-02 1796215002 0 4 0 1 10 01 " + f + "\n"};
    });
    const auto r = load_package_index(s.sys, test_repo(), cache, std::chrono::hours(6));
    EXPECT_FALSE(r.index);
    EXPECT_TRUE(contains(r.error, "gave back no signed text")) << r.error;
}
