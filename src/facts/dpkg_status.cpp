// What facts read of dpkg's database (through the one reader, dpkg_database()): the installed
// NVIDIA and CUDA packages.
#include "detectors.hpp"

#include <array>
#include <gpuprov/package_db.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::map<std::string, std::string> installed_map(const PackageDb& db,
                                                 bool (*keep)(std::string_view)) {
    std::map<std::string, std::string> out;
    for (const auto& p : db.records()) {
        if (!p.installed || p.version.empty() || !keep(p.name)) {
            continue;
        }
        std::string name = p.name;
        // A Multi-Arch: same package can be installed once per architecture (libnvidia-gl:i386
        // for Steam/Wine); dpkg-query spells the second one name:arch, and so does this map.
        if (out.count(name) != 0 && !p.arch.empty()) {
            name += ":";
            name += p.arch;
        }
        out.emplace(std::move(name), p.version);
    }
    return out;
}

} // namespace

std::map<std::string, std::string> parse_dpkg_status(std::string_view content) {
    return installed_map(parse_dpkg_db(content), [](std::string_view) { return true; });
}

bool is_nvidia_package(std::string_view name) {
    // Substring for "nvidia": Ubuntu spells its prebuilt modules linux-modules-nvidia-535-...
    if (name.find("nvidia") != std::string_view::npos) {
        return true;
    }
    // Prefixes, not substrings: libcurl must not count as CUDA.
    static constexpr std::array<std::string_view, 19> prefixes{
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
        "libnvonnxparsers",
        "libnvparsers",
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

std::map<std::string, std::string> read_nvidia_packages(const System& sys,
                                                        const std::string& family) {
    return installed_map(package_database(sys, family), is_nvidia_package);
}

} // namespace facts_detail

} // namespace gpuprov
