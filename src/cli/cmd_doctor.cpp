#include "cli_common.hpp"
#include "render.hpp"

#include <fmt/format.h>
#include <gpuprov/doctor.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

namespace gpuprov::cli {

namespace {

nlohmann::json to_json(const std::vector<Finding>& findings) {
    auto list = nlohmann::json::array();
    int errors = 0;
    for (const auto& f : findings) {
        errors += f.severity == "error" ? 1 : 0;
        auto evidence = nlohmann::json::array();
        for (const auto& e : f.evidence) {
            evidence.push_back({{"command", e.command}, {"excerpt", e.excerpt}});
        }
        list.push_back({{"id", f.id},
                        {"severity", f.severity},
                        {"summary", f.summary},
                        {"evidence", evidence},
                        {"fix", f.fix}});
    }
    const auto warnings = static_cast<int>(findings.size()) - errors;
    return {{"healthy", findings.empty()},
            {"findings", list},
            {"summary", {{"errors", errors}, {"warnings", warnings}}}};
}

void print_human(const std::vector<Finding>& findings, bool color) {
    if (findings.empty()) {
        std::cout << "no problems found\n";
        return;
    }
    for (const auto& f : findings) {
        const bool error = f.severity == "error";
        const auto tag = fmt::format("{:<7}", f.severity);
        std::cout << fmt::format("{} {}: {}\n",
                                 color ? (error ? "\033[31m" : "\033[33m") + tag + "\033[0m" : tag,
                                 f.id, f.summary);
        for (const auto& e : f.evidence) {
            std::cout << fmt::format("    $ {}\n", e.command);
            for (const auto& line : split(e.excerpt, '\n')) {
                std::cout << fmt::format("      {}\n", line);
            }
        }
        std::cout << fmt::format("    fix: {}\n", f.fix);
    }
}

} // namespace

void add_doctor_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("doctor", "diagnose the known NVIDIA failure modes");
    static bool json = false;
    static std::string profile_arg;
    static std::optional<int> temperature;
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->add_option("--profile", profile_arg, "also check against this profile's CUDA version")
        ->type_name(kProfileValue);
    // One name for one idea, as `metrics` spells it; the older --temperature-alert still works.
    cmd->add_option("--temperature-alert-c,--temperature-alert", temperature,
                    "GPU temperature (C) above which to warn (default: the profile's, or 85)")
        ->type_name("C");
    cmd->callback([&opts, &exit_code] {
        const auto& matrix = Matrix::builtin();
        auto& sys = host_system(opts);
        std::optional<Profile> profile;
        if (!profile_arg.empty()) {
            profile = load_profile(profile_arg, matrix);
        }
        std::optional<Journal> journal;
        try {
            journal = load_journal(sys);
        } catch (const Error&) {
            // Doctor is what one runs when things are broken; a bad journal must not stop it.
        }
        DoctorOptions options;
        options.matrix = &matrix;
        options.profile = profile ? &*profile : nullptr;
        options.journal = journal ? &*journal : nullptr;
        options.judge_signature = &module_trusted_at_boot;
        if (profile && profile->monitoring) {
            options.temperature_alert_c = profile->monitoring->temperature_alert_c;
        }
        if (temperature) {
            options.temperature_alert_c = *temperature;
        }
        const auto facts = detect_facts(sys, matrix);
        const auto findings = diagnose(sys, facts, options);
        if (json) {
            std::cout << json_text(versioned(to_json(findings))) << "\n";
        } else {
            print_human(findings, opts.color());
        }
        exit_code = findings.empty() ? kExitOk : kExitFailed;
    });
}

} // namespace gpuprov::cli
