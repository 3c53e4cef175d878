#pragma once
// Scenario profiles (schema v1, docs/profiles.md). yaml-cpp stays inside src/profile; everything
// else sees these plain structs.
#include <gpuprov/embedded.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {

class Matrix;

/// Where a value came from, so plan-time errors can point at the profile line.
struct SourcePos {
    std::string file;
    int line = 0;
    int col = 0;
};

struct GpuRequirement {
    int count = 1;
    std::optional<std::string> model;        ///< "A100"; must be a model the matrix knows
    std::optional<int> memory_gib;           ///< per GPU, at least
    std::optional<std::string> interconnect; ///< "nvlink" | "pcie"
};

/// host.disk (v1): free space on one path.
struct DiskRequirement {
    std::string path = "/";
    int free_gib = 0;
};

/// One entry of host.disks: the storage a path lives on, sized as sysadmins buy it.
struct DiskSpec {
    std::string path = "/";
    /// The device under `path` (the whole disk; the filesystem when sysfs cannot tell) holds at
    /// least this many GiB. A "2 TB" disk is 1863 GiB, a "1 TB" one 931 GiB.
    std::optional<int> size_gib;
    std::optional<int> free_gib; ///< free space on the filesystem now
    bool nvme = false;           ///< every disk under it is an NVMe namespace
    bool ssd = false;            ///< no disk under it rotates
};

struct HostRequirements {
    std::vector<std::string> os; ///< empty: every supported OS
    std::optional<GpuRequirement> gpus;
    std::optional<int> memory_gib;
    std::optional<DiskRequirement> disk; ///< legacy single free-space check
    std::vector<DiskSpec> disks;
};

/// The profile repository that holds Docker's packages (container.engine docker-ce).
inline constexpr const char* kDockerRepoName = "docker";

struct RepositorySpec {
    std::string name; ///< "cuda", "container-toolkit"
    std::string url;  ///< may hold {distro} {arch} {pkgarch}
    std::string key_url;
    std::string key_fingerprint; ///< 40 hex digits, upper case, no spaces
    bool allow_insecure = false; ///< permits http:// URLs
};

/// driver.kernel_guard: what the kernel install hook (src/steps/kernel_hooks.cpp) does with a
/// newly installed kernel that has no nvidia module and none can be built for (no headers).
enum class KernelGuard {
    warn,  ///< log it, warn on the package manager's output, let the kernel install
    block, ///< fail the kernel's install (Debian/Ubuntu) or its boot entry (EL kernel-install)
};

struct DriverSpec {
    std::string branch; ///< "535"
    /// auto | proprietary | open | server. auto resolves at plan against the GPUs found (or
    /// host.gpus.model): driver_flavor() in gpuprov/gpu_rules.hpp.
    std::string flavor = "auto";
    bool hold = false;
    bool hold_kernel = false;
    KernelGuard kernel_guard = KernelGuard::warn;
    /// A driver from NVIDIA's .run installer may be removed with its own uninstaller before the
    /// packages are installed; false: the driver step is blocked on it.
    bool replace_runfile = false;
    /// An exact driver ("550.90.07", on `branch`); nullopt: the newest in the branch.
    std::optional<std::string> version;
};

struct CudaSpec {
    std::string version; ///< "12.4" (major.minor)
    /// An exact toolkit release ("12.4.1") when the profile pins one; nullopt: the newest
    /// cuda-toolkit-X-Y the repository has.
    std::optional<std::string> exact;
};

struct CudnnSpec {
    std::string version; ///< "8.9" or "9" / "9.1"
};

/// TensorRT from the CUDA repository, built for the profile's CUDA major.
struct TensorrtSpec {
    std::string version; ///< "10" or "10.4": a TensorRT major, optionally with its minor
};

/// container: the NVIDIA runtime for a container engine (docs/containers.md).
struct ContainerSpec {
    bool toolkit = false;
    std::string runtime = "docker"; ///< docker | containerd | crio
    /// The engine gpuprov installs: none (the host brings its own) | docker.io | containerd (the
    /// distro's, Debian/Ubuntu) | docker-ce (Docker's repository: required, never added).
    std::string engine = "none";
    bool cdi = false; ///< `nvidia-ctk cdi generate` into /etc/cdi/nvidia.yaml
    /// An image verify runs `nvidia-smi -L` in with `docker run --gpus all`; never pulled.
    std::optional<std::string> test_image;
};

/// How GPU memory is registered with the HCA (GPUDirect RDMA). NVIDIA recommends DMA-BUF (the
/// kernel's buffer sharing: open kernel modules, Linux 5.12+) over the legacy nvidia-peermem
/// module, which needs MLNX_OFED/DOCA-OFED's peer-memory API (GPU Operator docs, "GPUDirect
/// RDMA and GPUDirect Storage").
enum class GpuDirectMode { automatic, dmabuf, peermem, off };

/// infiniband: multi-node NCCL over InfiniBand: the distro's rdma-core and verbs tools,
/// GPUDirect RDMA and /etc/nccl.conf naming the InfiniBand ports.
struct InfinibandSpec {
    bool required = true;             ///< no HCA blocks the plan; false: the step is skipped
    int min_active_ports = 1;         ///< InfiniBand-link-layer ports that must be ACTIVE
    std::optional<int> min_rate_gbps; ///< every ACTIVE InfiniBand port at least this fast
    /// auto: DMA-BUF with the open flavor on Linux 5.12+, else nvidia-peermem.
    GpuDirectMode gpudirect_rdma = GpuDirectMode::automatic;
    bool nccl_conf = true; ///< gpuprov owns /etc/nccl.conf (NCCL_IB_HCA)
};

/// kubernetes: the host is a Kubernetes node whose pods get GPUs through NVIDIA's device plugin
/// (docs/kubernetes.md). The plugin needs the nvidia runtime as the container runtime's default,
/// or a RuntimeClass naming it (NVIDIA/k8s-device-plugin README, "Preparing your GPU Nodes").
struct KubernetesSpec {
    bool node = false;
    /// "default": `nvidia-ctk runtime configure --set-as-default`, every pod runs with it;
    /// "nvidia": the runtime is only added, pods (and the device plugin) opt in with
    /// runtimeClassName: nvidia.
    std::string runtime_class = "default";
    /// True when the nvidia runtime must be the runtime's default.
    [[nodiscard]] bool nvidia_default() const { return node && runtime_class == "default"; }
};

enum class FabricManagerMode { automatic, enabled, disabled };

/// fabric: NVLink fabric services beside fabric manager (docs/profiles.md#fabric).
struct FabricSpec {
    /// nvidia-imex at the driver's version, held with it, whether or not fabric manager runs
    /// here (GB200/GB300 compute trays need IMEX and no local fabric manager).
    bool imex = false;
    /// The IMEX domain's nodes, this one included (IPv4, IPv6 or host names), written one per
    /// line to /etc/nvidia-imex/nodes_config.cfg, and then gpuprov runs nvidia-imex.service.
    /// Empty: gpuprov writes no node list and leaves the service to whoever writes it (NVIDIA's
    /// IMEX guide: the list must be in place before the service starts).
    std::vector<std::string> imex_nodes;
    /// gpuprov owns the node list and the service.
    [[nodiscard]] bool imex_service() const { return imex && !imex_nodes.empty(); }
};

/// One part of a MIG layout: which GPUs, and the GPU instances each of them gets (mig-parted's
/// `devices` / `mig-enabled` / `mig-devices`, docs/mig.md).
struct MigLayoutEntry {
    bool all = false;                                 ///< devices: all
    std::vector<int> gpus;                            ///< devices: [0, 1] (nvidia-smi indices)
    bool mig_enabled = true;                          ///< false: MIG off on these GPUs
    std::vector<std::pair<std::string, int>> devices; ///< {"1g.10gb", 7}, in the profile's order
    SourcePos pos;                                    ///< where the entry starts
};

/// mig: MIG mode and the layout the `mig` step applies and its boot unit re-applies.
struct MigSpec {
    bool enabled = true; ///< mode: enabled | disabled (every GPU)
    std::vector<MigLayoutEntry> layout;
    /// The entry for GPU `index`: one that names it, else `devices: all`; nullptr when none.
    [[nodiscard]] const MigLayoutEntry* for_gpu(int index) const;
};

struct TuningSpec {
    bool persistence_mode = false;
};

struct MonitoringSpec {
    std::string textfile_dir = "/var/lib/prometheus/node-exporter";
    int temperature_alert_c = 85;
    /// Install the distro's prometheus-node-exporter with its textfile collector reading
    /// textfile_dir (docs/metrics.md).
    bool node_exporter = false;
    /// The `dcgm` step: NVIDIA's DCGM 4 packages for the driver's CUDA major and the
    /// nvidia-dcgm host engine (docs/dcgm.md).
    bool dcgm = false;
    /// A gpuprov unit running an installed dcgm-exporter binary against that host engine;
    /// needs dcgm. NVIDIA publishes no dcgm-exporter package in its repositories.
    bool dcgm_exporter = false;
};

/// framework: what runs on top of the stack. gpuprov installs none of it; `verify --smoke` runs
/// it on the GPU (docs/verify.md#smoke-tests).
struct FrameworkSpec {
    std::string pytorch; ///< "2", "2.x" or "2.4": the torch release the environment holds
    /// The virtualenv (or conda environment) whose bin/python imports torch; empty: the
    /// system's /usr/bin/python3.
    std::string venv;
};

/// readiness: the gate that holds kubelet and slurmd at boot until `gpuprov verify --quick`
/// passes (docs/upgrade.md#readiness-gate), or `timeout_s` runs out.
struct ReadinessSpec {
    int timeout_s = 600;
};

struct Profile {
    std::string name;
    std::string description;
    std::string source;                     ///< file path or "builtin:cv-train.yaml"
    std::vector<std::string> extends_chain; ///< resolved parents, nearest first
    HostRequirements host;
    bool nouveau_blacklist = true;
    std::map<std::string, RepositorySpec> repositories;
    std::optional<DriverSpec> driver;
    std::optional<CudaSpec> cuda;
    std::optional<CudnnSpec> cudnn;
    bool nccl = false;
    std::optional<TensorrtSpec> tensorrt;
    std::optional<ContainerSpec> container;
    FabricManagerMode fabric_manager = FabricManagerMode::automatic;
    FabricSpec fabric;
    std::optional<InfinibandSpec> infiniband;
    std::optional<KubernetesSpec> kubernetes;
    TuningSpec tuning;
    std::optional<MigSpec> mig;
    std::optional<MonitoringSpec> monitoring;
    std::optional<ReadinessSpec> readiness; ///< absent, or `gate: false`: no gate
    std::optional<FrameworkSpec> framework;
    std::vector<std::string> skip_steps;
    /// bundle.key_fingerprint: the key an offline bundle (--from-bundle) must be signed with,
    /// 40 upper-case hex digits, so cloud-init and fleet runs need no --bundle-key
    /// (docs/air-gapped.md). Empty: only --bundle-key can trust a bundle.
    std::string bundle_key;
    /// Positions of keys by dotted path ("cuda.version"), for errors raised after loading.
    std::map<std::string, SourcePos> positions;

    /// Position of a key, or of the file's start when unknown.
    [[nodiscard]] SourcePos pos(const std::string& key_path) const;
};

/// Built-in profile files compiled from profiles/*.yaml.
[[nodiscard]] const std::vector<EmbeddedFile>& builtin_profiles();

/// Loads a built-in name ("cv-train") or a YAML file path, resolving `extends:` (maps merge,
/// lists replace; cycles refused) and validating against the schema and `matrix`.
/// Throws ProfileError (file:line:col, expected values, the fix) on any problem.
[[nodiscard]] Profile load_profile(const std::string& name_or_path, const Matrix& matrix);
/// The profile file `path` as one self-contained YAML document: its `extends:` chain merged as
/// load_profile merges it, `extends` removed, every scalar double-quoted so it reads back as
/// the same text. For installing a profile where the files it extends may not follow (the
/// resume unit's copy under /etc/gpuprov/). Throws ProfileError like load_profile.
[[nodiscard]] std::string resolved_profile_yaml(const std::string& path);
/// Same, from text already in memory (`source_name` is used in messages and for relative
/// `extends:` paths).
[[nodiscard]] Profile load_profile_text(std::string_view yaml, const std::string& source_name,
                                        const Matrix& matrix);

} // namespace gpuprov
