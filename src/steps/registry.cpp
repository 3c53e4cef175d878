#include "steps.hpp"

#include <array>

namespace gpuprov {

namespace {
constexpr std::array<std::pair<StepStatus, std::string_view>, 7> kStatusNames{{
    {StepStatus::satisfied, "satisfied"},
    {StepStatus::pending, "pending"},
    {StepStatus::blocked, "blocked"},
    {StepStatus::skipped, "skipped"},
    {StepStatus::done, "done"},
    {StepStatus::failed, "failed"},
    {StepStatus::reboot_required, "reboot-required"},
}};
} // namespace

std::string_view to_string(StepStatus status) {
    for (const auto& [s, name] : kStatusNames) {
        if (s == status) {
            return name;
        }
    }
    return "unknown";
}

std::optional<StepStatus> step_status_from_string(std::string_view s) {
    for (const auto& [status, name] : kStatusNames) {
        if (name == s) {
            return status;
        }
    }
    return std::nullopt;
}

std::string_view to_string(Change::Kind kind) {
    switch (kind) {
    case Change::Kind::file:
        return "file";
    case Change::Kind::package:
        return "package";
    case Change::Kind::command:
        return "command";
    case Change::Kind::service:
        return "service";
    case Change::Kind::note:
        return "note";
    }
    return "note";
}

std::vector<std::unique_ptr<Step>> make_steps() {
    std::vector<std::unique_ptr<Step>> out;
    out.push_back(steps::make_preflight());
    out.push_back(steps::make_nouveau());
    out.push_back(steps::make_cuda_repo());
    out.push_back(steps::make_mok());
    out.push_back(steps::make_driver());
    out.push_back(steps::make_fabric_manager());
    out.push_back(steps::make_cuda_toolkit());
    out.push_back(steps::make_cudnn());
    out.push_back(steps::make_nccl());
    out.push_back(steps::make_tensorrt());
    out.push_back(steps::make_infiniband());
    out.push_back(steps::make_container_toolkit());
    out.push_back(steps::make_tuning());
    out.push_back(steps::make_mig());
    out.push_back(steps::make_monitoring());
    out.push_back(steps::make_dcgm());
    out.push_back(steps::make_readiness());
    out.push_back(steps::make_verify());
    return out;
}

} // namespace gpuprov
