#include "cli_common.hpp"
#include "profile_arg.hpp"

#include <fmt/format.h>
#include <fstream>
#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>
#include <sstream>

namespace gpuprov::cli {

void add_cloud_init_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "cloud-init", "print #cloud-config user-data that provisions PROFILE on first boot");
    static std::string profile_arg;
    static std::string install_from;
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file")->required();
    cmd->add_option("--install-from", install_from,
                    "HTTPS URL of a gpuprov binary to download (default: already in the image)");
    cmd->callback([&exit_code] {
        // Validate now: a typo must fail here, not on a VM at first boot.
        const auto profile = load_profile(profile_arg, Matrix::builtin());
        if (!install_from.empty() && !starts_with(install_from, "https://")) {
            throw UsageError("--install-from must be an https:// URL");
        }
        std::string out = "#cloud-config\n"
                          "# gpuprov: provisions profile " +
                          profile.name +
                          " on first boot; gpuprov-resume.service finishes after the driver's "
                          "reboot.\n";
        std::string target = profile.name;
        if (!is_builtin_profile(profile_arg)) {
            std::ifstream in(profile_arg);
            std::stringstream ss;
            ss << in.rdbuf();
            if (ss.str().find("extends:") != std::string::npos &&
                !is_builtin_profile(
                    profile.extends_chain.empty() ? "" : profile.extends_chain.front())) {
                throw UsageError("cloud-init embeds one profile file; it cannot carry a profile "
                                 "that extends another file (extend a built-in instead)");
            }
            target = "/etc/gpuprov/" + profile.name + ".yaml";
            out += "write_files:\n  - path: " + target +
                   "\n    permissions: '0644'\n    content: |\n" + indent_lines(ss.str(), "      ");
        }
        out += "runcmd:\n";
        if (!install_from.empty()) {
            out += fmt::format("  - [curl, --fail, --silent, --show-error, --location, --retry, "
                               "'5', --output, /usr/local/bin/gpuprov, '{}']\n",
                               install_from);
            out += "  - [chmod, '0755', /usr/local/bin/gpuprov]\n";
        }
        out += fmt::format(
            "  - [/usr/local/bin/gpuprov, apply, '{}', --yes, --reboot, if-needed]\n", target);
        std::cout << out;
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
