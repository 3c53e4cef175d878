#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

// dpkg's audit headings (dpkg 1.21 src/main/enquiry.c), each followed by " name  summary" lines.
std::string state_of_heading(std::string_view line) {
    if (line.find("unpacked but not yet configured") != std::string_view::npos) {
        return "unpacked";
    }
    if (line.find("only half configured") != std::string_view::npos) {
        return "half-configured";
    }
    if (line.find("only half installed") != std::string_view::npos) {
        return "half-installed";
    }
    if (line.find("triggers") != std::string_view::npos) {
        return "triggers";
    }
    return "other";
}

} // namespace

std::vector<DpkgAuditProblem> parse_dpkg_audit(std::string_view output) {
    std::vector<DpkgAuditProblem> problems;
    std::string state = "other";
    bool in_heading = false;
    for (const auto& line : lines(output)) {
        if (trim(line).empty()) {
            in_heading = false;
            continue;
        }
        if (line.front() != ' ') {
            // The first line of a heading names the state; its continuation lines do not.
            if (!in_heading) {
                state = state_of_heading(line);
            }
            in_heading = true;
            continue;
        }
        in_heading = false;
        auto body = trim(line);
        const auto space = body.find(' ');
        problems.push_back({std::string(body.substr(0, space)), state});
    }
    return problems;
}

} // namespace gpuprov
