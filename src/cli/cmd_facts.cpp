#include "cli_common.hpp"
#include "render.hpp"

#include <fmt/format.h>
#include <gpuprov/facts.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/matrix.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

namespace gpuprov::cli {

namespace {

void print_human(const HostFacts& f) {
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    std::cout << fmt::format("OS:           {} (id {}, version {}, codename {})\n",
                             f.os.pretty_name, f.os.id, f.os.version_id,
                             f.os.codename.empty() ? "-" : f.os.codename);
    std::cout << fmt::format("NVIDIA repo:  {}/{}\n",
                             f.os.repo_slug.empty() ? "(none: unsupported OS)" : f.os.repo_slug,
                             f.repo_arch);
    std::cout << fmt::format("Arch/kernel:  {} / {} (headers {})\n", f.arch, f.kernel,
                             f.kernel_headers ? "installed" : "missing");
    std::cout << fmt::format("Memory:       {:.1f} GiB\n",
                             static_cast<double>(f.memory_bytes) / kGiB);
    if (f.root_disk) {
        std::cout << fmt::format("Disk /:       {:.1f} GiB free of {:.1f} GiB\n",
                                 static_cast<double>(f.root_disk->free_bytes) / kGiB,
                                 static_cast<double>(f.root_disk->total_bytes) / kGiB);
    }
    std::cout << fmt::format("GPUs:         {}\n", f.gpus.size());
    for (const auto& g : f.gpus) {
        std::cout << fmt::format("  {}  10de:{:04x}  {}  ({}, cc {}, driver {})\n", g.address,
                                 g.device_id, g.name.empty() ? "unknown model" : g.name,
                                 g.architecture.empty() ? "?" : g.architecture,
                                 g.compute_capability.empty() ? "?" : g.compute_capability,
                                 g.driver.empty() ? "none" : g.driver);
    }
    if (f.nvswitch_count > 0) {
        std::cout << fmt::format("NVSwitch:     {}\n", f.nvswitch_count);
    }
    if (f.nvlink5_switch_count > 0) {
        std::cout << fmt::format("NVSwitch:     {} NVLink 5 (InfiniBand-managed, SW_MNG)\n",
                                 f.nvlink5_switch_count);
    }
    std::cout << fmt::format("nouveau:      {}\n", f.nouveau_loaded ? "loaded" : "not loaded");
    std::cout << fmt::format("Secure Boot:  {}\n", !f.secure_boot
                                                       ? "n/a (not UEFI)"
                                                       : (*f.secure_boot ? "enabled" : "disabled"));
    std::cout << fmt::format("Driver:       {}\n",
                             f.driver ? fmt::format("{} ({} module)", f.driver->version,
                                                    f.driver->open_module ? "open" : "proprietary")
                                      : "not loaded");
    for (const auto& c : f.cuda) {
        std::cout << fmt::format("CUDA:         {} at {}\n", c.version, c.path);
    }
    if (f.cudnn) {
        std::cout << fmt::format("cuDNN:        {}.{}.{} ({})\n", f.cudnn->major, f.cudnn->minor,
                                 f.cudnn->patch, f.cudnn->header);
    }
    for (const auto& [name, version] : f.packages) {
        std::cout << fmt::format("Package:      {} {}\n", name, version);
    }
}

} // namespace

void add_facts_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("facts", "show what this host is (OS, GPUs, driver, CUDA, ...)");
    static bool json = false;
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->callback([&opts, &exit_code] {
        const auto facts = detect_facts(host_system(opts), Matrix::builtin());
        if (json) {
            std::cout << json_text(versioned(facts_to_json(facts))) << "\n";
        } else {
            print_human(facts);
        }
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
