// smoke.pytorch: for `framework: {pytorch: ...}` profiles, the environment's Python imports
// torch, torch.cuda.is_available(), and a 512x512 matmul on the GPU equals the CPU's. gpuprov
// installs no PyTorch: without torch the test is skipped. As root, a Python (or venv) that
// someone else could change is refused, and Python runs isolated, from /.
#include "probe.hpp"
#include "smoke_parts.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::smoke_detail {

namespace {

// "2.4.1+cu124" is of "2", "2.x" and "2.4"; not of "2.5" nor "1.x".
bool version_matches(const std::string& have, const std::string& want) {
    const auto parts = split(want, '.');
    const auto got = split(have.substr(0, have.find('+')), '.');
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i] == "x") {
            break;
        }
        if (i >= got.size() || got[i] != parts[i]) {
            return false;
        }
    }
    return true;
}

// What a venv's Python reads code from at startup besides the interpreter (checked with it,
// links followed): pyvenv.cfg, whose `home` picks the base installation, and each
// lib/pythonX.Y/site-packages, whose .pth files run and where torch is imported from.
std::vector<std::pair<std::string, TrustedKind>> venv_code_paths(const System& sys,
                                                                 const std::string& venv) {
    std::vector<std::pair<std::string, TrustedKind>> paths;
    if (sys.exists(venv + "/pyvenv.cfg")) {
        paths.emplace_back(venv + "/pyvenv.cfg", TrustedKind::file);
    }
    for (const auto& name : sys.list_dir(venv + "/lib")) {
        const auto site = venv + "/lib/" + name + "/site-packages";
        if (starts_with(name, "python") && sys.is_dir(site)) {
            paths.emplace_back(site, TrustedKind::directory);
        }
    }
    return paths;
}

} // namespace

SmokeOutcome smoke_torch(const SmokeInput& in, System& sys, const GpuGate& /*gate*/) {
    SmokeOutcome o;
    o.id = "smoke.pytorch";
    if (!in.profile.framework) {
        settle(o, SmokeStatus::skipped,
               "the profile names no framework (framework: {pytorch: ...})",
               "add framework: {pytorch: \"2.x\", venv: /path/to/venv} to have PyTorch tested");
        return o;
    }
    const auto& fw = *in.profile.framework;
    const auto python = fw.venv.empty() ? std::string("/usr/bin/python3") : fw.venv + "/bin/python";
    const auto install =
        fmt::format("{} -m pip install 'torch=={}.*'", python, replace_all(fw.pytorch, ".x", ""));
    if (!sys.exists(python)) {
        settle(o, SmokeStatus::skipped,
               python + " does not exist, so torch cannot be imported" +
                   (fw.venv.empty() ? "" : " (no virtualenv at " + fw.venv + ")"),
               fw.venv.empty() ? "install python3 and torch"
                               : "python3 -m venv " + fw.venv + " && " + install);
        return o;
    }
    if (refuse_untrusted(o, sys, python)) {
        return o;
    }
    if (!fw.venv.empty()) {
        for (const auto& [path, kind] : venv_code_paths(sys, fw.venv)) {
            if (refuse_untrusted(o, sys, path, kind)) {
                return o;
            }
        }
    }
    Command cmd;
    // -I (isolated): neither the current directory nor PYTHON* variables nor the user's site
    // directory decide what `import torch` loads, and it starts in /, not where the operator
    // stood, so a torch.py planted there is never run (as root).
    cmd.argv = {python, "-I", "-"};
    cmd.cwd = kSmokeCwd;
    cmd.stdin_data = std::string(torch_smoke_source());
    cmd.timeout = kTorchTimeout;
    o.command = display_argv(cmd.argv) + " < gpuprov's PyTorch probe";
    const auto r = sys.run(cmd);
    const auto rep = parse_torch_smoke(r.out);
    o.excerpt = nvidia_detail::head_lines(nvidia_detail::output_of(r), 6);
    if (rep.torch_missing) {
        settle(o, SmokeStatus::skipped,
               "torch is not importable by " + python + ": " + rep.missing_text, install);
        return o;
    }
    if (rep.version.empty()) {
        o.excerpt = tail_lines(nvidia_detail::output_of(r), 6);
        settle(o, SmokeStatus::failed,
               python + " " + run_failure(r, kTorchTimeout) + " before torch reported its version",
               "run " + python + " -c 'import torch' to see the error");
        return o;
    }
    if (!version_matches(rep.version, fw.pytorch)) {
        settle(o, SmokeStatus::failed,
               fmt::format("torch {} is installed; the profile wants {}", rep.version, fw.pytorch),
               install);
        return o;
    }
    if (rep.cuda_available != true) {
        const bool cpu_build = rep.cuda.empty() || rep.cuda == "None";
        settle(o, SmokeStatus::failed,
               fmt::format("torch.cuda.is_available() is False (torch {} built for CUDA {})",
                           rep.version, cpu_build ? "none: a CPU-only build" : rep.cuda),
               cpu_build ? "install a CUDA build of torch (the wheels for Linux on PyPI are; "
                           "the +cpu ones are not)"
                         : "the driver may be too old for torch's CUDA " + rep.cuda +
                               ": compare nvidia-smi's CUDA Version with it");
        return o;
    }
    if (!rep.error.empty() || !rep.matmul_wrong || !rep.matmul_elements) {
        settle(o, SmokeStatus::failed,
               "the matmul on the GPU " +
                   (rep.error.empty() ? run_failure(r, kTorchTimeout) : "raised " + rep.error),
               "run `gpuprov doctor`; check `dmesg` for Xid errors of the GPU");
        return o;
    }
    if (*rep.matmul_wrong != 0) {
        settle(o, SmokeStatus::failed,
               fmt::format("wrong results: {} of {} matmul elements differ from the CPU's",
                           *rep.matmul_wrong, *rep.matmul_elements),
               "check `nvidia-smi -q -d ECC,ERROR` and `dmesg` for Xid errors, and take the GPU "
               "out of service");
        return o;
    }
    if (!r.ok()) {
        settle(o, SmokeStatus::failed,
               python + " " + run_failure(r, kTorchTimeout) + " after a correct matmul",
               "run the probe by hand: " + python + " -c 'import torch'");
        return o;
    }
    o.found = fmt::format("torch {} (CUDA {}) sees {} GPU{}; matmul of {} elements correct",
                          rep.version, rep.cuda, rep.device_count.value_or(0),
                          rep.device_count.value_or(0) == 1 ? "" : "s", *rep.matmul_elements);
    settle(o, SmokeStatus::passed);
    return o;
}

} // namespace gpuprov::smoke_detail
