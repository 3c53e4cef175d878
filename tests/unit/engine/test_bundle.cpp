// Offline bundles (issue 24, docs/air-gapped.md): the manifest, the checks before any change
// (key, signed manifest, every file's hash), what a host lacks, the profile pointed at the
// bundle, and the closure's apt command line. The fake System throughout; gpgv answers as the
// stand-in the other repository tests use.
#include "fake_system.hpp"
#include "gpgv_stand_in.hpp"

#include <gpuprov/apt_download.hpp>
#include <gpuprov/bundle.hpp>
#include <gpuprov/digest.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;
using gpuprov::testing::read_fixture;

namespace {

const std::string kDir = "/srv/bundle";

std::string fpr() {
    auto f = read_fixture("repo/test-key.fpr");
    while (!f.empty() && (f.back() == '\n' || f.back() == ' ')) {
        f.pop_back();
    }
    return f;
}

std::string sha(const std::string& data) {
    return content_digest(data).substr(7);
}

std::string clearsigned(const std::string& text) {
    return "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n" + text +
           "-----BEGIN PGP SIGNATURE-----\n\niQEz\n=abcd\n-----END PGP SIGNATURE-----\n";
}

BundleManifest manifest_for(const std::map<std::string, std::string>& files) {
    BundleManifest m;
    m.profile = "cv-train";
    m.profile_digest = "sha256:" + std::string(64, 'a');
    m.target = {"debian-12", "x86_64"};
    m.kernels = {"6.1.0-28-amd64"};
    m.repositories = {"cuda", "container-toolkit"};
    m.key_fingerprint = fpr();
    m.provenance = {{"cuda", "provenance/cuda/InRelease"}};
    for (const auto& [path, data] : files) {
        m.files.push_back({path, sha(data), data.size()});
    }
    return m;
}

// A bundle as gpuprov bundle writes it, with gpgv scripted to accept the test key's signature.
struct BundleHost {
    FakeSystem sys;
    std::map<std::string, std::string> files{
        {"repos/cuda/Packages", "Package: nvidia-driver-550\n"},
        {"repos/cuda/InRelease", "signed\n"},
        {"repos/cuda/nvidia-driver-550_550.90.07-1_amd64.deb", "deb bytes"},
        {"repos/container-toolkit/Packages", ""},
        {"provenance/cuda/InRelease", "nvidia's\n"}};
    std::string signer = fpr();

    BundleHost() {
        sys.add_file(kDir + "/bundle-key.gpg", read_fixture("repo/test-key.gpg"));
        for (const auto& [path, data] : files) {
            sys.add_file(kDir + "/" + path, data);
        }
        sign(manifest_for(files));
        sys.on_command_prefix({"gpgv"}, [this](const Command& cmd) {
            return gpuprov::testing::gpgv_answer(
                cmd, "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + signer +
                         " 2026-12-02 1796218524 0 4 0 1 10 01 " + signer + "\n");
        });
    }
    void sign(const BundleManifest& m) {
        sys.add_file(kDir + "/manifest.json.asc", clearsigned(manifest_to_json(m)));
    }
};

std::string refusal(BundleHost& h, const std::string& pin) {
    try {
        (void)open_bundle(h.sys, kDir, pin, "/var/cache/gpuprov/repos");
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST(Bundle, TargetParses) {
    EXPECT_EQ(parse_bundle_target("debian-12", "x86_64").text(), "debian-12/x86_64");
    EXPECT_EQ(parse_bundle_target("debian-12/sbsa", "x86_64").arch, "sbsa");
    EXPECT_THROW((void)parse_bundle_target("debian", "x86_64"), UsageError);
    EXPECT_THROW((void)parse_bundle_target("debian-12/", "x86_64"), UsageError);
    EXPECT_THROW((void)parse_bundle_target("debian-12/x86_64/x", "x86_64"), UsageError);
}

TEST(Bundle, ManifestRoundTripsAndRefusesPathsOutside) {
    const auto m = manifest_for({{"repos/cuda/Packages", "x"}});
    const auto back = parse_manifest(manifest_to_json(m));
    EXPECT_EQ(back.profile, "cv-train");
    EXPECT_EQ(back.target.text(), "debian-12/x86_64");
    EXPECT_EQ(back.kernels, m.kernels);
    ASSERT_EQ(back.files.size(), 1u);
    EXPECT_EQ(back.files[0].sha256, sha("x"));
    EXPECT_EQ(back.files[0].size, 1u);
    EXPECT_EQ(back.provenance, m.provenance);

    auto evil = m;
    evil.files[0].path = "../../etc/shadow";
    EXPECT_THROW((void)parse_manifest(manifest_to_json(evil)), Error);
    evil.files[0].path = "/etc/shadow";
    EXPECT_THROW((void)parse_manifest(manifest_to_json(evil)), Error);
    EXPECT_THROW((void)parse_manifest("{\"kind\": \"gpuprov-saved-plan\"}"), Error);
}

TEST(Bundle, AGoodBundleOpens) {
    BundleHost h;
    const auto b = open_bundle(h.sys, kDir + "/", fpr(), "/var/cache/gpuprov/repos");
    EXPECT_EQ(b.dir, kDir);
    EXPECT_EQ(b.manifest.repositories.size(), 2u);
    // The fingerprint may be given as gpg prints it: grouped, lower case.
    auto spaced = fpr();
    for (auto& c : spaced) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    spaced.insert(4, " ");
    EXPECT_NO_THROW((void)open_bundle(h.sys, kDir, spaced, "/var/cache/gpuprov/repos"));
    // Nothing was written or run but gpgv.
    EXPECT_TRUE(h.sys.files_written.empty());
    EXPECT_TRUE(h.sys.commands_ran.empty());
}

TEST(Bundle, AnotherKeyIsRefused) {
    BundleHost h;
    const std::string other(40, 'A');
    const auto why = refusal(h, other);
    EXPECT_NE(why.find("signed by key " + fpr() + ", not by the pinned " + other),
              std::string::npos)
        << why;
}

TEST(Bundle, AManifestSignedByAnotherKeyIsRefused) {
    BundleHost h;
    h.signer = std::string(40, 'B'); // gpgv: a valid signature, but not by the pinned key
    const auto why = refusal(h, fpr());
    EXPECT_NE(why.find("manifest does not verify"), std::string::npos) << why;
}

TEST(Bundle, AnAlteredFileIsRefusedByName) {
    BundleHost h;
    h.sys.add_file(kDir + "/repos/cuda/nvidia-driver-550_550.90.07-1_amd64.deb", "deb bytez");
    const auto why = refusal(h, fpr());
    EXPECT_NE(why.find("bundle file repos/cuda/nvidia-driver-550_550.90.07-1_amd64.deb has "
                       "SHA-256"),
              std::string::npos)
        << why;
    h.sys.add_file(kDir + "/repos/cuda/nvidia-driver-550_550.90.07-1_amd64.deb", "longer bytes");
    EXPECT_NE(refusal(h, fpr()).find("the signed manifest says 9 bytes"), std::string::npos);
}

TEST(Bundle, AFileTheManifestDoesNotListIsRefused) {
    BundleHost h;
    h.sys.add_file(kDir + "/repos/cuda/evil_1.0_amd64.deb", "x");
    const auto why = refusal(h, fpr());
    EXPECT_NE(why.find("repos/cuda/evil_1.0_amd64.deb is not in the signed manifest"),
              std::string::npos)
        << why;
}

TEST(Bundle, GapsNameTheMissingHeadersAndTheOtherRelease) {
    const auto m = manifest_for({});
    HostFacts facts;
    facts.os.profile_os = "debian-12";
    facts.arch = "x86_64";
    facts.kernel = "6.1.0-28-amd64";
    EXPECT_TRUE(bundle_gaps(m, facts).empty());
    facts.kernel = "6.1.0-31-amd64";
    auto gaps = bundle_gaps(m, facts);
    ASSERT_EQ(gaps.size(), 1u);
    EXPECT_NE(gaps[0].find("linux-headers-6.1.0-31-amd64"), std::string::npos) << gaps[0];
    facts.kernel = "6.1.0-28-amd64";
    facts.os.profile_os = "ubuntu-22.04";
    gaps = bundle_gaps(m, facts);
    ASSERT_EQ(gaps.size(), 1u);
    EXPECT_EQ(gaps[0], "the bundle is for debian-12/x86_64, this host is ubuntu-22.04/x86_64");
}

TEST(Bundle, TheProfilePointsAtTheBundleOnly) {
    Profile p;
    p.name = "cv-train";
    p.repositories["cuda"] = {"cuda", "https://developer.download.nvidia.com/x/", "k", "F", false};
    OpenedBundle b{kDir, manifest_for({})};
    const auto q = profile_from_bundle(p, b);
    EXPECT_EQ(q.repositories.at("cuda").url, "file:///srv/bundle/repos/cuda/");
    EXPECT_EQ(q.repositories.at("cuda").key_url, "file:///srv/bundle/bundle-key.gpg");
    EXPECT_EQ(q.repositories.at("cuda").key_fingerprint, fpr());
    p.repositories["docker"] = {"docker", "https://download.docker.com/", "k", "F", false};
    EXPECT_THROW((void)profile_from_bundle(p, b), Error);
}

TEST(Bundle, TheKeyComesFromTheCommandLineOrTheProfileAndMustAgree) {
    const std::string key = "5072F32786E13046E084C37C5134DC76D1113B78";
    Profile p;
    p.source = "/etc/gpuprov/p.yaml";
    EXPECT_EQ(bundle_key_for(p, "5072 f327 86e1 3046 e084  c37c 5134 dc76 d111 3b78"), key);
    EXPECT_THROW((void)bundle_key_for(p, ""), UsageError) << "no key from anywhere";
    p.bundle_key = key;
    p.positions["bundle.key_fingerprint"] = {"/etc/gpuprov/p.yaml", 7, 20};
    EXPECT_EQ(bundle_key_for(p, ""), key);
    EXPECT_EQ(bundle_key_for(p, "50:72:F3:27:86:E1:30:46:E0:84:C3:7C:51:34:DC:76:D1:11:3B:78"),
              key);
    try {
        (void)bundle_key_for(p, "0123456789ABCDEF0123456789ABCDEF01234567");
        FAIL() << "two keys accepted";
    } catch (const ProfileError& e) {
        EXPECT_EQ(e.line(), 7);
        EXPECT_NE(std::string(e.what()).find("--bundle-key is 0123456789ABCDEF"), std::string::npos)
            << e.what();
    }
}

TEST(Bundle, FreshHostStatusKeepsOnlyWhatMinbaseHas) {
    const std::string ok = "Status: install ok installed\n";
    const std::string status =
        "Package: libc6\nPriority: required\n" + ok + "Depends: libgcc-s1\n\n" +
        "Package: libgcc-s1\nPriority: optional\n" + ok + "\n" +
        "Package: dkms\nPriority: optional\n" + ok + "\n" + "Package: mawk\nPriority: optional\n" +
        ok + "Provides: awk\n\n" +
        "Package: removed\nPriority: required\nStatus: deinstall ok config-files\n\n" +
        "Package: dpkg\nEssential: yes\nPriority: required\n" + ok + "Pre-Depends: awk | gawk\n\n";
    const auto fresh = fresh_host_status(status);
    EXPECT_NE(fresh.find("Package: libc6"), std::string::npos);
    EXPECT_NE(fresh.find("Package: dpkg"), std::string::npos);
    // What they depend on comes along, so apt finds the database consistent.
    EXPECT_NE(fresh.find("Package: libgcc-s1"), std::string::npos);
    EXPECT_NE(fresh.find("Package: mawk"), std::string::npos);
    EXPECT_EQ(fresh.find("Package: dkms"), std::string::npos);
    EXPECT_EQ(fresh.find("Package: removed"), std::string::npos);
}

TEST(Bundle, RequestsArePlanPinsPlusEachKernelsHeaders) {
    Plan plan;
    PlannedTransaction t;
    t.transaction.requested = {{"cuda-drivers-550", "550.90.07-1"},
                               {"nvidia-driver-550", "550.90.07-1"}};
    plan.transactions.push_back(t);
    t.transaction.requested = {{"cuda-drivers-550", "550.90.07-1"}};
    plan.transactions.push_back(t);
    const auto r = bundle_requests(plan, {"6.1.0-28-amd64", "6.1.0-31-amd64"});
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(r[0].spec(), "cuda-drivers-550=550.90.07-1");
    EXPECT_EQ(r[2].spec(), "linux-headers-6.1.0-28-amd64");
    EXPECT_EQ(r[3].spec(), "linux-headers-6.1.0-31-amd64");
}

TEST(Bundle, TheClosureIsDownloadedByAptOnTheFreshHostsDatabase) {
    FakeSystem sys;
    sys.add_dir("/var/lib/apt/lists");
    sys.add_dir("/etc/apt/sources.list.d");
    std::vector<std::string> argv;
    sys.on_command_prefix({"apt-get", "install"}, [&](const Command& c) {
        argv = c.argv;
        return CommandResult{};
    });
    SimulationRequest req;
    req.installs = {{"nvidia-driver-550", "550.90.07-1"}, {"linux-headers-6.1.0-28-amd64", ""}};
    req.scratch_dir = "/c/apt-view";
    const auto t = apt_download(sys, req, "/c/bundle-work/archives", "/c/bundle-work/status");
    EXPECT_TRUE(t.error.empty()) << t.error;
    ASSERT_EQ(sys.commands_ran.size(), 1u);
    auto has = [&](const std::string& a) {
        return std::find(argv.begin(), argv.end(), a) != argv.end();
    };
    EXPECT_TRUE(has("--download-only"));
    EXPECT_FALSE(has("--simulate"));
    EXPECT_TRUE(has("Dir::Cache::archives=/c/bundle-work/archives"));
    EXPECT_TRUE(has("Dir::State::status=/c/bundle-work/status"));
    EXPECT_TRUE(has("Dir::State::Lists=/c/apt-view/lists"));
    EXPECT_TRUE(has("nvidia-driver-550=550.90.07-1"));
    EXPECT_TRUE(has("linux-headers-6.1.0-28-amd64"));
    req.scratch_dir.clear();
    EXPECT_THROW((void)apt_download(sys, req, "/a", "/s"), BugError);
}
