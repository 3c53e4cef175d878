#include "cmd_forecast.hpp"

#include "cli_common.hpp"
#include "render.hpp"
#include "render_forecast.hpp"

#include <algorithm>
#include <gpuprov/error.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/forecast.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace gpuprov::cli {

namespace {

/// The kernel hook's verdict under `driver.kernel_guard: block`: refuse the kernel only when
/// no module is there for it and none can be built (no headers). A module of the wrong version
/// or a stale initramfs can be fixed after the install; a kernel nothing can be built for
/// would boot without GPUs.
bool refuse_kernel(const Forecast& f, const std::string& kernel) {
    const auto k = std::find_if(f.kernels.begin(), f.kernels.end(),
                                [&](const KernelForecast& x) { return x.kernel == kernel; });
    // ready without a module: Canonical's module package for it is in the same package run.
    return !f.driver_version.empty() && k != f.kernels.end() && !k->module && !k->headers &&
           !k->ready;
}

/// The forecast's own fix for `kernel` having no module (headers then DKMS, or Canonical's
/// module package on the signed path); empty when there is no such finding.
std::string module_fix(const Forecast& f, const std::string& kernel) {
    for (const auto& x : f.findings) {
        if (x.id == "kernel-without-module" && x.kernel == kernel) {
            return x.fix;
        }
    }
    return {};
}

} // namespace

void add_forecast_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "forecast", "will the next boot have working GPUs: every installed kernel's nvidia "
                    "module, its version and initramfs, and what the next upgrade would break");
    static std::string profile_arg;
    static bool json = false;
    static std::string kernel;
    static bool no_upgrade = false;
    static bool hook = false;
    static bool block = false;
    cmd->add_option("profile", profile_arg,
                    "the profile (optional): its driver branch is the one an upgrade must keep")
        ->type_name(kProfileValue);
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->add_option("--kernel", kernel,
                    "judge this kernel release as the next boot's (the kernel hooks pass the "
                    "newly installed one)")
        ->type_name("RELEASE");
    cmd->add_flag("--no-upgrade", no_upgrade,
                  "do not ask the package manager what its next upgrade would do");
    cmd->add_flag("--hook", hook,
                  "run as the kernel install hook: log the forecast, never fail the kernel's "
                  "install (unless --block), no upgrade look-ahead")
        ->needs(cmd->get_option("--kernel"));
    cmd->add_flag("--block", block,
                  "with --hook: exit 1 when the kernel has no nvidia module and none can be "
                  "built for it (driver.kernel_guard: block)")
        ->needs("--hook");
    cmd->callback([&opts, &exit_code] {
        // A release names paths under /lib/modules and /boot: nothing else gets through.
        if (!kernel.empty() &&
            (kernel.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789._+-") != std::string::npos ||
             kernel[0] == '.' || kernel[0] == '-')) {
            throw UsageError("--kernel: '" + kernel +
                             "' is not a kernel release such as 6.1.0-31-amd64");
        }
        const auto& matrix = Matrix::builtin();
        auto& sys = host_system(opts);
        std::optional<Profile> profile;
        if (!profile_arg.empty()) {
            profile = load_profile(profile_arg, matrix);
        }
        const auto facts = detect_facts(sys, matrix);
        ForecastOptions fo;
        fo.profile = profile ? &*profile : nullptr;
        fo.kernel = kernel;
        // --root reads an image's files; the package manager would answer for this host.
        fo.look_ahead = !no_upgrade && !hook && !foreign_root(opts);
        const auto f = forecast_next_boot(sys, facts, fo);
        if (hook) {
            // The package manager's output is what the admin sees; the log keeps the rest.
            spdlog::info("forecast for kernel {}: {}", kernel, f.ready ? "ready" : "not ready");
            for (const auto& x : f.findings) {
                spdlog::warn("forecast {} {}: {} (fix: {})", x.severity, x.id, x.summary, x.fix);
            }
            if (block && refuse_kernel(f, kernel)) {
                const auto fix = module_fix(f, kernel);
                std::cerr << "gpuprov: refusing kernel " << kernel
                          << ": no nvidia module is built for it and its headers are missing "
                             "(driver.kernel_guard: block). Install first: "
                          << (fix.empty()
                                  ? (facts.os.family == "rhel" ? "dnf install kernel-devel-"
                                                               : "apt-get install linux-headers-") +
                                        kernel
                                  : fix)
                          << "\n";
                exit_code = kExitFailed;
                return;
            }
            if (!f.ready) {
                std::cerr << "gpuprov: warning: the next boot into " << kernel
                          << " would not have working GPUs; `gpuprov forecast` says why\n";
            }
            exit_code = kExitOk;
            return;
        }
        if (json) {
            std::cout << json_text(versioned(forecast_to_json(f))) << "\n";
        } else {
            std::cout << render_forecast_text(f, true, opts.color());
        }
        exit_code = f.ready ? kExitOk : kExitFailed;
    });
}

} // namespace gpuprov::cli
