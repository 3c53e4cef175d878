// The next-boot forecast as text: `gpuprov forecast`, and its short section in plan and status.
#include "render_forecast.hpp"

#include <fmt/format.h>

namespace gpuprov::cli {

namespace {

std::string paint(std::string_view text, const char* code, bool color) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
}

std::string kernel_line(const KernelForecast& k, const Forecast& f) {
    std::vector<std::string> tags;
    if (k.next_boot) {
        tags.emplace_back("next boot");
    }
    if (k.running) {
        tags.emplace_back("running");
    }
    std::string module = "no nvidia module";
    if (k.module) {
        module =
            "module " +
            (k.module->version.empty() ? std::string("(version unknown)") : k.module->version) +
            " (" + k.module->origin + ")";
    }
    if (!k.module && !k.headers) {
        module += ", no headers";
    }
    if (k.signature_trusted) {
        module += *k.signature_trusted ? ", signed by " + k.signer
                  : k.signer.empty()   ? std::string(", unsigned (Secure Boot refuses it)")
                                       : ", signed by " + k.signer + " (not trusted at boot)";
    }
    if (k.initramfs_blacklisted) {
        module += *k.initramfs_blacklisted ? ", initramfs blacklists nouveau"
                                           : ", initramfs predates the blacklist";
    }
    (void)f;
    std::string tag_text;
    if (!tags.empty()) {
        tag_text = " [";
        for (std::size_t i = 0; i < tags.size(); ++i) {
            tag_text += (i ? ", " : "") + tags[i];
        }
        tag_text += "]";
    }
    return fmt::format("  {} {}{}: {}\n", k.ready ? "ok  " : "FAIL", k.kernel, tag_text, module);
}

} // namespace

std::string render_forecast_text(const Forecast& f, bool full, bool color) {
    std::string out;
    const auto verdict = f.ready ? paint("ready", "32", color) : paint("NOT READY", "31", color);
    out += fmt::format("next boot: {} ({}): {}\n",
                       f.next_boot.kernel.empty() ? "unknown kernel" : f.next_boot.kernel,
                       f.next_boot.source, verdict);
    if (full) {
        out += fmt::format(
            "driver {}{}\n", f.driver_version.empty() ? "not installed" : f.driver_version,
            f.fabric_manager_version.empty() ? std::string()
                                             : ", fabric manager " + f.fabric_manager_version);
        for (const auto& k : f.kernels) {
            out += kernel_line(k, f);
        }
        if (f.upgrade.asked) {
            out += fmt::format("next upgrade (`{}`): {} package(s)\n", f.upgrade.command,
                               f.upgrade.actions.size());
        } else if (!f.upgrade.skipped.empty()) {
            out += fmt::format("next upgrade: not looked at ({})\n", f.upgrade.skipped);
        }
    }
    for (const auto& x : f.findings) {
        const bool error = x.severity == "error";
        out += fmt::format("  {} {}: {}\n", paint(x.severity, error ? "31" : "33", color), x.id,
                           x.summary);
        out += fmt::format("      fix: {}\n", x.fix);
    }
    return out;
}

std::string forecast_section(const System& sys, const HostFacts& facts, bool color) {
    if (facts.gpus.empty()) {
        return "";
    }
    ForecastOptions fo;
    fo.look_ahead = false;
    const auto f = forecast_next_boot(sys, facts, fo);
    if (f.driver_version.empty()) {
        return "";
    }
    return "\nForecast (`gpuprov forecast` also reads the next upgrade):\n" +
           render_forecast_text(f, false, color);
}

} // namespace gpuprov::cli
