#pragma once
// The doctor's parts share one nvidia-smi answer; each appends the findings of its area.
#include "probe.hpp"

#include <gpuprov/doctor.hpp>
#include <map>

namespace gpuprov::nvidia_detail {

struct DoctorContext {
    const System& sys;
    const HostFacts& facts;
    const DoctorOptions& options;
    GpuQuery smi;
};

void diagnose_driver(const DoctorContext& ctx, std::vector<Finding>& out);
void diagnose_toolkit(const DoctorContext& ctx, std::vector<Finding>& out);
void diagnose_host(const DoctorContext& ctx, std::vector<Finding>& out);
void diagnose_infiniband(const DoctorContext& ctx, std::vector<Finding>& out);
void diagnose_container(const DoctorContext& ctx, std::vector<Finding>& out);
void diagnose_fabric(const DoctorContext& ctx, std::vector<Finding>& out);
void diagnose_mig(const DoctorContext& ctx, std::vector<Finding>& out);

/// Installed driver packages (deb or rpm names) from the facts → version.
[[nodiscard]] std::map<std::string, std::string> driver_packages(const HostFacts& facts);
/// "gpuprov apply PROFILE --only STEP", with a placeholder when doctor runs without a profile.
[[nodiscard]] std::string apply_hint(const DoctorOptions& options, const std::string& step);

} // namespace gpuprov::nvidia_detail
