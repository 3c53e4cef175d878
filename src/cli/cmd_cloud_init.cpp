// `gpuprov cloud-init PROFILE`: #cloud-config user-data that provisions PROFILE on first boot.
// Emitted with yaml-cpp, so no value can break the document's structure; `cloud-init schema`
// accepts it (tests/cli/cli_smoke.sh).
#include "cli_common.hpp"
#include "profile_arg.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>
#include <yaml-cpp/yaml.h>

namespace gpuprov::cli {

namespace {

constexpr const char* kDownload = "/usr/local/bin/gpuprov.download";
constexpr const char* kChecksum = "/etc/gpuprov/gpuprov.sha256";
// cloud-init runs per-boot scripts in its final stage on every boot, so on the boot after the
// driver's reboot its exit status becomes `cloud-init status`. The resume unit is ordered
// before cloud-final.service (src/engine/resume.cpp), so the resumed run has ended by then.
constexpr const char* kPerBootScript = "/var/lib/cloud/scripts/per-boot/gpuprov-status";

bool is_sha256(std::string_view s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

void write_file(YAML::Emitter& out, const std::string& path, const std::string& mode,
                const std::string& content) {
    out << YAML::BeginMap;
    out << YAML::Key << "path" << YAML::Value << path;
    out << YAML::Key << "owner" << YAML::Value << "root:root";
    out << YAML::Key << "permissions" << YAML::Value << YAML::SingleQuoted << mode;
    out << YAML::Key << "content" << YAML::Value << YAML::Literal << content;
    out << YAML::EndMap;
}

void command(YAML::Emitter& out, const std::vector<std::string>& argv) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& word : argv) {
        out << YAML::SingleQuoted << word;
    }
    out << YAML::EndSeq;
}

} // namespace

void add_cloud_init_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "cloud-init", "print #cloud-config user-data that provisions PROFILE on first boot");
    static std::string profile_arg;
    static std::string install_from;
    static std::string sha256;
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file")
        ->type_name(kProfileValue)
        ->required();
    cmd->add_option("--install-from", install_from,
                    "HTTPS URL of a gpuprov binary to install first (needs --sha256); default: "
                    "gpuprov is already in the image")
        ->type_name("URL");
    cmd->add_option("--sha256", sha256, "SHA-256 of the --install-from binary (64 hex digits)")
        ->type_name("HEX");
    cmd->callback([&exit_code] {
        // Validate now: a typo must fail here, not on a VM at first boot.
        const auto profile = load_profile(profile_arg, Matrix::builtin());
        if (!install_from.empty() && !starts_with(install_from, "https://")) {
            throw UsageError("--install-from must be an https:// URL");
        }
        if (!install_from.empty() && !is_sha256(to_lower(sha256))) {
            // A binary fetched and run as root on first boot is pinned like NVIDIA's keys are.
            throw UsageError("--install-from needs --sha256 with the binary's 64-hex-digit "
                             "SHA-256 (sha256sum gpuprov)");
        }
        if (install_from.empty() && !sha256.empty()) {
            throw UsageError("--sha256 goes with --install-from");
        }

        YAML::Emitter out;
        out << YAML::BeginMap;
        std::string target = profile.name;
        const bool builtin = is_builtin_profile(profile_arg);
        std::string gpuprov = "gpuprov"; // /usr/bin (the package) or /usr/local/bin, via PATH
        if (!install_from.empty()) {
            gpuprov = "/usr/local/bin/gpuprov";
        }
        out << YAML::Key << "write_files" << YAML::Value << YAML::BeginSeq;
        if (!builtin) {
            // The file with its extends: chain resolved: the parents are not on the VM.
            target = "/etc/gpuprov/" + profile.name + ".yaml";
            write_file(out, target, "0644", resolved_profile_yaml(profile_arg));
        }
        if (!install_from.empty()) {
            write_file(out, kChecksum, "0644",
                       fmt::format("{}  {}\n", to_lower(sha256), kDownload));
        }
        // Before the first run there is no journal and nothing to report (the first boot's
        // runcmd reports for itself); afterwards the last run's result is the boot's result.
        write_file(out, kPerBootScript, "0755",
                   fmt::format("#!/bin/sh\n"
                               "# gpuprov: `cloud-init status` reports gpuprov's last run.\n"
                               "[ -e {} ] || exit 0\n"
                               "exec {} status\n",
                               kJournalPath, gpuprov));
        out << YAML::EndSeq;

        out << YAML::Key << "runcmd" << YAML::Value << YAML::BeginSeq;
        // One command, so its exit status is the boot's result: cloud-init runs runcmd as one
        // script without `set -e`, where a failed download used to fall through to an older
        // gpuprov already in the image, and that run's success became the boot's. Here the
        // download, the checksum and the install must each succeed before apply runs.
        // gpuprov does not reboot by itself here: a reboot in the middle of runcmd would leave
        // cloud-init's first boot unfinished and run runcmd again. Exit 3 (reboot required,
        // resume unit in place) is a success for this boot; power_state then reboots once
        // cloud-init is done. The profile ("$1") and the URL ("$2") reach sh as arguments, never
        // as script text.
        std::string script = "set -e; ";
        std::vector<std::string> args{"gpuprov-apply", target};
        if (!install_from.empty()) {
            script += fmt::format("rm -f {0}; curl --fail --silent --show-error --location "
                                  "--retry 5 --proto =https --proto-redir =https --output {0} \"$2\"; "
                                  "sha256sum --check --strict {1}; "
                                  "install -m 0755 {0} {2}; rm -f {0}; ",
                                  kDownload, kChecksum, gpuprov);
            args.push_back(install_from);
        }
        script += fmt::format("rc=0; {} apply \"$1\" --yes --reboot never || rc=$?; "
                              "[ \"$rc\" -eq 3 ] && exit 0; exit \"$rc\"",
                              gpuprov);
        std::vector<std::string> argv{"sh", "-c", script};
        argv.insert(argv.end(), args.begin(), args.end());
        command(out, argv);
        out << YAML::EndSeq;
        out << YAML::Key << "power_state" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "mode" << YAML::Value << "reboot";
        out << YAML::Key << "message" << YAML::Value
            << "gpuprov: rebooting to load the NVIDIA driver; gpuprov-resume.service finishes";
        out << YAML::Key << "timeout" << YAML::Value << 300;
        // Reboot only when the last run asked for it (status exits 3).
        out << YAML::Key << "condition" << YAML::Value;
        command(out, {"sh", "-c", fmt::format("{} status >/dev/null 2>&1; [ $? -eq 3 ]", gpuprov)});
        out << YAML::EndMap;
        out << YAML::EndMap;
        if (!out.good()) {
            throw Error(std::string("could not emit the cloud-config: ") + out.GetLastError());
        }
        std::cout << "#cloud-config\n"
                  << "# gpuprov: provisions profile " << profile.name
                  << " on first boot; gpuprov-resume.service finishes after the driver's "
                     "reboot.\n"
                  << out.c_str() << "\n";
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
