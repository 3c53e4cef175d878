// The dnf half of offline bundles (docs/air-gapped.md): dnf's download command lines, the
// installroot's view, the .repo files of the distribution, the recheck of every .rpm against a
// real createrepo_c primary.xml, the package key a dnf bundle carries, and the host's dnf limited
// to gpuprov's repositories. The fake System throughout.
#include "bundle_internal.hpp"
#include "dnf_repo.hpp"
#include "fake_system.hpp"

#include <algorithm>
#include <gpuprov/bundle.hpp>
#include <gpuprov/digest.hpp>
#include <gpuprov/dnf_download.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/repo.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;
using gpuprov::testing::read_fixture;

namespace {

std::string fixture_fpr(const std::string& name) {
    auto f = read_fixture(name);
    while (!f.empty() && (f.back() == '\n' || f.back() == ' ')) {
        f.pop_back();
    }
    return f;
}

bool has_arg(const std::vector<std::string>& argv, const std::string& a) {
    return std::find(argv.begin(), argv.end(), a) != argv.end();
}

SimulationRequest download_request() {
    SimulationRequest req;
    req.installs = {{"nvidia-open", "3:580.95.05-1.el9"},
                    {"kernel-devel-5.14.0-362.24.1.el9_3.x86_64", ""}};
    req.modules = {{"nvidia-driver", "580-open", false}};
    req.scratch_dir = "/c/bundle-work/dnf-view";
    return req;
}

const DnfDownloadPlace kPlace{.installroot = "/c/bundle-work/installroot",
                              .destdir = "/c/bundle-work/rpms",
                              .releasever = "9",
                              .platform_id = "platform:el9"};

TEST(BundleDnf, DownloadEnablesTheStreamsThenDownloadsIntoThePrivateRoot) {
    const auto cmds = dnf_download_commands(download_request(), "/v/yum.repos.d", kPlace);
    ASSERT_EQ(cmds.size(), 2u);
    const auto& enable = cmds[0].argv;
    const auto& install = cmds[1].argv;
    for (const auto* argv : {&enable, &install}) {
        EXPECT_EQ(argv->front(), "dnf");
        EXPECT_TRUE(has_arg(*argv, "--installroot=/c/bundle-work/installroot"));
        EXPECT_TRUE(has_arg(*argv, "--setopt=reposdir=/v/yum.repos.d"));
        EXPECT_TRUE(has_arg(*argv, "--setopt=cachedir=/c/bundle-work/dnf-view/cache"));
        EXPECT_TRUE(has_arg(*argv, "--releasever=9"));
        EXPECT_TRUE(has_arg(*argv, "--setopt=module_platform_id=platform:el9"));
        EXPECT_TRUE(has_arg(*argv, "--config=/etc/dnf/dnf.conf"));
        EXPECT_FALSE(has_arg(*argv, "--nogpgcheck"));
    }
    EXPECT_TRUE(has_arg(enable, "module"));
    EXPECT_TRUE(has_arg(enable, "nvidia-driver:580-open"));
    EXPECT_TRUE(has_arg(install, "install"));
    EXPECT_TRUE(has_arg(install, "--downloadonly"));
    EXPECT_TRUE(has_arg(install, "--destdir=/c/bundle-work/rpms"));
    EXPECT_TRUE(has_arg(install, "nvidia-open-3:580.95.05-1.el9"));
    EXPECT_TRUE(has_arg(install, "kernel-devel-5.14.0-362.24.1.el9_3.x86_64"));
    // No module stream: the install alone.
    auto req = download_request();
    req.modules.clear();
    EXPECT_EQ(dnf_download_commands(req, "/v", kPlace).size(), 1u);
    auto place = kPlace;
    place.installroot.clear();
    EXPECT_THROW((void)dnf_download_commands(req, "/v", place), BugError);
    req.installs = {{"evil pkg", ""}};
    EXPECT_THROW((void)dnf_download_commands(req, "/v", kPlace), Error);
}

TEST(BundleDnf, DownloadStopsAtTheFirstRefusalAndSaysWhy) {
    FakeSystem sys;
    sys.add_dir("/etc/yum.repos.d");
    sys.add_file("/etc/yum.repos.d/rocky.repo", "[baseos]\nbaseurl=https://m/\n");
    sys.on_command_prefix({"dnf", "-y"}, [&](const Command& c) {
        CommandResult r;
        if (has_arg(c.argv, "module")) {
            r.exit_code = 1;
            r.err =
                "Error: Problems in request:\nmissing groups or modules: nvidia-driver:580-open";
        }
        return r;
    });
    const auto t = dnf_download(sys, download_request(), kPlace);
    EXPECT_NE(t.error.find("missing groups or modules: nvidia-driver:580-open"), std::string::npos)
        << t.error;
    ASSERT_EQ(sys.commands_ran.size(), 1u); // the install never ran
    // The view holds the system's .repo files (as the plan's simulation's does).
    EXPECT_TRUE(sys.exists("/c/bundle-work/dnf-view/yum.repos.d/rocky.repo"));
}

TEST(BundleDnf, RepoFilesAsRockyShipsThem) {
    const auto s = parse_yum_repo_file(
        "# comment\n[baseos]\nname=Rocky Linux $releasever - BaseOS\n"
        "mirrorlist=https://mirrors.rockylinux.org/"
        "mirrorlist?arch=$basearch&repo=BaseOS-$releasever\n"
        "#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/$basearch/os/\n"
        "gpgcheck=1\nenabled=1\ngpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9\n\n"
        "[epel]\nbaseurl=https://m/epel/$releasever/Everything/$basearch/,\n"
        "  https://m2/epel/${releasever}/\nenabled=0\ngpgkey=file:///k1 file:///k2\n");
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].id, "baseos");
    EXPECT_TRUE(s[0].baseurls.empty()); // commented out
    EXPECT_TRUE(s[0].has_mirrorlist);
    EXPECT_TRUE(s[0].enabled);
    ASSERT_EQ(s[0].gpgkeys.size(), 1u);
    EXPECT_FALSE(s[1].enabled);
    ASSERT_EQ(s[1].baseurls.size(), 2u);
    EXPECT_EQ(s[1].gpgkeys, (std::vector<std::string>{"file:///k1", "file:///k2"}));
    EXPECT_EQ(expand_yum_vars(s[1].baseurls[0], "9", "x86_64"),
              "https://m/epel/9/Everything/x86_64/");
    EXPECT_EQ(expand_yum_vars(s[1].baseurls[1], "9", "x86_64"), "https://m2/epel/9/");
}

// The stand-in NVIDIA repository's primary.xml as createrepo_c 0.20 wrote it
// (tests/fixtures/repo/rpm/README.md).
PackageIndex fixture_index() {
    const auto xml = gunzip(read_fixture("repo/rpm/7b33d53e4d072310042934c35dea2ac843ae94b09762cac"
                                         "577678bbc3de1f9f4-primary.xml.gz"));
    return PackageIndex(parse_primary_xml(xml.value_or("")));
}

TEST(BundleDnf, EveryRpmIsRecheckedAgainstTheVerifiedPrimary) {
    const auto index = fixture_index();
    ASSERT_GT(index.size(), 0u);
    // Every record of a real primary.xml has the SHA-256 and size a file is checked by.
    for (const auto& r : index.records()) {
        EXPECT_EQ(r.sha256.size(), 64u) << r.name;
        EXPECT_FALSE(r.size.empty()) << r.name;
    }
    // A file whose SHA-256 and size are a record's: build one record for known content.
    auto records = index.records();
    const std::string rpm = "an rpm's bytes";
    records.push_back({.name = "dkms",
                       .version = "3.0.13-1.el9",
                       .architecture = "noarch",
                       .filename = "dkms-3.0.13-1.el9.noarch.rpm",
                       .sha256 = content_digest(rpm).substr(7),
                       .size = std::to_string(rpm.size())});
    bundle_detail::VerifiedRecords v;
    v.add(PackageIndex(records), "cuda");
    EXPECT_EQ(v.check("dkms-3.0.13-1.el9.noarch.rpm", rpm), "cuda");
    EXPECT_TRUE(v.names().count("nvidia-open"));
    // Altered by one byte: no record matches; the unverified indexes are named.
    try {
        (void)v.check("dkms-3.0.13-1.el9.noarch.rpm", rpm + "x", "epel: no repomd.xml.asc");
        FAIL() << "an altered rpm was accepted";
    } catch (const Error& e) {
        const std::string why = e.what();
        EXPECT_NE(why.find("matches no record of a verified index"), std::string::npos) << why;
        EXPECT_NE(why.find("epel: no repomd.xml.asc"), std::string::npos) << why;
    }
    // Same SHA-256 but the index says another size: refused too.
    records.back().size = "999";
    bundle_detail::VerifiedRecords w;
    w.add(PackageIndex(records), "");
    EXPECT_THROW((void)w.check("dkms.rpm", rpm), Error);
    // The distribution's records are "" (they travel in the first repository).
    records.back().size = std::to_string(rpm.size());
    bundle_detail::VerifiedRecords d;
    d.add(PackageIndex(records), "");
    EXPECT_EQ(d.check("dkms.rpm", rpm), "");
}

TEST(BundleDnf, ElRebuildsAreTheirRhelRelease) {
    EXPECT_EQ(parse_bundle_target("rocky-9", "x86_64").text(), "rhel-9/x86_64");
    EXPECT_EQ(parse_bundle_target("almalinux-9/aarch64", "x86_64").text(), "rhel-9/aarch64");
    EXPECT_EQ(parse_bundle_target("alma-8", "x86_64").text(), "rhel-8/x86_64");
    EXPECT_EQ(parse_bundle_target("rhel-10", "x86_64").text(), "rhel-10/x86_64");
    EXPECT_EQ(parse_bundle_target("debian-12", "x86_64").text(), "debian-12/x86_64");
}

TEST(BundleDnf, HeadersAreKernelDevelOnEl) {
    EXPECT_EQ(kernel_headers_package("rhel", "5.14.0-362.24.1.el9_3.x86_64"),
              "kernel-devel-5.14.0-362.24.1.el9_3.x86_64");
    EXPECT_EQ(kernel_headers_package("debian", "6.1.0-28-amd64"), "linux-headers-6.1.0-28-amd64");
    Plan plan;
    PlannedTransaction t;
    t.transaction.requested = {{"nvidia-open", "3:580.95.05-1.el9"}};
    plan.transactions.push_back(t);
    const auto r = bundle_requests(plan, {"5.14.0-362.24.1.el9_3.x86_64"}, "rhel");
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[1].name, "kernel-devel-5.14.0-362.24.1.el9_3.x86_64");

    BundleManifest m;
    m.target = {"rhel-9", "x86_64"};
    m.kernels = {"5.14.0-362.24.1.el9_3.x86_64"};
    HostFacts facts;
    facts.os.family = "rhel";
    facts.os.profile_os = "rhel-9";
    facts.arch = "x86_64";
    facts.kernel = "5.14.0-362.24.1.el9_3.x86_64";
    EXPECT_TRUE(bundle_gaps(m, facts).empty());
    facts.kernel = "5.14.0-362.18.1.el9_3.x86_64";
    const auto gaps = bundle_gaps(m, facts);
    ASSERT_EQ(gaps.size(), 1u);
    EXPECT_NE(gaps[0].find("kernel-devel-5.14.0-362.18.1.el9_3.x86_64 (the running kernel"),
              std::string::npos)
        << gaps[0];
}

BundleManifest dnf_manifest() {
    BundleManifest m;
    m.profile = "cv-train";
    m.profile_digest = "sha256:" + std::string(64, 'a');
    m.target = {"rhel-9", "x86_64"};
    m.kernels = {"5.14.0-362.24.1.el9_3.x86_64"};
    m.repositories = {"cuda"};
    m.key_fingerprint = fixture_fpr("repo/test-key.fpr");
    m.files = {{"keys/cuda.gpg", std::string(64, 'b'), 10}};
    m.package_keys = {{"cuda", "keys/cuda.gpg"}};
    return m;
}

TEST(BundleDnf, ManifestCarriesThePackageKeysOnlyAsListedFiles) {
    auto m = dnf_manifest();
    const auto back = parse_manifest(manifest_to_json(m));
    EXPECT_EQ(back.package_keys, m.package_keys);
    // apt's manifests have none, and read as before.
    m.package_keys.clear();
    EXPECT_EQ(manifest_to_json(m).find("package_keys"), std::string::npos);
    // A key the manifest does not hash is not covered by the signature: refused.
    m = dnf_manifest();
    m.files.clear();
    EXPECT_THROW((void)parse_manifest(manifest_to_json(m)), Error);
}

TEST(BundleDnf, ThePackageKeyMustBeTheProfilesPin) {
    Profile p;
    p.name = "cv-train";
    const auto nvidia = fixture_fpr("repo/other-key.fpr");
    p.repositories["cuda"] = {"cuda", "https://developer.download.nvidia.com/x/", "k", nvidia,
                              false};
    OpenedBundle b{"/srv/b", dnf_manifest(), {{"cuda", read_fixture("repo/other-key.asc")}}};
    const auto keys = bundle_package_keys(p, b);
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(keys[0].repo, "cuda");
    EXPECT_EQ(keys[0].file, "/srv/b/keys/cuda.gpg");
    EXPECT_EQ(keys[0].fingerprint, nvidia); // the profile's: packages
    const auto q = profile_from_bundle(p, b);
    EXPECT_EQ(q.repositories.at("cuda").url, "file:///srv/b/repos/cuda/");
    EXPECT_EQ(q.repositories.at("cuda").key_fingerprint,
              fixture_fpr("repo/test-key.fpr")); // the bundle key: repodata
    // The bundle's package key is another than the profile pins: refused.
    b.package_key_data = {{"cuda", read_fixture("repo/test-key.asc")}};
    try {
        (void)bundle_package_keys(p, b);
        FAIL() << "a foreign package key was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("the profile pins " + nvidia), std::string::npos)
            << e.what();
    }
    // An unpinned profile repository (the matrix's key) takes the bundle's signed key.
    p.repositories["cuda"].key_fingerprint.clear();
    EXPECT_EQ(bundle_package_keys(p, b).at(0).fingerprint, fixture_fpr("repo/test-key.fpr"));
}

TEST(BundleDnf, TheRepoFileNamesBothKeys) {
    ResolvedRepo repo;
    repo.url = "file:///srv/b/repos/cuda/";
    const auto plain =
        steps::dnf_repo_text(repo, "gpuprov-cuda", "/etc/pki/rpm-gpg/gpuprov-cuda.asc", "cv-train");
    EXPECT_NE(plain.find("gpgkey=file:///etc/pki/rpm-gpg/gpuprov-cuda.asc\n"), std::string::npos);
    EXPECT_EQ(steps::dnf_package_key_path("cuda"), "");
    dnf_use_package_keys({{"cuda", {"/srv/b/keys/cuda.gpg", "F"}}});
    const auto path = steps::dnf_package_key_path("cuda");
    dnf_use_package_keys({});
    EXPECT_EQ(path, "/etc/pki/rpm-gpg/gpuprov-cuda-packages.asc");
    const auto both = steps::dnf_repo_text(repo, "gpuprov-cuda",
                                           "/etc/pki/rpm-gpg/gpuprov-cuda.asc", "cv-train", path);
    EXPECT_NE(both.find("gpgkey=file:///etc/pki/rpm-gpg/gpuprov-cuda.asc "
                        "file:///etc/pki/rpm-gpg/gpuprov-cuda-packages.asc\n"),
              std::string::npos)
        << both;
    EXPECT_NE(both.find("gpgcheck=1\nrepo_gpgcheck=1\n"), std::string::npos);
}

TEST(BundleDnf, TheBundlesHostReadsGpuprovsRepositoriesOnly) {
    const auto dnf = make_dnf();
    EXPECT_FALSE(
        has_arg(dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}).argv, "--repo=gpuprov-*"));
    dnf_limit_repos({"gpuprov-*"});
    const auto install = dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}).argv;
    const auto shell = dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}, {},
                                    {{"nvidia-driver", "580-open", false}});
    const auto hold = dnf->hold({"nvidia-open"}).argv;
    dnf_limit_repos({});
    EXPECT_EQ(install[2], "--repo=gpuprov-*");
    EXPECT_EQ(shell.argv[1], "shell"); // check_install still finds dnf's command
    EXPECT_TRUE(has_arg(shell.argv, "--repo=gpuprov-*"));
    EXPECT_TRUE(has_arg(hold, "--repo=gpuprov-*"));
    EXPECT_FALSE(has_arg(dnf->install({{"nvidia-open", ""}}).argv, "--repo=gpuprov-*"));
    // The bundle's repositories for transactions before gpuprov's .repo files exist
    // (preflight's kernel-devel), costlier than those once they do.
    dnf_limit_repos({"gpuprov-*"}, {{"gpuprov-bundle-cuda", "file:///b/repos/cuda/"}});
    const auto early = dnf->install({{"kernel-devel-5.14.0-362.24.1.el9_3.x86_64", ""}}).argv;
    dnf_limit_repos({});
    EXPECT_TRUE(has_arg(early, "--repofrompath=gpuprov-bundle-cuda,file:///b/repos/cuda/"));
    EXPECT_TRUE(has_arg(early, "--setopt=gpuprov-bundle-cuda.cost=2000"));
    EXPECT_TRUE(has_arg(early, "--repo=gpuprov-*"));
    EXPECT_EQ(early[1], "install");
}

} // namespace
