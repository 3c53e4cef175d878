#include "doctor_parts.hpp"

#include <cmath>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

/// A runfile driver and no driver packages: working, but gpuprov will not install over it.
void runfile_alone(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!ctx.facts.runfile_driver || !driver_packages(ctx.facts).empty()) {
        return;
    }
    const auto& run = *ctx.facts.runfile_driver;
    Finding f{.id = "runfile-driver", .severity = "warning"};
    f.summary = "the driver" + (run.version.empty() ? std::string() : " " + run.version) +
                " was installed with NVIDIA's .run installer: package updates never reach it, "
                "it must be rebuilt by hand after every kernel update, and gpuprov's driver step "
                "is blocked on it";
    for (const auto& e : run.evidence) {
        const auto space = e.find(' ');
        f.evidence.push_back(
            {e.substr(0, space), space == std::string::npos ? "" : e.substr(space + 1)});
    }
    f.fix = "sudo nvidia-installer --uninstall, reboot, then " + apply_hint(ctx.options, "driver") +
            " to install the driver from packages; or set `driver.replace_runfile: true` in the "
            "profile and apply runs `nvidia-installer --uninstall --silent` itself before "
            "installing the packages";
    out.push_back(std::move(f));
}

void runfile_conflict(const DoctorContext& ctx, std::vector<Finding>& out) {
    const auto pkgs = driver_packages(ctx.facts);
    if (pkgs.empty()) {
        runfile_alone(ctx, out);
        return;
    }
    std::vector<Evidence> traces;
    if (ctx.sys.exists("/usr/bin/nvidia-uninstall")) {
        traces.push_back({"/usr/bin/nvidia-uninstall", "present"});
    }
    // The installer's log outlives an uninstall, which writes its own log beside it (and
    // removes nvidia-uninstall): then the log is history, not a driver.
    if (ctx.sys.exists("/var/log/nvidia-installer.log") &&
        (!traces.empty() || !ctx.sys.exists("/var/log/nvidia-uninstall.log"))) {
        traces.push_back({"/var/log/nvidia-installer.log", "present"});
    }
    if (traces.empty()) {
        return;
    }
    Finding f{.id = "runfile-driver-conflict", .severity = "error"};
    f.summary = "a runfile (.run) driver install coexists with driver packages; they overwrite "
                "each other's libraries and modules";
    f.evidence = std::move(traces);
    std::vector<std::string> names;
    for (const auto& [name, version] : pkgs) {
        names.push_back(name + " " + version);
    }
    f.evidence.push_back({"installed driver packages", join(names, "\n")});
    f.fix = "remove the runfile driver (/usr/bin/nvidia-uninstall), then reinstall the packages: " +
            apply_hint(ctx.options, "driver");
    out.push_back(std::move(f));
}

void dpkg_audit(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (ctx.facts.os.family != "debian") {
        return;
    }
    const std::vector<std::string> argv = {"dpkg", "--audit"};
    const auto r = probe(ctx.sys, argv);
    const auto problems = parse_dpkg_audit(r.out);
    if (problems.empty()) {
        return;
    }
    std::vector<std::string> names;
    for (const auto& p : problems) {
        names.push_back(p.package + " (" + p.state + ")");
    }
    Finding f{.id = "dpkg-audit", .severity = "error"};
    f.summary = "partially installed packages: " + join(names, ", ");
    f.evidence.push_back({display_argv(argv), head_lines(r.out, 6)});
    f.fix = "dpkg --configure -a && apt-get -f install; read the failing maintainer script's "
            "output (for nvidia-dkms: /var/lib/dkms/nvidia/*/build/make.log)";
    out.push_back(std::move(f));
}

void nccl_topology(const DoctorContext& ctx, std::vector<Finding>& out) {
    const bool nccl = ctx.facts.packages.count("libnccl2") != 0 ||
                      ctx.facts.packages.count("libnccl") != 0 ||
                      (ctx.options.profile != nullptr && ctx.options.profile->nccl);
    if (!nccl || !ctx.smi.ok() || ctx.smi.gpus.size() < 2) {
        return;
    }
    const std::vector<std::string> argv = {"nvidia-smi", "topo", "-m"};
    const auto r = probe(ctx.sys, argv);
    const auto topo = r.ok() ? parse_topo_matrix(r.out) : std::nullopt;
    if (!topo || any_p2p_path(*topo)) {
        return;
    }
    Finding f{.id = "nccl-no-p2p", .severity = "warning"};
    f.summary = "NCCL is installed for " + std::to_string(topo->gpus.size()) +
                " GPUs, but no GPU pair has NVLink or a PCIe switch path (only SYS/NODE/PHB); "
                "collectives go through host memory";
    f.evidence.push_back({display_argv(argv), head_lines(r.out, 5)});
    f.fix = "expect low all-reduce bandwidth; fit NVLink bridges or use a host/VM shape with "
            "P2P, and check that ACS/IOMMU settings do not block peer-to-peer";
    out.push_back(std::move(f));
}

void temperature(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!ctx.smi.ok()) {
        return;
    }
    std::vector<std::string> hot;
    std::vector<std::string> rows;
    const auto all_rows = lines(ctx.smi.result.out);
    for (std::size_t i = 0; i < ctx.smi.gpus.size(); ++i) {
        const auto& g = ctx.smi.gpus[i];
        if (g.temperature_c && *g.temperature_c > ctx.options.temperature_alert_c) {
            hot.push_back("GPU" + std::to_string(g.index) + " " +
                          std::to_string(std::lround(*g.temperature_c)) + " C");
            if (i < all_rows.size()) {
                rows.push_back(all_rows[i]);
            }
        }
    }
    if (hot.empty()) {
        return;
    }
    Finding f{.id = "gpu-temperature", .severity = "warning"};
    f.summary = "above the " + std::to_string(ctx.options.temperature_alert_c) +
                " C alert threshold: " + join(hot, ", ");
    f.evidence.push_back({ctx.smi.command, join(rows, "\n")});
    f.fix = "check airflow, fans and chassis cooling; `nvidia-smi -q -d TEMPERATURE,PERFORMANCE` "
            "shows whether the GPU is throttling";
    out.push_back(std::move(f));
}

} // namespace

void diagnose_host(const DoctorContext& ctx, std::vector<Finding>& out) {
    runfile_conflict(ctx, out);
    dpkg_audit(ctx, out);
    nccl_topology(ctx, out);
    temperature(ctx, out);
}

} // namespace gpuprov::nvidia_detail
