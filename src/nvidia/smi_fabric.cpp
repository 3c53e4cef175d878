// `nvidia-smi -q` Fabric sections. The states are NVML's nvmlGpuFabricState_t as nvidia-smi names
// them (NVML_GPU_FABRIC_STATE_NOT_SUPPORTED / NOT_STARTED / IN_PROGRESS / COMPLETED); Status is
// the probe's nvmlReturn_t, meaningful only once Completed (NVML API reference,
// nvmlGpuFabricInfo_v3_t: "Must be checked only if Probe state returns complete").
#include <cctype>
#include <gpuprov/smi_fabric.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::size_t indent_of(std::string_view line) {
    const auto first = line.find_first_not_of(' ');
    return first == std::string_view::npos ? line.size() : first;
}

/// "State                             : Completed" → {"State", "Completed"}.
bool split_key_value(std::string_view line, std::string_view& key, std::string_view& value) {
    const auto colon = line.find(" : ");
    if (colon == std::string_view::npos) {
        // "Processes                             : None" always has the spaced colon; a bare
        // heading ("Fabric", "Health") has none.
        return false;
    }
    key = trim(line.substr(0, colon));
    value = trim(line.substr(colon + 3));
    return true;
}

bool not_reported(std::string_view v) {
    return v.empty() || v == "N/A" || v == "Not Supported" || v == "[N/A]" ||
           v == "[Not Supported]";
}

} // namespace

std::vector<SmiFabric> parse_smi_fabric(std::string_view q_output) {
    std::vector<SmiFabric> out;
    std::string gpu;
    std::string product;
    bool in_fabric = false;
    bool in_health = false;
    std::size_t fabric_indent = 0;
    std::size_t health_indent = 0;
    for (const auto& text : lines(q_output)) {
        std::string_view line = text;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (trim(line).empty() || trim(line) == "--") {
            continue; // blank lines and grep's group separators
        }
        const auto indent = indent_of(line);
        if (indent == 0 && starts_with(line, "GPU ")) {
            gpu = std::string(trim(line.substr(4)));
            product.clear();
            in_fabric = false;
            continue;
        }
        std::string_view key;
        std::string_view value;
        const bool kv = split_key_value(line, key, value);
        if (in_fabric && indent <= fabric_indent) {
            in_fabric = false;
        }
        if (!in_fabric) {
            if (kv && key == "Product Name") {
                product = std::string(value);
            } else if (!kv && trim(line) == "Fabric") {
                in_fabric = true;
                in_health = false;
                fabric_indent = indent;
                SmiFabric f;
                f.gpu = gpu;
                f.product = product;
                out.push_back(std::move(f));
            }
            continue;
        }
        auto& f = out.back();
        if (in_health && indent <= health_indent) {
            in_health = false;
        }
        if (!kv) {
            if (trim(line) == "Health") {
                in_health = true;
                health_indent = indent;
            }
            continue;
        }
        if (in_health) {
            if (key == "Summary") {
                f.health_summary = std::string(value);
            }
        } else if (key == "State") {
            f.state = std::string(value);
        } else if (key == "Status") {
            f.status = std::string(value);
        } else if (key == "CliqueId") {
            f.clique_id = std::string(value);
        } else if (key == "ClusterUUID") {
            f.cluster_uuid = std::string(value);
        }
    }
    return out;
}

FabricVerdict judge_fabric(const SmiFabric& f) {
    if (not_reported(f.state)) {
        return FabricVerdict::not_reported;
    }
    if (f.state == "In Progress" || f.state == "Not Started") {
        return FabricVerdict::pending;
    }
    if (f.state == "Completed" && f.status == "Success" && f.health_summary != "Unhealthy") {
        return FabricVerdict::registered;
    }
    return FabricVerdict::failed;
}

std::string describe_fabric(const SmiFabric& f) {
    std::string out = "State " + (f.state.empty() ? std::string("(none)") : f.state) + ", Status " +
                      (f.status.empty() ? std::string("(none)") : f.status);
    if (!f.health_summary.empty()) {
        out += ", Health " + f.health_summary;
    }
    return out;
}

std::optional<FmVersionMismatch> parse_fm_version_mismatch(std::string_view journal) {
    constexpr std::string_view kInterface = "driver interface version ";
    constexpr std::string_view kMismatch = " don't match with driver version ";
    std::optional<FmVersionMismatch> found;
    for (const auto& text : lines(journal)) {
        const std::string_view line = text;
        const auto a = line.find(kInterface);
        const auto b = a == std::string_view::npos ? a : line.find(kMismatch, a);
        if (b == std::string_view::npos) {
            continue;
        }
        const auto fm = trim(line.substr(a + kInterface.size(), b - a - kInterface.size()));
        auto rest = line.substr(b + kMismatch.size());
        // "590.48.01. Please update ...": the version ends at the first character that is not
        // a digit or a dot followed by a digit.
        std::size_t n = 0;
        while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) != 0 ||
                                   (rest[n] == '.' && n + 1 < rest.size() &&
                                    std::isdigit(static_cast<unsigned char>(rest[n + 1])) != 0))) {
            ++n;
        }
        if (fm.empty() || n == 0) {
            continue;
        }
        found = FmVersionMismatch{std::string(fm), std::string(rest.substr(0, n)),
                                  std::string(trim(line))};
    }
    return found;
}

} // namespace gpuprov
