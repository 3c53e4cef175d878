// smoke.cuda: the profile's nvcc compiles gpuprov's CUDA program (device query + vector add,
// sums checked on the host) in the caller's private directory; the program runs once on every
// GPU with a deadline.
#include "probe.hpp"
#include "smoke_parts.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/strings.hpp>
#include <set>

namespace gpuprov::smoke_detail {

namespace {

bool has(std::string_view text, std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
}

// Native code for every GPU on PCI whose compute capability the matrix knows ("9.0" ->
// sm_90): nothing is left for the driver to JIT, which a driver older than the toolkit (minor
// version compatibility) could not do. With an unknown GPU, nvcc's default (its lowest
// architecture plus PTX) lets the driver JIT.
std::vector<std::string> arch_flags(const HostFacts& facts) {
    std::set<std::string> archs;
    for (const auto& gpu : facts.gpus) {
        const auto cc = gpu.compute_capability;
        const auto dot = cc.find('.');
        if (cc.empty() || dot == std::string::npos) {
            return {};
        }
        archs.insert(cc.substr(0, dot) + cc.substr(dot + 1));
    }
    std::vector<std::string> flags;
    for (const auto& a : archs) {
        flags.push_back(fmt::format("-gencode=arch=compute_{0},code=sm_{0}", a));
    }
    return flags;
}

// Why nvcc failed, and the fix, from its own words (tests/fixtures/cmd/smoke/nvcc-*.txt).
std::pair<std::string, std::string> compile_failure(const CommandResult& r,
                                                    const std::string& cuda) {
    const auto text = r.out + "\n" + r.err;
    if (has(text, "unsupported GNU version") || has(text, "unsupported clang version")) {
        return {"the host compiler is newer than CUDA " + cuda + " supports",
                "install a gcc that CUDA " + cuda +
                    "'s installation guide lists and set NVCC_CCBIN to it"};
    }
    if (has(text, "Failed to preprocess host compiler properties") ||
        has(text, "gcc: No such file") || has(text, "cc1plus")) {
        return {"nvcc found no host C++ compiler",
                "install one: apt-get install g++ (dnf install gcc-c++)"};
    }
    if (has(text, "Unsupported gpu architecture") || has(text, "is not defined for option")) {
        return {"CUDA " + cuda + " cannot build native code for this GPU's architecture",
                "use a CUDA release that supports the GPU (the version matrix's first CUDA per "
                "architecture)"};
    }
    return {"nvcc could not compile gpuprov's CUDA program",
            "reinstall the toolkit (gpuprov apply PROFILE --only cuda-toolkit) and read the "
            "compiler output above"};
}

// The fix for a CUDA runtime error code (driver_types.h).
std::string cuda_error_fix(int code) {
    switch (code) {
    case 35: // cudaErrorInsufficientDriver
        return "the loaded driver is older than the CUDA runtime (or none was found): install "
               "the profile's driver branch and reboot if the module is old";
    case 100: // cudaErrorNoDevice
        return "CUDA sees no device although nvidia-smi does: check CUDA_VISIBLE_DEVICES and "
               "the permissions of /dev/nvidia*";
    case 209: // cudaErrorNoKernelImageForDevice
    case 222: // cudaErrorUnsupportedPtxVersion
        return "the kernel was not built for this GPU, or its PTX is newer than the driver "
               "can JIT: use the toolkit's own driver branch";
    case 803: // cudaErrorSystemDriverMismatch
    case 804: // cudaErrorCompatNotSupportedOnDevice
        return "a CUDA forward-compatibility library does not match the kernel module: remove "
               "cuda-compat or install the matching driver";
    case 46: // cudaErrorDevicesUnavailable
        return "the GPUs are in an exclusive compute mode and busy: run when they are free";
    default:
        return "run `gpuprov doctor`; check `dmesg` for Xid errors of the GPU";
    }
}

void judge_run(SmokeOutcome& o, const CommandResult& r, const CudaSmokeReport& rep, int gpus) {
    for (const auto& e : rep.errors) {
        // The first CUDA error explains the rest.
        const auto where = e.device < 0 ? std::string() : fmt::format(" on GPU {}", e.device);
        settle(o, SmokeStatus::failed,
               fmt::format("{} failed{}: {} (cudaError {})", e.call, where, e.text, e.code),
               cuda_error_fix(e.code));
        return;
    }
    // Wrong sums first: the program exits 1 for them, and they are the finding.
    std::vector<std::string> wrong;
    std::vector<std::string> missing;
    long long elements = 0;
    for (const auto& d : rep.devices) {
        if (!d.wrong || !d.elements) {
            missing.push_back(std::to_string(d.index));
        } else if (*d.wrong != 0) {
            wrong.push_back(fmt::format("GPU {} ({}): {} of {} sums wrong", d.index, d.name,
                                        *d.wrong, *d.elements));
        } else {
            elements = *d.elements;
        }
    }
    if (!wrong.empty()) {
        settle(o, SmokeStatus::failed, "wrong results: " + join(wrong, "; "),
               "the GPU computes wrong sums: check `nvidia-smi -q -d ECC,ERROR` and `dmesg` for "
               "Xid errors, and take the GPU out of service");
        return;
    }
    if (!r.ok() || !rep.device_count) {
        settle(o, SmokeStatus::failed,
               "the CUDA program " + run_failure(r, kRunTimeout) + " without reporting results",
               "run `gpuprov doctor`; check `dmesg` for Xid errors of the GPU");
        return;
    }
    if (static_cast<int>(rep.devices.size()) != *rep.device_count || !missing.empty() ||
        *rep.device_count < gpus) {
        settle(o, SmokeStatus::failed,
               fmt::format("CUDA reported {} device{} with results for {}; nvidia-smi lists {}",
                           *rep.device_count, *rep.device_count == 1 ? "" : "s",
                           rep.devices.size() - missing.size(), gpus),
               "check CUDA_VISIBLE_DEVICES and the permissions of /dev/nvidia*");
        return;
    }
    std::vector<std::string> names;
    for (const auto& d : rep.devices) {
        names.push_back(
            fmt::format("{} (sm_{})", d.name, replace_all(d.compute_capability, ".", "")));
    }
    o.found = fmt::format("{} GPU{} added {} floats right: {}", rep.devices.size(),
                          rep.devices.size() == 1 ? "" : "s", elements, join(names, ", "));
    settle(o, SmokeStatus::passed);
}

} // namespace

SmokeOutcome smoke_cuda(const SmokeInput& in, System& sys, const GpuGate& gate) {
    SmokeOutcome o;
    o.id = "smoke.cuda";
    if (!in.profile.cuda) {
        settle(o, SmokeStatus::skipped,
               "the profile has no cuda: section, so there is no toolkit of its to compile with",
               "add cuda: {version: \"X.Y\"} to the profile to have its nvcc tested");
        return o;
    }
    const auto& cuda = in.profile.cuda->version;
    const auto nvcc = "/usr/local/cuda-" + cuda + "/bin/nvcc";
    const auto source = in.work_dir + "/gpuprov_smoke.cu";
    const auto binary = in.work_dir + "/gpuprov-smoke";
    // A missing nvcc is reported as such below, from the attempt to run it.
    if (sys.exists(nvcc) && refuse_untrusted(o, sys, nvcc)) {
        return o;
    }
    sys.write_file_atomic(source, cuda_smoke_source(), 0600);

    Command compile;
    compile.cwd = kSmokeCwd;
    compile.argv = {nvcc, "-O2", "-o", binary, source};
    const auto archs = arch_flags(in.facts);
    compile.argv.insert(compile.argv.begin() + 2, archs.begin(), archs.end());
    compile.timeout = kCompileTimeout;
    o.command = display_argv(compile.argv);
    const auto built = sys.run(compile);
    if (!built.ok()) {
        o.excerpt = tail_lines(nvidia_detail::output_of(built), 6);
        if (built.not_found) {
            settle(o, SmokeStatus::failed,
                   nvcc + " is missing: the CUDA " + cuda + " toolkit is not installed",
                   "gpuprov apply " + in.profile.name + " --only cuda-toolkit");
            return o;
        }
        if (built.timed_out || built.interrupted) {
            settle(o, SmokeStatus::failed, "nvcc " + run_failure(built, kCompileTimeout),
                   "check the host's load and that " + in.work_dir + "'s filesystem responds");
            return o;
        }
        auto [reason, fix] = compile_failure(built, cuda);
        settle(o, SmokeStatus::failed, reason + " (" + run_failure(built, kCompileTimeout) + ")",
               fix);
        return o;
    }
    if (!sys.exists(binary)) {
        o.excerpt = tail_lines(nvidia_detail::output_of(built), 6);
        settle(o, SmokeStatus::failed, "nvcc exited 0 but wrote no program at " + binary,
               "check that " + nvcc + " is NVIDIA's nvcc (`" + nvcc + " --version`)");
        return o;
    }

    Command run;
    run.cwd = kSmokeCwd;
    run.argv = {binary};
    run.timeout = kRunTimeout;
    o.command += "; " + display_argv(run.argv);
    const auto ran = sys.run(run);
    o.excerpt = nvidia_detail::head_lines(ran.out + "\n" + ran.err, 8);
    if (ran.not_found) {
        settle(o, SmokeStatus::failed, "the compiled program could not be executed",
               "the temporary directory's filesystem may be mounted noexec: set TMPDIR to a "
               "directory on one that allows execution");
        return o;
    }
    judge_run(o, ran, parse_cuda_smoke(ran.out), gate.gpus);
    return o;
}

} // namespace gpuprov::smoke_detail
