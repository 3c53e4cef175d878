#include "metrics_writer.hpp"

#include <ctime>
#include <gpuprov/metrics.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

// Every status a step can have (docs/design.md), so a one-hot series exists for each.
constexpr const char* kStatuses[] = {"satisfied", "pending", "blocked",        "skipped",
                                     "done",      "failed",  "reboot-required"};

using metrics_detail::label;
using metrics_detail::Writer;

std::string gpu_labels(const SmiGpu& g) {
    return metrics_detail::gpu_labels(g.index, g.uuid);
}

void gpu_metrics(const MetricsSnapshot& s, Writer& w) {
    w.family("gpuprov_nvidia_smi_up", "Whether nvidia-smi answered (1) or failed (0).");
    w.sample("gpuprov_nvidia_smi_up", "", s.smi_up ? 1 : 0);

    w.family("gpuprov_gpus_visible", "GPUs nvidia-smi answered for (0 when it failed).");
    w.sample("gpuprov_gpus_visible", "", static_cast<double>(s.gpus.size()));
    if (s.gpus_on_pci >= 0) {
        w.family("gpuprov_gpus_on_pci", "NVIDIA GPUs on the PCI bus (sysfs).");
        w.sample("gpuprov_gpus_on_pci", "", s.gpus_on_pci);
    }
    if (s.driver_loaded) {
        w.family("gpuprov_driver_loaded",
                 "Whether the NVIDIA kernel module is loaded (/proc/driver/nvidia/version).");
        w.sample("gpuprov_driver_loaded", "", *s.driver_loaded ? 1 : 0);
    }
    if (s.temperature_alert_c) {
        w.family("gpuprov_gpu_temperature_alert_celsius",
                 "The profile's monitoring.temperature_alert_c.");
        w.sample("gpuprov_gpu_temperature_alert_celsius", "", *s.temperature_alert_c);
    }

    if (s.next_boot) {
        w.family("gpuprov_next_boot_ready",
                 "Whether the kernel the boot loader boots next has an nvidia module of the "
                 "userspace driver's version with the blacklist in its initramfs (1), or not (0): "
                 "`gpuprov forecast` says why.");
        w.sample("gpuprov_next_boot_ready", label("kernel", s.next_boot->kernel),
                 s.next_boot->ready ? 1 : 0);
    }

    w.family("gpuprov_gpu_info", "GPU identity; the value is always 1.");
    for (const auto& g : s.gpus) {
        w.sample("gpuprov_gpu_info",
                 gpu_labels(g) + "," + label("name", g.name) + "," + label("pci_bus_id", g.bus_id) +
                     "," + label("driver_version", g.driver_version),
                 1);
    }
    struct Gauge {
        const char* name;
        const char* help;
        std::optional<double> (*value)(const SmiGpu&);
    };
    static const Gauge kGauges[] = {
        {"gpuprov_gpu_utilization_ratio", "GPU utilization, 0 to 1.",
         [](const SmiGpu& g) -> std::optional<double> {
             if (!g.utilization_percent) {
                 return std::nullopt;
             }
             return *g.utilization_percent / 100.0;
         }},
        {"gpuprov_gpu_memory_used_bytes", "GPU memory in use.",
         [](const SmiGpu& g) -> std::optional<double> {
             if (!g.memory_used_mib) {
                 return std::nullopt;
             }
             return static_cast<double>(*g.memory_used_mib) * 1048576.0;
         }},
        {"gpuprov_gpu_memory_total_bytes", "GPU memory in total.",
         [](const SmiGpu& g) -> std::optional<double> {
             if (!g.memory_total_mib) {
                 return std::nullopt;
             }
             return static_cast<double>(*g.memory_total_mib) * 1048576.0;
         }},
        {"gpuprov_gpu_temperature_celsius", "GPU core temperature.",
         [](const SmiGpu& g) { return g.temperature_c; }},
        {"gpuprov_gpu_power_draw_watts", "GPU power draw.",
         [](const SmiGpu& g) { return g.power_draw_w; }},
        {"gpuprov_gpu_power_limit_watts", "GPU power limit.",
         [](const SmiGpu& g) { return g.power_limit_w; }},
    };
    for (const auto& gauge : kGauges) {
        w.family(gauge.name, gauge.help);
        for (const auto& g : s.gpus) {
            // A value nvidia-smi could not read is left out, not reported as 0.
            if (const auto v = gauge.value(g)) {
                w.sample(gauge.name, gpu_labels(g), *v);
            }
        }
    }
}

void journal_metrics(const Journal& j, Writer& w) {
    w.family("gpuprov_reboot_pending", "Whether the last apply is waiting for a reboot.");
    w.sample("gpuprov_reboot_pending", "", j.reboot_pending ? 1 : 0);

    const auto last_run =
        parse_rfc3339(j.run_finished_at.empty() ? j.run_started_at : j.run_finished_at);
    if (last_run) {
        w.family("gpuprov_last_run_timestamp_seconds", "When the last apply run ended.");
        w.sample("gpuprov_last_run_timestamp_seconds", "", *last_run);
    }

    w.family("gpuprov_step_status", "Status of each step in the last apply, one-hot.");
    for (const auto& step : j.steps) {
        for (const char* status : kStatuses) {
            w.sample("gpuprov_step_status", label("step", step.id) + "," + label("status", status),
                     step.status == status ? 1 : 0);
        }
    }
    w.family("gpuprov_step_last_change_timestamp_seconds", "When each step last changed status.");
    for (const auto& step : j.steps) {
        const auto when =
            parse_rfc3339(step.finished_at.empty() ? step.started_at : step.finished_at);
        if (when) {
            w.sample("gpuprov_step_last_change_timestamp_seconds", label("step", step.id), *when);
        }
    }
}

} // namespace

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::optional<double> parse_rfc3339(std::string_view text) {
    std::tm tm{};
    int year = 0;
    int month = 0;
    int day = 0;
    int hour = 0;
    int minute = 0;
    int second = 0;
    char t = 0;
    const std::string s(trim(text));
    int used = 0;
    // NOLINTNEXTLINE(cert-err34-c): widths bounded, all seven conversions checked below
    if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &year, &month, &day, &t, &hour,
                    &minute, &second, &used) != 7 ||
        (t != 'T' && t != 't' && t != ' ')) {
        return std::nullopt;
    }
    std::string_view rest = std::string_view(s).substr(static_cast<std::size_t>(used));
    double fraction = 0;
    if (!rest.empty() && rest.front() == '.') {
        std::size_t n = 1;
        while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') {
            ++n;
        }
        fraction = parse_double(std::string("0") + std::string(rest.substr(0, n))).value_or(0);
        rest.remove_prefix(n);
    }
    long offset = 0;
    if (rest == "Z" || rest == "z") {
        offset = 0;
    } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
        const auto oh = parse_int(rest.substr(1, 2));
        const auto om = parse_int(rest.substr(4, 2));
        if (!oh || !om) {
            return std::nullopt;
        }
        offset = (rest[0] == '+' ? 1 : -1) * (*oh * 3600 + *om * 60);
    } else {
        return std::nullopt;
    }
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    const auto epoch = timegm(&tm);
    return static_cast<double>(epoch - offset) + fraction;
}

std::string render_metrics(const MetricsSnapshot& snapshot) {
    Writer w;
    gpu_metrics(snapshot, w);
    metrics_detail::health_metrics(snapshot, w);
    if (snapshot.journal) {
        journal_metrics(*snapshot.journal, w);
    }
    return w.take();
}

} // namespace gpuprov
