// Installed packages straight from dpkg's database instead of `dpkg-query`: no process start,
// and the file format has been stable for decades. The status file of a desktop install is a few
// MB, so it is scanned with string_views and only matching packages are copied out.
#include "detectors.hpp"

#include <array>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

struct Stanza {
    std::string_view package;
    std::string_view version;
    std::string_view arch;
    std::string_view status;
};

std::string_view field_value(std::string_view line, std::string_view field) {
    if (line.size() <= field.size() || !starts_with(line, field) || line[field.size()] != ':') {
        return {};
    }
    return trim(line.substr(field.size() + 1));
}

/// "install ok installed" and "hold ok installed" (apt-mark hold, which gpuprov itself uses
/// for drivers) are installed; "deinstall ok config-files" and half-installed states are not.
bool installed(std::string_view status) {
    return status == "install ok installed" || status == "hold ok installed";
}

using NameFilter = bool (*)(std::string_view);

void finish(const Stanza& s, NameFilter keep, std::map<std::string, std::string>& out) {
    if (s.package.empty() || s.version.empty() || !installed(s.status) || !keep(s.package)) {
        return;
    }
    std::string name(s.package);
    // A Multi-Arch: same package can be installed once per architecture (libnvidia-gl:i386 for
    // Steam/Wine); dpkg-query spells the second one name:arch, and so does this map.
    if (out.count(name) != 0 && !s.arch.empty()) {
        name += ":";
        name += s.arch;
    }
    out.emplace(std::move(name), std::string(s.version));
}

/// One pass over the file; only names `keep` accepts are copied out, since a status file holds
/// a thousand-odd packages of which facts want a dozen.
std::map<std::string, std::string> parse_status(std::string_view content, NameFilter keep) {
    std::map<std::string, std::string> out;
    Stanza current;
    std::size_t start = 0;
    while (start <= content.size()) {
        auto end = content.find('\n', start);
        if (end == std::string_view::npos) {
            end = content.size();
        }
        auto line = content.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        start = end + 1;
        if (trim(line).empty()) {
            finish(current, keep, out);
            current = {};
            continue;
        }
        if (line.front() == ' ' || line.front() == '\t') {
            continue; // continuation of Description:, Conffiles: and the like
        }
        if (auto v = field_value(line, "Package"); !v.empty()) {
            current.package = v;
        } else if (auto v2 = field_value(line, "Version"); !v2.empty()) {
            current.version = v2;
        } else if (auto v3 = field_value(line, "Architecture"); !v3.empty()) {
            current.arch = v3;
        } else if (auto v4 = field_value(line, "Status"); !v4.empty()) {
            current.status = v4;
        }
    }
    finish(current, keep, out);
    return out;
}

} // namespace

std::map<std::string, std::string> parse_dpkg_status(std::string_view content) {
    return parse_status(content, [](std::string_view) { return true; });
}

bool is_nvidia_package(std::string_view name) {
    // Substring for "nvidia": Ubuntu spells its prebuilt modules linux-modules-nvidia-535-...
    if (name.find("nvidia") != std::string_view::npos) {
        return true;
    }
    // Prefixes, not substrings: libcurl must not count as CUDA.
    static constexpr std::array<std::string_view, 17> prefixes{
        "cuda",
        "libcuda",
        "libcudnn",
        "cudnn",
        "libnccl",
        "nccl",
        "libcublas",
        "libcufft",
        "libcurand",
        "libcusolver",
        "libcusparse",
        "libnpp",
        "libnvjpeg",
        "libnvjitlink",
        "libnvinfer",
        "tensorrt",
        "datacenter-gpu-manager",
    };
    for (const auto prefix : prefixes) {
        if (starts_with(name, prefix)) {
            return true;
        }
    }
    return false;
}

namespace facts_detail {

std::map<std::string, std::string> read_dpkg_packages(const System& sys) {
    const auto status = sys.read_file("/var/lib/dpkg/status");
    if (!status) {
        return {};
    }
    return parse_status(*status, is_nvidia_package);
}

} // namespace facts_detail

} // namespace gpuprov
