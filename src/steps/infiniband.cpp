// infiniband: what multi-node NCCL needs on top of an HCA the kernel already drives: the
// distro's rdma-core and verbs/diagnostic tools, GPUDirect RDMA (DMA-BUF, or nvidia-peermem
// loaded now and at boot), and /etc/nccl.conf naming the InfiniBand ports so NCCL neither
// falls back to sockets nor picks a RoCE/Ethernet port meant for storage.
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kPeermemConf = "/etc/modules-load.d/gpuprov-nvidia-peermem.conf";
constexpr const char* kNcclConf = "/etc/nccl.conf";

/// The distro's RDMA userspace: rdma-core (udev rules, the module lists), the verbs providers
/// (libmlx5 for ConnectX), the verbs utilities (ibv_devinfo) and infiniband-diags (ibstat). Same
/// source package (rdma-core) on both families, split differently: Debian's libibverbs1 only
/// Recommends ibverbs-providers (rdma-core 44.0-2's control), so an apt that skips Recommends
/// (cloud and container images) leaves libibverbs with no provider and ibv_devinfo lists no
/// device; EL's libibverbs carries the providers and libibverbs-utils requires it.
std::vector<std::string> rdma_packages(const HostFacts& facts) {
    if (facts.os.family == "rhel") {
        return {"rdma-core", "libibverbs-utils", "infiniband-diags"};
    }
    return {"rdma-core", "ibverbs-providers", "ibverbs-utils", "infiniband-diags"};
}

ManagedFile peermem_conf() {
    // modules-load.d(5): one module per line, loaded by systemd-modules-load at boot.
    return {kPeermemConf, std::string(kManagedHeader) + "nvidia-peermem\n"};
}

std::optional<ManagedFile> nccl_conf(const HostFacts& facts) {
    const auto ports = infiniband_ports_for_nccl(facts);
    if (ports.empty()) {
        return std::nullopt;
    }
    // NCCL reads /etc/nccl.conf (NCCL_CONF_FILE's default) as VAR=value lines; "=" before the
    // list makes NCCL_IB_HCA an exact match, so mlx5_1 does not also select mlx5_10 (NCCL user
    // guide, "Environment Variables").
    return ManagedFile{kNcclConf, std::string(kManagedHeader) +
                                      "# The InfiniBand ports of this host, for NCCL.\n"
                                      "NCCL_IB_HCA==" +
                                      join(ports, ",") + "\n"};
}

bool has_hca(const HostFacts& facts) {
    return !facts.ib_hca_pci.empty() || !facts.infiniband.empty();
}

bool nvidia_loaded(const System& sys) {
    return sys.exists("/sys/module/nvidia");
}

class Infiniband final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "infiniband"; }
    [[nodiscard]] std::string_view summary() const override {
        return "rdma-core, GPUDirect RDMA and NCCL's InfiniBand ports";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.infiniband) {
            r.status = StepStatus::skipped;
            r.reason = "profile has no infiniband section";
            return r;
        }
        const auto& want = *ctx.profile.infiniband;
        if (!has_hca(ctx.facts)) {
            r.status = want.required ? StepStatus::blocked : StepStatus::skipped;
            r.reason = want.required ? "no InfiniBand HCA (PCI class 0x0207) on this host; set "
                                       "infiniband.required: false to provision it without one"
                                     : "no InfiniBand HCA on this host";
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        std::vector<PackagePin> missing;
        for (const auto& name : rdma_packages(ctx.facts)) {
            if (!pm->installed(sys, name)) {
                missing.push_back({name, ""});
            }
        }
        plan_installs(r, sys, *pm, missing);

        if (gpudirect_mode(ctx.profile, ctx.facts) == GpuDirectMode::peermem) {
            require_file(sys, peermem_conf(), r);
            if (nvidia_loaded(sys) && !sys.exists("/sys/module/nvidia_peermem")) {
                r.changes.push_back(command_change({.argv = {"modprobe", "nvidia-peermem"}},
                                                   "GPUDirect RDMA now; the file loads it at "
                                                   "every boot"));
                if (r.status == StepStatus::satisfied) {
                    r.status = StepStatus::pending;
                }
            }
        }
        if (want.nccl_conf) {
            if (const auto conf = nccl_conf(ctx.facts)) {
                require_file(sys, *conf, r);
            } else {
                r.changes.push_back(note("no InfiniBand port is registered yet (RDMA driver not "
                                         "loaded?): /etc/nccl.conf is left as it is"));
            }
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        if (ctx.profile.infiniband->nccl_conf) {
            if (const auto conf = nccl_conf(ctx.facts)) {
                write_managed(sys, *conf);
            }
        }
        if (gpudirect_mode(ctx.profile, ctx.facts) != GpuDirectMode::peermem) {
            return StepStatus::done;
        }
        write_managed(sys, peermem_conf());
        // Without the nvidia module (its reboot is pending) the file loads it at boot.
        if (nvidia_loaded(sys) && !sys.exists("/sys/module/nvidia_peermem")) {
            const auto r = sys.run({.argv = {"modprobe", "nvidia-peermem"}, .timeout = 60s});
            if (!r.ok()) {
                throw HostError(fmt::format(
                    "modprobe nvidia-peermem failed (exit {}): {}; nvidia-peermem needs the "
                    "peer-memory API of MLNX_OFED/DOCA-OFED, which the distro's inbox RDMA stack "
                    "lacks ('Unknown symbol ib_register_peer_memory_client' in dmesg). Install "
                    "DOCA-OFED, or use DMA-BUF: infiniband.gpudirect_rdma: dmabuf with "
                    "driver.flavor: open on Linux 5.12+",
                    r.exit_code, std::string(trim(tail_lines(r.err, 4)))));
            }
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        return check_infiniband({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_infiniband() {
    return std::make_unique<Infiniband>();
}

} // namespace gpuprov::steps
