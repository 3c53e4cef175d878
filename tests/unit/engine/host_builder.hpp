#pragma once
// A FakeSystem set up as a Debian 12 host with 4× A100 SXM4 80GB (optionally behind NVSwitches),
// serving the signed test repositories of tests/fixtures/engine/ and scripting the tools apply
// runs the way the real ones change the host: `apt-get install` adds dpkg status entries and the
// files the packages ship, `apt-mark hold` changes the selection, `systemctl enable` makes the
// wants link, `modprobe nvidia` loads the module (unless nouveau holds the GPUs). So a second
// apply sees a converged host.
#include "fake_system.hpp"
#include "gpgv_stand_in.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fstream>
#include <gpuprov/deb_file.hpp>
#include <gpuprov/engine.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/local_system.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace gpuprov::enginetest {

using gpuprov::testing::FakeSystem;
using gpuprov::testing::fixture_path;
using gpuprov::testing::read_fixture;

inline const std::string kCudaUrl = "https://mirror.test/cuda/debian12/x86_64/";
/// NVIDIA's ubuntu2404 shape: 580 on the suffixed scheme, 595 and 610 unsuffixed with their
/// pinning packages (tests/fixtures/engine/ubuntu2404/).
inline const std::string kUbuntuCudaUrl = "https://mirror.test/cuda/ubuntu2404/x86_64/";
inline const std::string kCtkUrl = "https://mirror.test/libnvidia-container/stable/deb/amd64/";
/// Docker-shaped: a dists repository (dists/bookworm/InRelease, stable/binary-amd64/Packages).
inline const std::string kDockerUrl = "https://mirror.test/docker/debian/";
inline const std::string kDockerDists = kDockerUrl + "dists/bookworm/";
inline const std::string kDockerPackages = "stable/binary-amd64/Packages";
inline const std::string kKeyUrl = "https://mirror.test/keys/engine-test.asc";
inline const std::string kKernel = "6.1.0-18-amd64";
inline const std::string kDriverVersion = "550.127.08";
inline const std::string kCacheDir = "/var/cache/gpuprov/repos";
inline const std::string kDpkgStatus = "/var/lib/dpkg/status";
inline const std::string kLibDir = "/usr/lib/x86_64-linux-gnu/";

inline const Matrix& matrix() {
    return Matrix::builtin();
}

inline std::string fingerprint() {
    return std::string(trim(read_fixture("engine/test-key.fpr")));
}

inline std::string profile_path() {
    return fixture_path("engine/profile.yaml").string();
}

inline Profile load_test_profile() {
    return load_profile(profile_path(), matrix());
}

inline FetchResult http_ok(std::string body) {
    return {.ok = true, .http_status = 200, .body = std::move(body), .error = {}, .attempts = 1};
}

inline bool gpgv_installed() {
    static const bool have = !LocalSystem().query({.argv = {"gpgv", "--version"}}).not_found;
    return have;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

struct HostOptions {
    int gpus = 4;
    std::uint16_t device_id = 0x20b2; ///< A100 SXM4 80GB
    int nvswitches = 6;               ///< HGX A100 baseboard; 0 for PCIe cards
    bool nouveau_loaded = false;
    bool secure_boot = false;
    bool kernel_headers = true;
    std::uint64_t free_gib = 100;
    /// Docker is installed and its daemon answers (with no image): the container profile's
    /// engine. false: no dockerd, as on a host without Docker.
    bool docker = true;
    /// The os-release fixture (tests/fixtures/os/<os>/): debian-12 or ubuntu-24.04.
    std::string os = "debian-12";
    /// The driver's packages ship nvidia-persistenced.service (some builds do not).
    bool persistenced_unit = true;
};

/// dpkg status database edits, paragraph-wise as dpkg keeps it.
inline std::string dpkg_paragraph(const std::string& name, const std::string& version,
                                  const std::string& status) {
    return fmt::format("Package: {}\nStatus: {}\nPriority: optional\nSection: multiverse/devel\n"
                       "Installed-Size: 1024\nMaintainer: cudatools <cudatools@nvidia.com>\n"
                       "Architecture: amd64\nVersion: {}\nDescription: {}\n",
                       name, status, version, name);
}

class TestHost {
public:
    FakeSystem sys;
    /// Every `apt-get install --simulate` argv, in order.
    std::vector<std::vector<std::string>> simulations;
    /// A unit whose `systemctl restart` fails as systemd reports a daemon that exits at once.
    std::string restart_fails;
    /// When each unit was last (re)started, by the fake clock: what `systemctl show` reports
    /// as ActiveEnterTimestamp. A unit not in here is inactive.
    std::map<std::string, std::chrono::system_clock::time_point> started;
    /// Every `name=version` apt-get install was asked for, in order.
    std::vector<std::string> installed_specs;
    std::vector<std::string> purged; ///< dpkg --purge arguments, in order
    bool fail_apt_update = false;

    explicit TestHost(HostOptions o = {}) : m_opt(o) {
        sys.add_file("/etc/os-release", read_fixture("os/" + o.os + "/etc/os-release"));
        sys.add_file("/proc/sys/kernel/osrelease", kKernel + "\n");
        sys.add_file("/proc/meminfo", "MemTotal:       270000000 kB\nMemFree:        260000000 "
                                      "kB\nMemAvailable:   265000000 kB\n");
        sys.add_file("/proc/modules", "ext4 1036288 1 - Live 0x0000000000000000\n");
        sys.add_file("/lib/modules/" + kKernel + "/modules.dep", "");
        if (o.kernel_headers) {
            sys.add_dir("/usr/src/linux-headers-" + kKernel);
            sys.add_link("/lib/modules/" + kKernel + "/build", "/usr/src/linux-headers-" + kKernel);
        }
        static const char* const addresses[] = {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0",
                                                "0000:4e:00.0", "0000:87:00.0", "0000:90:00.0",
                                                "0000:b7:00.0", "0000:bd:00.0"};
        for (int i = 0; i < o.gpus && i < 8; ++i) {
            const std::string dir = std::string("/sys/bus/pci/devices/") + addresses[i] + "/";
            sys.add_file(dir + "vendor", "0x10de\n");
            sys.add_file(dir + "device", fmt::format("0x{:04x}\n", o.device_id));
            sys.add_file(dir + "class", "0x030200\n");
            if (o.nouveau_loaded) {
                sys.add_link(dir + "driver", "../../../bus/pci/drivers/nouveau");
            }
        }
        for (int i = 0; i < o.nvswitches; ++i) {
            const auto dir = fmt::format("/sys/bus/pci/devices/0000:{:02x}:00.0/", 0xc1 + i);
            sys.add_file(dir + "vendor", "0x10de\n");
            sys.add_file(dir + "device", "0x1af1\n");
            sys.add_file(dir + "class", "0x068000\n");
        }
        // An Intel host bridge, so the PCI walk sees a non-NVIDIA function too.
        sys.add_file("/sys/bus/pci/devices/0000:00:00.0/vendor", "0x8086\n");
        sys.add_file("/sys/bus/pci/devices/0000:00:00.0/device", "0x09a2\n");
        sys.add_file("/sys/bus/pci/devices/0000:00:00.0/class", "0x060000\n");
        if (o.nouveau_loaded) {
            sys.add_file("/sys/module/nouveau/refcnt", "4\n");
            sys.add_file("/proc/modules", "nouveau 2433024 4 - Live 0x0000000000000000\n"
                                          "ext4 1036288 1 - Live 0x0000000000000000\n");
        }
        if (o.secure_boot) {
            sys.add_file(
                "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
                std::string("\x06\x00\x00\x00\x01", 5));
        }
        sys.add_file(kDpkgStatus, dpkg_paragraph("bash", "5.2.15-2+b2", "install ok installed") +
                                      "\n" +
                                      dpkg_paragraph("linux-image-" + kKernel, "6.1.76-1",
                                                     "install ok installed"));
        sys.add_dir("/var/lib/dpkg/updates");
        sys.add_file("/usr/bin/systemctl", "");
        sys.add_file("/usr/sbin/update-initramfs", "");
        // initramfs-tools' state for the installed kernel, and its image.
        sys.add_file("/var/lib/initramfs-tools/" + kKernel, "");
        sys.add_file("/boot/initrd.img-" + kKernel, "initrd before gpuprov\n");
        sys.set_disk({.total_bytes = 500ull << 30, .free_bytes = o.free_gib << 30});
        serve_repos();
        script_gpgv();
        script_tools();
    }
    TestHost(const TestHost&) = delete;
    TestHost& operator=(const TestHost&) = delete;
    ~TestHost() {
        std::error_code ec;
        std::filesystem::remove_all(m_tmp, ec);
    }

    [[nodiscard]] HostFacts facts() const { return detect_facts(sys, matrix()); }

    // ---- dpkg database ----
    void set_package(const std::string& name, const std::string& version,
                     const std::string& status = "install ok installed") {
        auto paragraphs = split_paragraphs(sys.file(kDpkgStatus).value_or(""));
        const auto header = "Package: " + name + "\n";
        bool replaced = false;
        for (auto& p : paragraphs) {
            if (starts_with(p, header)) {
                p = dpkg_paragraph(name, version, status);
                replaced = true;
            }
        }
        if (!replaced) {
            paragraphs.push_back(dpkg_paragraph(name, version, status));
        }
        sys.add_file(kDpkgStatus, join(paragraphs, "\n"));
    }
    [[nodiscard]] std::optional<std::string> package_field(const std::string& name,
                                                           const std::string& field) const {
        for (const auto& p : split_paragraphs(sys.file(kDpkgStatus).value_or(""))) {
            if (!starts_with(p, "Package: " + name + "\n")) {
                continue;
            }
            for (const auto& line : lines(p)) {
                if (starts_with(line, field + ": ")) {
                    return line.substr(field.size() + 2);
                }
            }
        }
        return std::nullopt;
    }

    /// What installing `name` puts on the host besides its dpkg entry.
    void package_files(const std::string& name, const std::string& version) {
        if (starts_with(name, "nvidia-fabricmanager")) {
            sys.add_file("/lib/systemd/system/nvidia-fabricmanager.service",
                         "[Install]\nWantedBy=multi-user.target\n");
        } else if (starts_with(name, "nvidia-driver-pinning-")) {
            // What NVIDIA's pinning package installs: its preferences.d file.
            for (const auto& [path, content] :
                 tar_files_under(pin_tar(name, version), "etc/apt/preferences.d/")) {
                sys.add_file("/" + path, content);
            }
        } else if (starts_with(name, "cuda-drivers-") || name == "cuda-drivers" ||
                   starts_with(name, "nvidia-open")) {
            sys.add_file("/usr/bin/nvidia-smi", "\x7f"
                                                "ELF");
            if (m_opt.persistenced_unit) {
                sys.add_file("/lib/systemd/system/nvidia-persistenced.service",
                             "[Install]\nWantedBy=multi-user.target\n");
            }
            sys.add_file("/lib/modules/" + kKernel + "/updates/dkms/nvidia.ko", "");
            m_driver_version = version.substr(0, version.find('-'));
            m_driver_open = starts_with(name, "nvidia-open");
        } else if (name == "cuda-toolkit-12-4") {
            sys.add_file("/usr/local/cuda-12.4/bin/nvcc", "\x7f"
                                                          "ELF");
            sys.add_file("/usr/local/cuda-12.4/version.json",
                         read_fixture("engine/cmd/cuda-12.4-version.json"));
        } else if (name == "libcudnn9-cuda-12") {
            sys.add_file(kLibDir + "libcudnn.so.9", "");
        } else if (name == "libcudnn9-dev-cuda-12") {
            sys.add_file("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
                         read_fixture("engine/cmd/cudnn_version_v9-9.10.2.h"));
        } else if (name == "libnccl2") {
            sys.add_file(kLibDir + "libnccl.so.2", "");
        } else if (name == "nvidia-container-toolkit") {
            sys.add_file("/usr/bin/nvidia-ctk", "\x7f"
                                                "ELF");
        }
    }

    /// The whole profile in place without apply: packages, files, units, the module loaded.
    void converge() {
        const std::vector<std::pair<std::string, std::string>> pkgs = {
            {"cuda-drivers-550", "550.127.08-1"},
            {"nvidia-fabricmanager-550", "550.127.08-1"},
            {"libnvidia-nscq-550", "550.127.08-1"},
            {"cuda-toolkit-12-4", "12.4.1-1"},
            {"libcudnn9-cuda-12", "9.10.2.21-1"},
            {"libcudnn9-dev-cuda-12", "9.10.2.21-1"},
            {"libnccl2", "2.21.5-1+cuda12.4"},
            {"libnccl-dev", "2.21.5-1+cuda12.4"},
            {"nvidia-container-toolkit", "1.17.0-1"},
            {"nvidia-container-toolkit-base", "1.17.0-1"},
            {"libnvidia-container-tools", "1.17.0-1"},
            {"libnvidia-container1", "1.17.0-1"},
        };
        for (const auto& [name, version] : pkgs) {
            // Held: the driver and, with it, fabric manager and NSCQ (their version must
            // equal the driver's).
            const bool held = name == "cuda-drivers-550" || name == "nvidia-fabricmanager-550" ||
                              name == "libnvidia-nscq-550";
            set_package(name, version, held ? "hold ok installed" : "install ok installed");
            package_files(name, version);
        }
        sys.add_file("/proc/driver/nvidia/version",
                     read_fixture("engine/cmd/proc-driver-version-550.txt"));
    }

    /// Runs of a command whose argv starts with `prefix`.
    [[nodiscard]] std::vector<std::vector<std::string>>
    ran(const std::vector<std::string>& prefix) const {
        std::vector<std::vector<std::string>> out;
        for (const auto& argv : sys.commands_ran) {
            if (argv.size() >= prefix.size() &&
                std::equal(prefix.begin(), prefix.end(), argv.begin())) {
                out.push_back(argv);
            }
        }
        return out;
    }

    /// What apt-get update leaves under /var/lib/apt/lists/ for one of the test repositories:
    /// the InRelease and Packages the mirror serves, under apt's mangled names.
    void write_apt_lists(const std::string& url) {
        if (url == kDockerUrl) {
            // apt names a dists repository's files after their URLs under dists/.
            const auto prefix = "/var/lib/apt/lists/" + apt_list_name(kDockerDists);
            sys.add_file(prefix + "InRelease",
                         read_fixture("engine/docker/dists/bookworm/InRelease"));
            sys.add_file(prefix + "stable_binary-amd64_Packages",
                         read_fixture("engine/docker/dists/bookworm/" + kDockerPackages));
            return;
        }
        const auto dir = url == kCudaUrl         ? std::string("engine/cuda/")
                         : url == kUbuntuCudaUrl ? std::string("engine/ubuntu2404/")
                                                 : std::string("engine/container-toolkit/");
        const auto prefix = "/var/lib/apt/lists/" + apt_list_name(url);
        sys.add_file(prefix + "InRelease", read_fixture(dir + "InRelease"));
        sys.add_file(prefix + "Packages", read_fixture(dir + "Packages"));
    }
    /// apt's name for a test repository URL (https://mirror.test/a_b/ → mirror.test_a%5fb_).
    static std::string apt_list_name(const std::string& url) {
        auto s = url.substr(url.find("://") + 3);
        s = replace_all(s, "_", "%5f");
        return replace_all(s, "/", "_");
    }

    /// The data tar of a pinning package stand-in (what dpkg-deb --fsys-tarfile prints for it).
    static std::string pin_tar(const std::string& name, const std::string& version) {
        return read_fixture("engine/ubuntu2404/" + name + "_" + version + "_all.data.tar");
    }

    /// /proc/driver/nvidia/version for the installed driver, in its flavour's format (the open
    /// modules say "Open Kernel Module":
    /// tests/fixtures/cmd/files/proc-driver-version-580-open.txt).
    [[nodiscard]] std::string proc_driver_version() const {
        if (m_driver_open) {
            return replace_all(read_fixture("cmd/files/proc-driver-version-580-open.txt"),
                               "580.142", m_driver_version);
        }
        return replace_all(read_fixture("engine/cmd/proc-driver-version-550.txt"), "550.127.08",
                           m_driver_version);
    }

    /// The loaded module's (or else the installed driver's) version, for the tools' output.
    [[nodiscard]] std::string driver_version() const { return m_driver_version; }

    void clear_records() {
        sys.commands_ran.clear();
        sys.queries.clear();
        sys.files_written.clear();
        sys.files_removed.clear();
        sys.urls_fetched.clear();
    }

private:
    static std::vector<std::string> split_paragraphs(const std::string& text) {
        std::vector<std::string> out;
        std::size_t pos = 0;
        while (pos < text.size()) {
            auto end = text.find("\n\n", pos);
            const auto stop = end == std::string::npos ? text.size() : end + 1;
            auto p = text.substr(pos, stop - pos);
            if (!trim(p).empty()) {
                out.push_back(p);
            }
            pos = end == std::string::npos ? text.size() : end + 2;
        }
        return out;
    }

    void serve_repos() {
        sys.on_url(kKeyUrl, http_ok(read_fixture("engine/test-key.asc")));
        sys.on_url(kCudaUrl + "InRelease", http_ok(read_fixture("engine/cuda/InRelease")));
        sys.on_url(kCudaUrl + "Packages", http_ok(read_fixture("engine/cuda/Packages")));
        sys.on_url(kCtkUrl + "InRelease",
                   http_ok(read_fixture("engine/container-toolkit/InRelease")));
        sys.on_url(kCtkUrl + "Packages",
                   http_ok(read_fixture("engine/container-toolkit/Packages")));
        sys.on_url(kUbuntuCudaUrl + "InRelease",
                   http_ok(read_fixture("engine/ubuntu2404/InRelease")));
        sys.on_url(kUbuntuCudaUrl + "Packages",
                   http_ok(read_fixture("engine/ubuntu2404/Packages")));
        for (const auto* deb : {"nvidia-driver-pinning-595_595-1ubuntu1_all.deb",
                                "nvidia-driver-pinning-595.71.05_595.71.05-1ubuntu1_all.deb",
                                "nvidia-driver-pinning-610_610-2ubuntu1_all.deb"}) {
            sys.on_url(kUbuntuCudaUrl + deb,
                       http_ok(read_fixture(std::string("engine/ubuntu2404/") + deb)));
        }
        sys.on_url(kDockerDists + "InRelease",
                   http_ok(read_fixture("engine/docker/dists/bookworm/InRelease")));
        sys.on_url(kDockerDists + kDockerPackages,
                   http_ok(read_fixture("engine/docker/dists/bookworm/" + kDockerPackages)));
    }

    /// The real gpgv on the keyring the index loader wrote into the fake (copied to a temp
    /// file), so the fixtures' signatures are checked for real; where gpgv is missing, the
    /// status lines gpgv prints for a good signature by the test key.
    void script_gpgv() {
        m_tmp = std::filesystem::temp_directory_path() /
                fmt::format("gpuprov-engine-test-{}-{}", ::getpid(), m_serial++);
        std::filesystem::create_directories(m_tmp);
        sys.on_command_prefix({"gpgv"}, [this](const Command& cmd) {
            if (!gpgv_installed()) {
                const auto f = fingerprint();
                return gpuprov::testing::gpgv_answer(
                    cmd, "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + f +
                             " 2026-12-02 1796218524 0 4 0 1 10 01 " + f + "\n");
            }
            EXPECT_EQ(cmd.argv.size(), 8u);
            const auto real_keyring = m_tmp / "keyring.gpg";
            std::ofstream(real_keyring, std::ios::binary) << sys.file(cmd.argv.at(2)).value_or("");
            auto real = cmd;
            real.argv[2] = real_keyring.string();
            return LocalSystem().query(real);
        });
    }

    [[nodiscard]] bool unit_link(const std::string& unit) const {
        const auto target = unit.ends_with(".timer") ? "timers.target" : "multi-user.target";
        return sys.read_link(std::string("/etc/systemd/system/") + target + ".wants/" + unit)
            .has_value();
    }

    void script_tools() {
        sys.on_command_prefix({"apt-get", "update"}, [this](const Command& cmd) {
            if (fail_apt_update) {
                return CommandResult{
                    .exit_code = 100,
                    .err = "E: Failed to fetch " + kCudaUrl +
                           "InRelease  Could not resolve 'mirror.test'\n"
                           "E: Some index files failed to download. They have been ignored, or "
                           "old ones used instead.\n"};
            }
            // Like apt: the sources named by Dir::Etc::sourcelist land in the lists, deb822 or
            // one-line (`deb [signed-by=...] URL /`, cuda-keyring's .list).
            for (const auto& arg : cmd.argv) {
                if (!arg.starts_with("Dir::Etc::sourcelist=")) {
                    continue;
                }
                const auto source = sys.file(arg.substr(arg.find('=') + 1)).value_or("");
                if (contains(source,
                             "URIs: " + kDockerUrl + "\nSuites: bookworm\nComponents: stable\n")) {
                    write_apt_lists(kDockerUrl);
                }
                for (const auto& url : {kCudaUrl, kUbuntuCudaUrl, kCtkUrl}) {
                    if (contains(source, "URIs: " + url + "\nSuites: /\n") ||
                        contains(source, "] " + url + " /") ||
                        contains(source, "deb " + url + " /")) {
                        write_apt_lists(url);
                    }
                }
            }
            return CommandResult{.out = "Get:1 " + kCudaUrl +
                                        " InRelease [1581 B]\n"
                                        "Reading package lists...\n"};
        });
        sys.on_command_prefix({"apt-get", "install"}, [this](const Command& cmd) {
            std::vector<std::string> names;
            for (const auto& arg : cmd.argv) {
                const auto eq = arg.find('=');
                if (!arg.starts_with("-") && eq == std::string::npos && arg.ends_with("-") &&
                    arg.starts_with("nvidia-driver-pinning-")) {
                    // dpkg removes, it does not purge: the pin file is a conffile, and the
                    // package stays in state config-files until `dpkg --purge`.
                    const auto name = arg.substr(0, arg.size() - 1);
                    set_package(name, package_field(name, "Version").value_or(""),
                                "deinstall ok config-files");
                    continue;
                }
                if (arg.starts_with("-") || arg.find("::") != std::string::npos ||
                    eq == std::string::npos) {
                    continue;
                }
                installed_specs.push_back(arg);
                const auto name = arg.substr(0, eq);
                const auto version = arg.substr(eq + 1);
                set_package(name, version);
                package_files(name, version);
                names.push_back(name);
            }
            // What apt prints with APT::Status-Fd=1 (apt-pkg's install-progress.cc format),
            // handed over in 7-byte pieces as a pipe may cut it.
            std::string out = "pmstatus:dpkg-exec:0.0000:Running dpkg\n";
            for (std::size_t i = 0; i < names.size(); ++i) {
                out += fmt::format("pmstatus:{}:{:.4f}:Unpacking {} (amd64)\n", names[i],
                                   100.0 * static_cast<double>(i + 1) /
                                       static_cast<double>(names.size()),
                                   names[i]);
            }
            if (cmd.on_stdout) {
                for (std::size_t at = 0; at < out.size(); at += 7) {
                    cmd.on_stdout(std::string_view(out).substr(at, 7));
                }
            }
            return CommandResult{.out = out};
        });
        // apt's simulation, as far as unit tests need it: exactly the pins asked for (real apt's
        // dependency resolution is proven in the e2e suite); registered later, so it wins over
        // the install handler for `apt-get install --simulate`.
        sys.on_command_prefix({"apt-get", "install", "--simulate"}, [this](const Command& cmd) {
            simulations.push_back(cmd.argv);
            std::string out = "Reading package lists...\n";
            for (std::size_t i = 3; i < cmd.argv.size(); ++i) {
                const auto& arg = cmd.argv[i];
                if (arg.starts_with("-") || arg.find("::") != std::string::npos) {
                    continue; // options and their -o values
                }
                const auto eq = arg.find('=');
                if (eq == std::string::npos) {
                    if (arg.ends_with("-")) {
                        const auto name = arg.substr(0, arg.size() - 1);
                        out += "Remv " + name + " [" + package_field(name, "Version").value_or("") +
                               "]\n";
                    }
                    continue;
                }
                const auto name = arg.substr(0, eq);
                const auto version = arg.substr(eq + 1);
                const auto now = package_field(name, "Version");
                if (now == version) {
                    continue;
                }
                out += "Inst " + name + (now ? " [" + *now + "]" : "") + " (" + version +
                       " fake [amd64])\n";
            }
            return CommandResult{.out = out};
        });
        // dpkg --purge NAME: the config-files entry and the conffiles go.
        sys.on_command_prefix({"dpkg", "--purge"}, [this](const Command& cmd) {
            for (std::size_t i = 2; i < cmd.argv.size(); ++i) {
                const auto& name = cmd.argv[i];
                purged.push_back(name);
                if (starts_with(name, "nvidia-driver-pinning-")) {
                    const auto version = package_field(name, "Version").value_or("");
                    for (const auto& [path, content] :
                         tar_files_under(pin_tar(name, version), "etc/apt/preferences.d/")) {
                        sys.remove_file("/" + path);
                    }
                }
                auto paragraphs = split_paragraphs(sys.file(kDpkgStatus).value_or(""));
                std::erase_if(paragraphs, [&](const std::string& p) {
                    return starts_with(p, "Package: " + name + "\n");
                });
                sys.add_file(kDpkgStatus, join(paragraphs, "\n"));
            }
            return CommandResult{};
        });
        sys.on_command_prefix({"apt-mark", "hold"}, [this](const Command& cmd) {
            std::string out;
            for (std::size_t i = 2; i < cmd.argv.size(); ++i) {
                const auto version = package_field(cmd.argv[i], "Version");
                EXPECT_TRUE(version) << "apt-mark hold of uninstalled " << cmd.argv[i];
                set_package(cmd.argv[i], version.value_or(""), "hold ok installed");
                out += cmd.argv[i] + " set on hold.\n";
            }
            return CommandResult{.out = out};
        });
        sys.on_command_prefix({"dpkg", "--configure", "-a"}, [this](const Command&) {
            for (const auto& name : sys.list_dir("/var/lib/dpkg/updates")) {
                sys.remove_file("/var/lib/dpkg/updates/" + name);
            }
            sys.add_file(kDpkgStatus,
                         replace_all(sys.file(kDpkgStatus).value_or(""),
                                     "install ok half-configured", "install ok installed"));
            return CommandResult{};
        });
        sys.on_command_prefix({"update-initramfs", "-u"}, [this](const Command&) {
            sys.add_file("/boot/initrd.img-" + kKernel, "initrd with modprobe.d\n");
            return CommandResult{.out = "update-initramfs: Generating /boot/initrd.img-" + kKernel +
                                        "\n"};
        });
        sys.on_command_prefix({"modprobe", "nvidia"}, [this](const Command&) {
            if (sys.exists("/sys/module/nouveau")) {
                return CommandResult{.exit_code = 1,
                                     .err = "modprobe: ERROR: could not insert 'nvidia': No "
                                            "such device\n"};
            }
            if (m_driver_version.empty()) {
                return CommandResult{.exit_code = 1,
                                     .err = "modprobe: FATAL: Module nvidia not found in "
                                            "directory /lib/modules/" +
                                            kKernel + "\n"};
            }
            sys.add_file("/proc/driver/nvidia/version", proc_driver_version());
            return CommandResult{};
        });
        // apt-cache policy: every installed package's candidate is its installed version (no
        // newer one of another branch wins), as on a host whose branch lock holds.
        sys.on_command_prefix({"apt-cache", "policy"}, [this](const Command& cmd) {
            std::string out;
            for (std::size_t i = 2; i < cmd.argv.size(); ++i) {
                const auto v = package_field(cmd.argv[i], "Version");
                out += cmd.argv[i] + ":\n  Installed: " + v.value_or("(none)") +
                       "\n  Candidate: " + v.value_or("(none)") + "\n  Version table:\n";
            }
            return CommandResult{.out = out};
        });
        // dpkg-deb --fsys-tarfile FILE: the captured data tar of the stand-in package whose bytes
        // FILE holds (tests/fixtures/engine/build-pins.sh).
        sys.on_command_prefix({"dpkg-deb", "--fsys-tarfile"}, [this](const Command& cmd) {
            const auto bytes = sys.file(cmd.argv.at(2));
            const auto base = cmd.argv.at(2).substr(cmd.argv.at(2).rfind('/') + 1);
            if (!bytes || !base.ends_with(".deb")) {
                return CommandResult{.exit_code = 2,
                                     .err = "dpkg-deb: error: failed to read archive '" +
                                            cmd.argv.at(2) + "': No such file or directory\n"};
            }
            return CommandResult{.out =
                                     read_fixture("engine/ubuntu2404/" +
                                                  base.substr(0, base.size() - 4) + ".data.tar")};
        });
        sys.on_command_prefix({"systemctl"}, [this](const Command& cmd) {
            const auto& a = cmd.argv;
            if (a.size() >= 3 && a[1] == "enable") {
                const auto& unit = a.back();
                const auto target =
                    unit.ends_with(".timer") ? "timers.target" : "multi-user.target";
                const auto local = "/etc/systemd/system/" + unit;
                sys.add_link(std::string("/etc/systemd/system/") + target + ".wants/" + unit,
                             sys.exists(local) ? local : "/lib/systemd/system/" + unit);
                return CommandResult{};
            }
            if (a.size() == 4 && a[1] == "is-active" && a[2] == "--quiet") {
                return CommandResult{.exit_code = 3}; // docker is not installed
            }
            if (a.size() == 3 && a[1] == "is-active") {
                const bool up = unit_link(a[2] + ".service");
                return CommandResult{.exit_code = up ? 0 : 3,
                                     .out = up ? "active\n" : "inactive\n"};
            }
            if (a.size() == 2 && (a[1] == "daemon-reload" || a[1] == "reboot")) {
                return CommandResult{};
            }
            if (a.size() == 3 && a[1] == "disable") {
                return CommandResult{};
            }
            if (a.size() == 3 && a[1] == "restart") {
                if (a[2] == restart_fails) {
                    return CommandResult{.exit_code = 1,
                                         .err = "Job for " + a[2] +
                                                " failed because the control process exited "
                                                "with error code.\n"};
                }
                started[a[2]] = sys.now();
                return CommandResult{};
            }
            if (a.size() == 8 && a[1] == "show" && a[6] == "--timestamp=us+utc") {
                // systemd's TIMESTAMP_US_UTC: "%a %Y-%m-%d %H:%M:%S.<usec> UTC".
                const auto it = started.find(a[7]);
                if (it == started.end()) {
                    return CommandResult{.out = "ActiveState=inactive\nActiveEnterTimestamp=\n"};
                }
                const auto us = std::chrono::floor<std::chrono::microseconds>(it->second);
                const auto secs = std::chrono::floor<std::chrono::seconds>(us);
                return CommandResult{
                    .out = fmt::format("ActiveState=active\nActiveEnterTimestamp={:%a %Y-%m-%d "
                                       "%H:%M:%S}.{:06} UTC\n",
                                       secs, (us - secs).count())};
            }
            ADD_FAILURE() << "unexpected " << display_argv(a);
            return CommandResult{.exit_code = 1};
        });
        sys.on_command_prefix({"nvidia-ctk", "runtime", "configure"}, [this](const Command&) {
            sys.add_file("/etc/docker/daemon.json", read_fixture("cmd/files/docker-daemon.json"));
            return CommandResult{.out = "INFO Wrote updated config to /etc/docker/daemon.json\n"};
        });
        if (m_opt.docker) {
            sys.add_file("/usr/sbin/dockerd", "\x7f"
                                              "ELF");
            // Debian's docker.io depends on containerd.
            sys.add_file("/usr/bin/containerd", "\x7f"
                                                "ELF");
        }
        sys.on_command_prefix({"containerd", "--version"}, [this](const Command&) {
            if (!sys.exists("/usr/bin/containerd")) {
                return CommandResult{.exit_code = 127, .not_found = true};
            }
            return CommandResult{
                .out = "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1\n"};
        });
        sys.on_command_prefix({"dockerd", "--version"}, [this](const Command&) {
            if (!sys.exists("/usr/sbin/dockerd")) {
                return CommandResult{.exit_code = 127, .not_found = true};
            }
            return CommandResult{.out = "Docker version 20.10.24+dfsg1, build 297e128\n"};
        });
        sys.on_command_prefix({"docker", "image", "ls"}, [this](const Command&) {
            if (!sys.exists("/usr/sbin/dockerd")) {
                return CommandResult{.exit_code = 127, .not_found = true};
            }
            return CommandResult{}; // the daemon answers; no image
        });
        sys.on_command_prefix({"nvidia-ctk", "--version"}, [this](const Command&) {
            if (!sys.exists("/usr/bin/nvidia-ctk")) {
                return CommandResult{.exit_code = 127, .not_found = true};
            }
            return CommandResult{.out = "NVIDIA Container Toolkit CLI version 1.17.0\n"};
        });
        sys.on_command_prefix(smi_query_argv(), [this](const Command&) {
            if (!sys.exists("/usr/bin/nvidia-smi")) {
                return CommandResult{.exit_code = 127, .not_found = true};
            }
            if (!sys.exists("/proc/driver/nvidia/version")) {
                return CommandResult{
                    .exit_code = 9,
                    .out = read_fixture("cmd/nvidia-smi/error-driver-not-loaded.txt")};
            }
            // The loaded module's version, as nvidia-smi reports it.
            const auto loaded =
                parse_proc_driver_version(sys.file("/proc/driver/nvidia/version").value_or(""));
            auto csv = replace_all(read_fixture("engine/cmd/nvidia-smi-query-a100x4-550.csv"),
                                   "550.127.08", loaded ? loaded->version : "");
            if (!unit_link("nvidia-persistenced.service")) {
                csv = replace_all(csv, "Enabled, Disabled", "Disabled, Disabled");
            }
            return CommandResult{.out = csv};
        });
        // Doctor's probes (the driver's reboot evidence quotes its diagnosis): this host builds
        // no DKMS modules, and dpkg has nothing half-installed to report.
        sys.on_command_prefix({"dkms", "status"}, [](const Command&) {
            return CommandResult{.exit_code = 127, .not_found = true};
        });
        sys.on_command_prefix({"dpkg", "--audit"}, [](const Command&) { return CommandResult{}; });
        // Doctor's fabric manager skew probe: this boot's journal of the unit has nothing to say.
        sys.on_command_prefix({"journalctl", "-u", "nvidia-fabricmanager"},
                              [](const Command&) { return CommandResult{}; });
        // fabric-manager.fabric-state: a real 4x A100 SXM report (R555), whose Fabric sections
        // say N/A as every GPU before Hopper does.
        // MIG mode (doctor's probe, the mig step): these A100s have MIG disabled.
        sys.on_command_prefix(
            {"nvidia-smi", "--query-gpu=index,mig.mode.current,mig.mode.pending"},
            [this](const Command&) {
                if (!sys.exists("/proc/driver/nvidia/version")) {
                    return CommandResult{
                        .exit_code = 9,
                        .out = read_fixture("cmd/nvidia-smi/error-driver-not-loaded.txt")};
                }
                return CommandResult{.out = "0, Disabled, Disabled\n1, Disabled, Disabled\n"
                                            "2, Disabled, Disabled\n3, Disabled, Disabled\n"};
            });
        sys.on_command_prefix({"nvidia-smi", "-q"}, [this](const Command&) {
            if (!sys.exists("/usr/bin/nvidia-smi")) {
                return CommandResult{.exit_code = 127, .not_found = true};
            }
            if (!sys.exists("/proc/driver/nvidia/version")) {
                return CommandResult{
                    .exit_code = 9,
                    .out = read_fixture("cmd/nvidia-smi/error-driver-not-loaded.txt")};
            }
            return CommandResult{.out = read_fixture("cmd/nvidia-smi/q/q-555-4xa100-sxm-na.txt")};
        });
        sys.on_command_prefix({"nvidia-smi", "topo", "-m"}, [](const Command&) {
            return CommandResult{.out = read_fixture("engine/cmd/topo-a100x4-nvswitch.txt")};
        });
        sys.on_command_prefix(
            {"/usr/local/cuda-12.4/bin/nvcc", "--version"}, [this](const Command&) {
                if (!sys.exists("/usr/local/cuda-12.4/bin/nvcc")) {
                    return CommandResult{.exit_code = 127, .not_found = true};
                }
                return CommandResult{.out = read_fixture("cmd/nvcc/cuda-12.4.txt")};
            });
        sys.on_command_prefix({"/sbin/ldconfig", "-p"}, [this](const Command&) {
            std::string out;
            int n = 0;
            for (const auto& lib : sys.list_dir(kLibDir)) {
                out += "\t" + lib + " (libc6,x86-64) => " + kLibDir + lib + "\n";
                ++n;
            }
            return CommandResult{
                .out = fmt::format("{} libs found in cache `/etc/ld.so.cache'\n", n) + out};
        });
        sys.on_command_prefix(
            {"dpkg-query", "-W", "-f=${Version}", "libnccl2"}, [this](const Command&) {
                const auto v = package_field("libnccl2", "Version");
                if (!v) {
                    return CommandResult{.exit_code = 1,
                                         .err = "dpkg-query: no packages found matching "
                                                "libnccl2\n"};
                }
                return CommandResult{.out = *v};
            });
    }

    HostOptions m_opt;
    std::string m_driver_version;
    bool m_driver_open = false;
    std::filesystem::path m_tmp;
    static inline int m_serial = 0;
};

} // namespace gpuprov::enginetest

namespace gpuprov::enginetest {

/// One step's check (and apply) against a TestHost, with the context the engine would build:
/// facts detected from the fake, repositories loaded lazily through the fake's URLs.
class StepRunner {
public:
    StepRunner(TestHost& host, const Profile& profile) : StepRunner(host.sys, profile) {}
    /// Any fake host (the EL fixture trees of test_el_plan.cpp).
    StepRunner(FakeSystem& sys, const Profile& profile)
        : m_sys(sys), m_profile(profile), m_facts(detect_facts(sys, matrix())),
          m_repos(sys, m_profile, m_facts, matrix(), kCacheDir), m_steps(make_steps()) {}

    [[nodiscard]] const StepContext& ctx() const { return m_ctx; }
    [[nodiscard]] const HostFacts& facts() const { return m_facts; }
    Step& step(std::string_view id) {
        for (auto& s : m_steps) {
            if (s->id() == id) {
                return *s;
            }
        }
        throw std::logic_error("no step " + std::string(id));
    }
    CheckResult check(std::string_view id) { return step(id).check(m_ctx, m_sys); }
    Plan plan() { return build_plan(m_ctx, m_sys, m_steps, {}); }

private:
    FakeSystem& m_sys;
    const Profile& m_profile;
    HostFacts m_facts;
    LiveRepoProvider m_repos;
    StepContext m_ctx{m_profile, m_facts, matrix(), m_repos};
    std::vector<std::unique_ptr<Step>> m_steps;
};

inline std::vector<std::string> specs(const std::vector<PackagePin>& pins) {
    std::vector<std::string> out;
    for (const auto& p : pins) {
        out.push_back(p.spec());
    }
    return out;
}

inline std::vector<std::string> targets(const CheckResult& r, Change::Kind kind) {
    std::vector<std::string> out;
    for (const auto& c : r.changes) {
        if (c.kind == kind) {
            out.push_back(c.target);
        }
    }
    return out;
}

/// Records what apply reports.
class RecordingReporter final : public Reporter {
public:
    std::vector<std::pair<std::string, StepStatus>> finished;
    std::vector<std::string> infos;
    void step_started(std::string_view, std::string_view) override {}
    void step_finished(std::string_view id, StepStatus status, std::string_view) override {
        finished.emplace_back(std::string(id), status);
    }
    void info(std::string_view message) override { infos.emplace_back(message); }
    std::vector<std::pair<double, std::string>> progressed;
    int progress_ends = 0;
    void progress(double percent, std::string_view what) override {
        progressed.emplace_back(percent, std::string(what));
    }
    void progress_done() override { ++progress_ends; }
};

/// As the resumed run reads it: the copy under /etc/gpuprov/resume/ (a run from elsewhere sets
/// profile_text, which apply installs there).
inline const std::string kProfileArg = "/etc/gpuprov/resume/engine-test.yaml";

/// The fixture every apply_profile test shares: the test profile, options, a reporter.
struct ApplyTest : ::testing::Test {
    Profile profile = load_test_profile();
    ApplyOptions options{.profile_arg = kProfileArg};
    RecordingReporter reporter;

    ApplyResult apply(TestHost& host) {
        return apply_profile(host.sys, profile, matrix(), options, reporter);
    }
    static Journal journal(const TestHost& host) {
        const auto j = load_journal(host.sys);
        EXPECT_TRUE(j.has_value());
        return j.value_or(Journal{});
    }
};

} // namespace gpuprov::enginetest

namespace gpuprov::enginetest {

inline const std::string kManaged = "# Managed by gpuprov; local edits are replaced.\n";
inline const std::string kBlacklistPath = "/etc/modprobe.d/blacklist-nouveau.conf";
inline const std::string kBlacklist = kManaged + "blacklist nouveau\noptions nouveau modeset=0\n";
inline const std::string kCudaKeyring = "/usr/share/keyrings/gpuprov-cuda.gpg";
inline const std::string kCudaSourcePath = "/etc/apt/sources.list.d/gpuprov-cuda.sources";
inline const std::string kCudaSource =
    "# Managed by gpuprov (profile engine-test); local edits are replaced.\n"
    "Types: deb\nURIs: https://mirror.test/cuda/debian12/x86_64/\nSuites: /\n"
    "Signed-By: /usr/share/keyrings/gpuprov-cuda.gpg\n";
inline const std::string kCtkKeyring = "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg";
inline const std::string kCtkSourcePath =
    "/etc/apt/sources.list.d/gpuprov-container-toolkit.sources";
inline const std::string kCtkSource =
    "# Managed by gpuprov (profile engine-test); local edits are replaced.\n"
    "Types: deb\nURIs: https://mirror.test/libnvidia-container/stable/deb/amd64/\nSuites: /\n"
    "Signed-By: /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg\n";
inline const std::string kProfileDPath = "/etc/profile.d/gpuprov-cuda.sh";
inline const std::string kProfileD = kManaged + "# CUDA 12.4 on PATH for login shells.\n"
                                                "case \":${PATH}:\" in\n"
                                                "    *:/usr/local/cuda-12.4/bin:*) ;;\n"
                                                "    *) export PATH=\"/usr/local/cuda-12.4/bin"
                                                "${PATH:+:${PATH}}\" ;;\n"
                                                "esac\n";
inline const std::string kPersistencedDropinPath =
    "/etc/systemd/system/nvidia-persistenced.service.d/gpuprov.conf";
inline const std::string kPersistencedDropin =
    kManaged + "[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced --user root "
               "--persistence-mode --verbose\n";
inline const std::string kMetricsService = "/etc/systemd/system/gpuprov-metrics.service";
inline const std::string kMetricsTimer = "/etc/systemd/system/gpuprov-metrics.timer";
inline const std::string kResumeUnit = "/etc/systemd/system/gpuprov-resume.service";

inline const std::vector<std::string> kInstallPrefix = {
    "apt-get", "install",
    "--yes",   "--allow-downgrades",
    "-o",      "DPkg::Lock::Timeout=600",
    "-o",      "Dpkg::Options::=--force-confdef",
    "-o",      "Dpkg::Options::=--force-confold",
    "-o",      "APT::Status-Fd=1"};

inline std::vector<std::string> refresh_argv(const std::string& source) {
    return {"apt-get", "update",
            "-o",      "Dir::Etc::sourcelist=" + source,
            "-o",      "Dir::Etc::sourceparts=-",
            "-o",      "APT::Get::List-Cleanup=0",
            "-o",      "DPkg::Lock::Timeout=600"};
}

/// Every file and link the profile's configure parts put in place, as check expects them.
inline void converge_config(TestHost& host) {
    auto& sys = host.sys;
    sys.add_file(kBlacklistPath, kBlacklist);
    sys.add_file(kCudaKeyring, read_fixture("engine/test-key.gpg"));
    sys.add_file(kCudaSourcePath, kCudaSource);
    sys.add_file(kCtkKeyring, read_fixture("engine/test-key.gpg"));
    sys.add_file(kCtkSourcePath, kCtkSource);
    sys.add_file(kProfileDPath, kProfileD);
    sys.add_file(kPersistencedDropinPath, kPersistencedDropin);
    sys.add_file("/etc/docker/daemon.json", read_fixture("cmd/files/docker-daemon.json"));
    sys.add_file(kMetricsService,
                 kManaged + "[Unit]\nDescription=gpuprov GPU metrics for the node_exporter "
                            "textfile collector\n\n[Service]\nType=oneshot\n"
                            "ExecStart=/usr/local/bin/gpuprov metrics --textfile "
                            "/var/lib/prometheus/node-exporter --temperature-alert-c 85\n");
    sys.add_file(kMetricsTimer, kManaged + "[Unit]\nDescription=Refresh gpuprov GPU metrics every "
                                           "minute\n\n[Timer]\nOnBootSec=30s\n"
                                           "OnUnitActiveSec=60s\n\n[Install]\n"
                                           "WantedBy=timers.target\n");
    sys.add_dir("/var/lib/prometheus/node-exporter");
    sys.add_link("/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service",
                 "/lib/systemd/system/nvidia-persistenced.service");
    sys.add_link("/etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service",
                 "/lib/systemd/system/nvidia-fabricmanager.service");
    sys.add_link("/etc/systemd/system/timers.target.wants/gpuprov-metrics.timer", kMetricsTimer);
    // Effects, not only files: apt has read both sources, the initramfs postdates the blacklist.
    host.write_apt_lists(kCudaUrl);
    host.write_apt_lists(kCtkUrl);
    sys.add_file("/boot/initrd.img-" + kKernel, "initrd with modprobe.d\n");
}

} // namespace gpuprov::enginetest
