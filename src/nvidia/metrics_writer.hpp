#pragma once
// The exposition-format writer shared by the metric families of metrics.cpp and
// metrics_health.cpp.
#include <fmt/format.h>
#include <gpuprov/metrics.hpp>
#include <string>
#include <string_view>

namespace gpuprov::metrics_detail {

class Writer {
public:
    void family(std::string_view name, std::string_view help, std::string_view type = "gauge") {
        m_text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    }
    void sample(std::string_view name, std::string_view labels, double value) {
        m_text += fmt::format("{}{}{}{} {}\n", name, labels.empty() ? "" : "{", labels,
                              labels.empty() ? "" : "}", value);
    }
    [[nodiscard]] std::string take() { return std::move(m_text); }

private:
    std::string m_text;
};

inline std::string label(std::string_view key, std::string_view value) {
    return fmt::format("{}=\"{}\"", key, escape_label_value(value));
}

/// The labels every per-GPU series carries.
inline std::string gpu_labels(int index, std::string_view uuid) {
    return label("index", std::to_string(index)) + "," + label("uuid", uuid);
}

/// ECC counters, throttle reasons, NVLink errors and Xid events (metrics_health.cpp).
void health_metrics(const MetricsSnapshot& s, Writer& w);

} // namespace gpuprov::metrics_detail
