#include "probe.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/metrics.hpp>

namespace gpuprov {

MetricsSnapshot collect_metrics(const System& sys) {
    MetricsSnapshot s;
    const auto q = nvidia_detail::query_gpus(sys);
    s.smi_up = q.ok();
    s.gpus = q.gpus;
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
