#include "probe.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/metrics.hpp>

namespace gpuprov {

namespace {

using nvidia_detail::probe;
using nvidia_detail::ProbeLog;

// The timer runs this every minute as root, logging to /var/log/gpuprov.log: each probe leaves
// its summary line and the size of its output, never the output itself (journalctl -k alone is
// the whole boot's kernel log: megabytes a minute, gigabytes a day).
constexpr auto kLog = ProbeLog::size_only;

// Xid events since boot: the journal's kernel messages (-k implies this boot), else the
// kernel ring buffer, which may have wrapped on a long-running host.
std::optional<std::vector<XidEvent>> read_xids(const System& sys) {
    for (auto argv : {std::vector<std::string>{"journalctl", "-k", "-q", "--no-pager"},
                      std::vector<std::string>{"dmesg"}}) {
        const auto r = probe(sys, std::move(argv), kLog);
        if (r.ok()) {
            return parse_xid_events(r.out);
        }
    }
    return std::nullopt;
}

void collect_health(const System& sys, MetricsSnapshot& s) {
    const auto health = probe(sys, smi_health_argv(), kLog);
    s.health = health.ok() ? parse_smi_health(health.out) : std::vector<SmiHealth>{};
    s.health_up = !s.health.empty();
    // Fails, or lists no link, on GPUs without NVLink.
    const auto nvlink = probe(sys, {"nvidia-smi", "nvlink", "-e"}, kLog);
    if (nvlink.ok()) {
        s.nvlink = parse_nvlink_errors(nvlink.out);
    }
}

} // namespace

MetricsSnapshot collect_metrics(const System& sys) {
    MetricsSnapshot s;
    const auto q = nvidia_detail::query_gpus(sys, kLog);
    s.smi_up = q.ok();
    s.gpus = q.gpus;
    if (s.smi_up) {
        collect_health(sys, s);
    }
    s.xids = read_xids(sys);
    try {
        s.journal = load_journal(sys);
    } catch (const Error&) {
        // A corrupt journal must not cost the GPU metrics; `gpuprov status` reports it.
        s.journal.reset();
    }
    return s;
}

void write_textfile(System& sys, const std::filesystem::path& dir, std::string_view text) {
    sys.write_file_atomic(dir / "gpuprov.prom", text, 0644);
}

} // namespace gpuprov
