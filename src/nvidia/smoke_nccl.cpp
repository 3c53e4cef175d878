// smoke.nccl: nccl-tests' all_reduce_perf over every GPU in one process (-g N), short sizes,
// with its data check on. gpuprov does not install nccl-tests: absent, the test is skipped. As
// root, a build someone else could change (one in a user's PATH) is refused, not run.
#include "probe.hpp"
#include "smoke_parts.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::smoke_detail {

namespace {

// Where a build of github.com/NVIDIA/nccl-tests usually lands when it is not on PATH.
constexpr const char* kKnownDirs[] = {"/usr/local/bin", "/usr/bin", "/opt/nccl-tests/build",
                                      "/usr/local/nccl-tests/build"};

std::string find_all_reduce_perf(const SmokeInput& in, const System& sys) {
    std::vector<std::string> dirs;
    for (const auto& d : in.search_path) {
        if (!d.empty() && d.front() == '/') { // a relative PATH entry means nothing here
            dirs.push_back(d);
        }
    }
    dirs.insert(dirs.end(), std::begin(kKnownDirs), std::end(kKnownDirs));
    for (const auto& d : dirs) {
        const auto path = d + "/all_reduce_perf";
        if (sys.exists(path)) {
            return path;
        }
    }
    return {};
}

} // namespace

SmokeOutcome smoke_nccl(const SmokeInput& in, System& sys, const GpuGate& gate) {
    SmokeOutcome o;
    o.id = "smoke.nccl";
    const auto tool = find_all_reduce_perf(in, sys);
    if (tool.empty()) {
        settle(o, SmokeStatus::skipped,
               "all_reduce_perf (nccl-tests) is not on PATH nor in /opt/nccl-tests/build or "
               "/usr/local/nccl-tests/build",
               "build github.com/NVIDIA/nccl-tests (make CUDA_HOME=/usr/local/cuda) to have "
               "NCCL tested across the GPUs");
        return o;
    }
    if (refuse_untrusted(o, sys, tool)) {
        return o;
    }
    Command cmd;
    cmd.cwd = kSmokeCwd;
    // 8 B to 128 MiB doubling: a few seconds on NVLink, enough to cross every NCCL protocol.
    cmd.argv = {tool, "-b", "8", "-e", "128M", "-f", "2", "-g", std::to_string(gate.gpus),
                "-c", "1"};
    cmd.timeout = kNcclTimeout;
    o.command = display_argv(cmd.argv);
    const auto r = sys.run(cmd);
    const auto rep = parse_all_reduce_perf(r.out);
    const auto all = nvidia_detail::output_of(r);
    if (!r.ok()) {
        o.excerpt = tail_lines(all, 6);
        const bool no_lib = all.find("libnccl.so") != std::string::npos;
        settle(o, SmokeStatus::failed, "all_reduce_perf " + run_failure(r, kNcclTimeout),
               no_lib ? "install NCCL (nccl: true in the profile, then gpuprov apply)"
                      : "read the NCCL error above; NCCL_DEBUG=INFO all_reduce_perf -g " +
                            std::to_string(gate.gpus) + " shows the transport it chose");
        return o;
    }
    o.excerpt = tail_lines(all, 3);
    if (!rep.out_of_bounds || !rep.avg_bus_bandwidth) {
        settle(o, SmokeStatus::failed,
               "no \"Out of bounds values\" and \"Avg bus bandwidth\" summary in its output",
               "run " + o.command +
                   " by hand; a build of nccl-tests that prints no summary "
                   "cannot be judged");
        return o;
    }
    if (*rep.out_of_bounds != 0 || rep.wrong_rows.value_or(0) != 0) {
        settle(o, SmokeStatus::failed,
               fmt::format("wrong results: {} values out of bounds in {} sizes", *rep.out_of_bounds,
                           rep.wrong_rows.value_or(0)),
               "NCCL moved data wrongly: check `nvidia-smi topo -m`, NVLink errors "
               "(`nvidia-smi nvlink -e`) and `dmesg` for Xid errors");
        return o;
    }
    if (rep.gpus && *rep.gpus != gate.gpus) {
        settle(o, SmokeStatus::failed,
               fmt::format("all_reduce_perf ran on {} GPUs, nvidia-smi lists {}", *rep.gpus,
                           gate.gpus),
               "check CUDA_VISIBLE_DEVICES");
        return o;
    }
    o.found = fmt::format("{} GPU{}, data correct, avg bus bandwidth {} GB/s", gate.gpus,
                          gate.gpus == 1 ? "" : "s", *rep.avg_bus_bandwidth);
    settle(o, SmokeStatus::passed);
    return o;
}

} // namespace gpuprov::smoke_detail
