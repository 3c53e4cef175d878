#include "cli_common.hpp"
#include "profile_arg.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gpuprov/builtin_names.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <iostream>

namespace gpuprov::cli {

bool is_builtin_profile(const std::string& name) {
    return builtin_profile_text(name).has_value();
}

std::string canonical_profile_arg(const std::string& arg) {
    if (is_builtin_profile(arg)) {
        return arg;
    }
    return std::filesystem::absolute(arg).lexically_normal().string();
}

void add_profiles_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
    auto* cmd = app.add_subcommand("profiles", "list, show and validate profiles");
    cmd->require_subcommand(1);

    cmd->add_subcommand("list", "list the built-in profiles")->callback([] {
        for (const auto& name : builtin_profile_names()) {
            const auto p = load_profile(name, Matrix::builtin());
            std::cout << fmt::format("{:<12} {}\n", name, p.description);
        }
    });

    auto* show = cmd->add_subcommand("show", "print a profile (built-in name or file)");
    static std::string show_name;
    show->add_option("NAME", show_name, "built-in name or YAML file")
        ->type_name(kProfileValue)
        ->required();
    show->callback([&exit_code] {
        if (const auto text = builtin_profile_text(show_name)) {
            std::cout << *text;
            return;
        }
        // Loading first means an invalid file is reported, not echoed.
        (void)load_profile(show_name, Matrix::builtin());
        std::ifstream in(show_name);
        std::cout << in.rdbuf();
        exit_code = kExitOk;
    });

    auto* validate =
        cmd->add_subcommand("validate", "check profile files; errors as file:line:col");
    static std::vector<std::string> files;
    validate->add_option("FILE", files, "profile files")->type_name(kFileValue)->required();
    validate->callback([&exit_code] {
        for (const auto& file : files) {
            try {
                const auto p = load_profile(file, Matrix::builtin());
                std::cout << fmt::format("{}: ok (profile {})\n", file, p.name);
            } catch (const ProfileError& e) {
                std::cerr << e.what() << "\n";
                exit_code = kExitFailed;
            }
        }
    });
}

} // namespace gpuprov::cli
