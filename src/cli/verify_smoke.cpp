#include "verify_smoke.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>

namespace gpuprov::cli {

void refuse_smoke_under_root(const GlobalOptions& opts) {
    if (foreign_root(opts)) {
        throw UsageError(fmt::format(
            "verify --smoke --root {} is refused: the smoke tests run nvcc, the compiled program "
            "and Python on this host, not in the root; run gpuprov inside it instead (chroot), "
            "or leave out --smoke",
            opts.root));
    }
}

std::vector<SmokeOutcome> run_smoke_tests(const GlobalOptions& opts, System& sys,
                                          const Profile& profile, const HostFacts& facts) {
    refuse_smoke_under_root(opts);
    const PrivateTempDir dir(opts, sys, "gpuprov-smoke");
    if (dir.path.empty()) {
        throw HostError(fmt::format("verify --smoke needs a private temporary directory under "
                                    "{}: {}; set TMPDIR to a writable directory",
                                    dir.base, dir.error));
    }
    std::vector<std::string> search;
    if (const auto path = sys.env("PATH")) {
        search = split(*path, ':');
    }
    return run_smoke({profile, facts, dir.path, search}, sys);
}

void print_smoke_human(const std::vector<SmokeOutcome>& smoke, bool color) {
    const auto mark = [color](SmokeStatus s) {
        const char* plain = s == SmokeStatus::passed ? "✓" : s == SmokeStatus::failed ? "✗" : "-";
        if (!color) {
            return std::string(plain);
        }
        const char* code = s == SmokeStatus::passed ? "32" : s == SmokeStatus::failed ? "31" : "33";
        return fmt::format("\033[{}m{}\033[0m", code, plain);
    };
    std::size_t counts[3] = {0, 0, 0};
    std::cout << "smoke tests:\n";
    for (const auto& s : smoke) {
        ++counts[static_cast<int>(s.status)];
        if (s.status == SmokeStatus::passed) {
            std::cout << fmt::format("{} {:<26} {}\n", mark(s.status), s.id, s.found);
            continue;
        }
        std::cout << fmt::format("{} {:<26} {}: {}\n", mark(s.status), s.id,
                                 smoke_status_name(s.status), s.reason);
        if (s.status == SmokeStatus::failed && !s.command.empty()) {
            std::cout << fmt::format("    ran: {}\n", s.command);
        }
        if (s.status == SmokeStatus::failed && !s.excerpt.empty()) {
            std::cout << indent_lines(s.excerpt, "    | ");
        }
        if (!s.fix.empty()) {
            std::cout << fmt::format("    fix: {}\n", s.fix);
        }
    }
    std::cout << fmt::format("{} smoke tests: {} passed, {} failed, {} skipped\n", smoke.size(),
                             counts[0], counts[1], counts[2]);
}

nlohmann::json smoke_to_json(const std::vector<SmokeOutcome>& smoke) {
    auto list = nlohmann::json::array();
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& s : smoke) {
        ++counts[static_cast<int>(s.status)];
        list.push_back({{"id", s.id},
                        {"status", smoke_status_name(s.status)},
                        {"command", s.command},
                        {"excerpt", s.excerpt},
                        {"found", s.found},
                        {"reason", s.reason},
                        {"fix", s.fix}});
    }
    return {{"tests", list},
            {"summary",
             {{"total", smoke.size()},
              {"passed", counts[0]},
              {"failed", counts[1]},
              {"skipped", counts[2]}}}};
}

std::string smoke_junit_cases(const std::vector<SmokeOutcome>& smoke,
                              std::string (*escape)(std::string_view)) {
    std::string xml;
    for (const auto& s : smoke) {
        xml += fmt::format("    <testcase classname=\"gpuprov.smoke\" name=\"{}\">", escape(s.id));
        if (s.status == SmokeStatus::failed) {
            xml +=
                fmt::format("\n      <failure type=\"smoke\" message=\"{}\">{}</failure>\n    ",
                            escape(s.reason),
                            escape("command: " + s.command + "\n" + s.excerpt + "\nfix: " + s.fix));
        } else if (s.status == SmokeStatus::skipped) {
            xml += fmt::format("\n      <skipped message=\"{}\"/>\n    ", escape(s.reason));
        }
        xml += "</testcase>\n";
    }
    return xml;
}

bool any_failed(const std::vector<SmokeOutcome>& smoke) {
    for (const auto& s : smoke) {
        if (s.status == SmokeStatus::failed) {
            return true;
        }
    }
    return false;
}

} // namespace gpuprov::cli
