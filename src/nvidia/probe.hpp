#pragma once
// Shared by the checks and the doctor: running a read-only probe with a bounded timeout and
// turning its result into the short texts an outcome or finding shows.
#include <chrono>
#include <gpuprov/check.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/system.hpp>
#include <string>
#include <vector>

namespace gpuprov::nvidia_detail {

// A probe that hangs (nvidia-smi on a wedged GPU can) must not hang verify or doctor.
inline constexpr std::chrono::seconds kProbeTimeout{30};

/// What a probe leaves in gpuprov's log besides its summary line.
enum class ProbeLog {
    output,    ///< its output, at debug (verify, doctor: read after the fact)
    size_only, ///< only the size of its output (the metrics timer, every minute)
};

[[nodiscard]] CommandResult probe(const System& sys, std::vector<std::string> argv,
                                  ProbeLog log = ProbeLog::output);
/// stdout then stderr, trimmed.
[[nodiscard]] std::string output_of(const CommandResult& r);
/// At most `max_lines` leading lines of `text`, trimmed.
[[nodiscard]] std::string head_lines(std::string_view text, std::size_t max_lines = 4);
/// "not installed", "timed out after 30 s", "exit status 9".
[[nodiscard]] std::string failure_text(const CommandResult& r);

struct GpuQuery {
    std::string command; ///< display form of the argv
    CommandResult result;
    std::vector<SmiGpu> gpus;
    [[nodiscard]] bool ok() const { return result.ok() && !gpus.empty(); }
};
[[nodiscard]] GpuQuery query_gpus(const System& sys, ProbeLog log = ProbeLog::output);

/// PCI addresses of InfiniBand HCAs (class 0x0207) the kernel registered no RDMA device for:
/// their RDMA driver is not loaded. verify's infiniband.devices and doctor's finding.
[[nodiscard]] std::vector<std::string> hcas_without_rdma_device(const HostFacts& facts);

/// An outcome with its identity filled in; the caller sets the rest.
[[nodiscard]] CheckOutcome make_outcome(std::string id, std::string step, std::string command);
/// Sets passed and clears the fix when it passed.
void settle(CheckOutcome& c, bool passed);
/// Marks a check not run on this host, saying why ("skipped: <why>"): neither passed nor failed.
void skip(CheckOutcome& c, const std::string& why);

} // namespace gpuprov::nvidia_detail
