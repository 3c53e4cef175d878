#pragma once
// NVIDIA version data: CUDA → minimum driver, what each distro repo carries, cuDNN builds per
// CUDA, GPU PCI ids → model, repo key fingerprints. Loaded from the one data file
// src/data/nvidia-matrix.yaml (compiled in); every table there cites its NVIDIA source.
#include <cstdint>
#include <gpuprov/version.hpp>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuprov {

struct GpuModel {
    std::uint16_t device_id = 0;
    std::string model;              ///< family name a profile uses: "A100", "H100", "T4"
    std::string name;               ///< "A100 SXM4 80GB"
    std::string smi_name;           ///< what nvidia-smi prints; empty when no output was seen
    std::string architecture;       ///< "ampere"
    std::string compute_capability; ///< "8.0"
    int memory_gib = 0;
    bool nvswitch = false;  ///< HGX/DGX SXM part: NVSwitch systems need fabric manager
    bool datacenter = true; ///< an NVIDIA Data Center GPU: CUDA forward compatibility applies
    /// A second family sharing this PCI id ("A16" beside "A2" on 0x25B6): PCI alone cannot
    /// tell them apart, nvidia-smi's name does. Empty for the usual one-id-one-board case.
    std::string also_model;
    /// Loads with the open kernel modules only although its architecture has both (GH200).
    bool requires_open = false;
    /// First driver branch that runs this board, where later than its architecture's.
    std::optional<int> first_branch;
    bool confirmed = true; ///< false: a value of the row rests on one third-party source
    /// True when a profile's host.gpus.model names this device.
    [[nodiscard]] bool is_model(const std::string& m) const {
        return m == model || (!also_model.empty() && m == also_model);
    }
};

/// A MIG GPU-instance profile of a board (matrix `mig_profiles`).
struct MigProfile {
    std::string name; ///< "1g.10gb", "1g.10gb+me"
    int id = 0;       ///< what `nvidia-smi mig -cgi` takes
    int slices = 0;   ///< compute slices of 7
    int max = 0;      ///< most instances of it on one GPU
    bool confirmed = true;
};

struct CudaRelease {
    DottedVersion version;    ///< "12.4"
    DottedVersion min_driver; ///< toolkit driver of the GA release, "550.54.14"
    int driver_branch = 0;    ///< lowest branch that carries it: 550
    /// min_driver as NVIDIA writes it ("580.65.06"); DottedVersion::str() drops the zero.
    std::string min_driver_text;
    bool confirmed = true; ///< false: min_driver is only "<branch>.0" (13.3, 13.4)
};

/// Docker's package repositories; as a profile's repositories.docker.url it stands for Docker's
/// repository of the host's distro (DistroRepo::docker).
inline constexpr std::string_view kDockerRepoRoot = "https://download.docker.com/linux/";

/// Docker's own package repository for a distro (container.engine docker-ce).
struct DockerRepo {
    std::string url;   ///< "https://download.docker.com/linux/debian"; may hold {pkgarch}
    std::string suite; ///< apt's Suites ("bookworm"); empty on the rhel family (a baseurl)
    std::string key_url;
    std::string key_fingerprint;
};

struct DistroRepo {
    std::string slug;       ///< "debian12"
    std::string os;         ///< the host.os id profiles use: "debian-12", "ubuntu-22.04"
    std::string family;     ///< "debian" | "rhel"
    DottedVersion cuda_min; ///< oldest cuda-toolkit-X-Y in the network repo
    /// Newest, only for a repo NVIDIA stopped adding releases to; nullopt: open-ended (the live
    /// index decides about releases newer than the matrix).
    std::optional<DottedVersion> cuda_max;
    /// Empty where NVIDIA's key is known by its file name only (rhel10's CDF6BA43.pub): a
    /// profile must then pin the fingerprint itself.
    std::string key_fingerprint;
    std::string key_file;             ///< "3bf863cc.pub"
    bool confirmed = true;            ///< false: cuda_min/cuda_max are inferred, not seen
    std::optional<DockerRepo> docker; ///< Docker's repository for this distro, if it has one
    /// Why Docker has no repository for this distro any more (it stopped publishing), with the
    /// source; the plan says so instead of failing at install. Empty when `docker` is set.
    std::string docker_unpublished;
    /// True when the repo carries cuda-toolkit-X-Y for this major.minor.
    [[nodiscard]] bool carries(const DottedVersion& cuda) const {
        return cuda_min <= cuda && (!cuda_max || cuda <= *cuda_max);
    }
};

struct CudnnBuild {
    std::string cudnn;               ///< full version "8.9.7.29"
    std::vector<DottedVersion> cuda; ///< the +cudaX.Y builds that exist
    /// Per build (same index as `cuda`): the oldest CUDA it serves ("12.0" for +cuda12.2).
    std::vector<DottedVersion> serves_from;
};

/// A range of cuDNN 9 minors and the CUDA majors they build for.
struct Cudnn9Range {
    DottedVersion first;               ///< "9.0"
    DottedVersion last;                ///< "9.4"
    std::map<int, DottedVersion> cuda; ///< CUDA major -> oldest release of it served
    /// Majors that may be built in this range (not confirmed), with their oldest release.
    std::map<int, DottedVersion> maybe;
    /// Lowest compute capability these minors support (NVIDIA's support matrix); nullopt: not
    /// confirmed for this range.
    std::optional<DottedVersion> min_cc;
    [[nodiscard]] bool confirmed() const { return maybe.empty(); }
};

/// One TensorRT major release line in NVIDIA's CUDA repository (matrix `tensorrt:`).
struct TensorrtLine {
    int major = 0;                ///< 10
    std::string soname;           ///< "libnvinfer.so.10"
    std::vector<int> cuda_majors; ///< CUDA majors it has builds for
    std::vector<std::string> deb; ///< packages installed in lockstep (apt names)
    std::vector<std::string> rpm; ///< the same for dnf
    bool confirmed = true;
};

/// One NVIDIA Kubernetes device plugin release (matrix `kubernetes.device_plugin.releases`)
/// with the driver branches NVIDIA's GPU Operator release that ships it supports.
struct DevicePluginRelease {
    std::string version;              ///< the image tag: "v0.19.0"
    std::string gpu_operator;         ///< the GPU Operator release naming it: "v26.3.1"
    std::vector<int> driver_branches; ///< 535, 570, ...
};

/// The device plugin for a driver branch (Matrix::device_plugin_for).
struct DevicePluginPick {
    const DevicePluginRelease* release = nullptr; ///< nullptr: the matrix lists none
    bool validated = false; ///< false: no release lists the branch; the newest is used
};

/// CUDA minor version compatibility floor of a CUDA major.
struct MinorVersionCompat {
    int cuda_major = 0;
    DottedVersion min_driver; ///< "525.60.13"
};

/// A data-center driver branch and its lifecycle.
struct DriverBranchInfo {
    int branch = 0;
    std::string type; ///< "ltsb" | "production" | "new-feature" | "" (not stated)
    std::string eol;  ///< "2026-06", or "ended" when NVIDIA lists it as EOL without a date
    /// "Long Term Support Branch", "Production Branch", "New Feature Branch", "".
    [[nodiscard]] std::string type_name() const;
};

/// Minimum CUDA of a compute capability where it is later than its architecture's.
struct ComputeCapability {
    std::string cc;         ///< "8.6"
    DottedVersion min_cuda; ///< "11.1"
    bool confirmed = true;
};

/// Packages whose version names the CUDA build they are for (NCCL, cuDNN 8).
struct CudaBuiltPackages {
    std::vector<std::string> packages;
    std::string release; ///< "+cuda{cuda}": appended to the library's version
};

/// The driver as NVIDIA packages it for the rhel family: a dnf module stream per branch and
/// flavour on RHEL 8/9, none from `no_module_streams_from` on (RHEL 10), and the packages.
struct RpmDriverPackages {
    std::string module;                                       ///< "nvidia-driver"
    std::map<std::string, std::string> streams;               ///< flavour -> "{branch}-open"
    std::map<std::string, std::vector<std::string>> packages; ///< flavour -> names
    std::string version_from;                                 ///< "nvidia-driver"
    std::string dkms;                                         ///< "dkms" (EPEL)
    std::vector<std::string> kernel_packages;                 ///< kernel-devel, kernel-headers
    /// The first EL major whose NVIDIA repository has no nvidia-driver module (10); 0: every
    /// major has streams.
    int no_module_streams_from = 0;
    /// The dnf versionlock plugin's package per EL major (python3-dnf-plugin-versionlock).
    std::map<int, std::string> versionlock_plugin;
    /// Whether NVIDIA's repository for this EL major publishes the driver as module streams.
    [[nodiscard]] bool modular(int el_major) const {
        return no_module_streams_from == 0 || el_major < no_module_streams_from;
    }
};

/// Driver branches from `min` to `max`, both included.
struct BranchRange {
    int min = 0;
    int max = std::numeric_limits<int>::max();
    [[nodiscard]] bool contains(int branch) const { return branch >= min && branch <= max; }
};

/// Fabric manager's packages for a range of branches: NVIDIA dropped the branch from their
/// names at R580 (nvidia-fabricmanager-570 → nvidia-fabricmanager).
struct FabricManagerNames {
    BranchRange branches;
    std::vector<std::string> packages; ///< "nvidia-fabricmanager-{branch}", "libnvidia-nscq", ...
    /// What NVLink 5 hosts (HGX B200/B300) need beside them from NVIDIA's repository: "nvlsm",
    /// at its own (date-based) version; empty where the branch has none.
    std::vector<std::string> nvlink5;
    /// IMEX (`fabric.imex`) at the driver's version: "nvidia-imex-{branch}" (550-575),
    /// "nvidia-imex" from 580 (with nvidia-modprobe on apt); empty where the branch has none.
    std::vector<std::string> imex;
};

/// NVIDIA's DCGM 4 (`monitoring.dcgm`): its packages, built per CUDA major of the user-mode
/// driver, and the driver branches and CUDA majors they serve (`packages.<family>.dcgm`).
struct DcgmNames {
    /// "datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda{cuda_major}", ...: all
    /// installed at one version (the -cuda<N> packages Depend on the core's exact version).
    std::vector<std::string> packages;
    std::vector<int> cuda_majors; ///< the CUDA majors NVIDIA builds DCGM 4's plugins for
    int min_branch = 0;           ///< the oldest driver branch DCGM supports
    [[nodiscard]] bool empty() const { return packages.empty(); }
};

/// How a driver branch is kept from moving on apt.
enum class BranchLock {
    hold, ///< apt-mark hold on the installed closure (driver.hold): names carry the branch
    pin,  ///< NVIDIA's nvidia-driver-pinning-* package: names do not carry the branch
};

/// One naming scheme of NVIDIA's driver packages on apt (`packages.debian.driver.schemes`).
struct AptDriverScheme {
    std::string name;            ///< "suffixed" | "pinned"
    std::vector<std::string> os; ///< os-release ids it applies to (ubuntu, debian)
    BranchRange branches;
    BranchLock lock = BranchLock::hold;
    std::map<std::string, std::vector<std::string>> packages; ///< flavour -> top-level names
    int open_since = 0; ///< the first branch with the open flavour's packages (0: any)
};

/// NVIDIA's driver on apt: its naming schemes and the pinning packages (`packages.debian.driver`).
struct AptDriverPackages {
    std::string pinning_branch;  ///< "nvidia-driver-pinning-{branch}"
    std::string pinning_version; ///< "nvidia-driver-pinning-{version}"
    std::vector<AptDriverScheme> schemes;
    /// The first scheme for this OS and branch; nullptr when none covers them.
    [[nodiscard]] const AptDriverScheme* scheme_for(std::string_view os_id, int branch) const;
};

/// What NVIDIA calls each part in one package family's repositories (the data file's
/// `packages`). Templates: {branch}, {version}, {cuda}, {cuda_major}, {cuda_dash}, {arch},
/// {pkgarch}.
struct PackageNames {
    std::string cuda_toolkit;        ///< "cuda-toolkit-{cuda_dash}"
    std::vector<std::string> cudnn9; ///< "libcudnn9-cuda-{cuda_major}", ...
    CudaBuiltPackages cudnn8;
    CudaBuiltPackages nccl;
    std::vector<FabricManagerNames> fabric_manager;
    std::vector<std::string> container_toolkit;
    std::string container_repo_path;         ///< "stable/rpm/{pkgarch}/" under the toolkit's URL
    std::optional<RpmDriverPackages> driver; ///< rhel only: the module stream driver
    std::optional<AptDriverPackages> apt_driver; ///< debian only: the apt naming schemes
    DcgmNames dcgm; ///< empty when the data file names no DCGM packages for the family
    /// Fabric manager's package names for a branch (templates expanded); empty when the data
    /// file names none for it.
    [[nodiscard]] std::vector<std::string> fabric_manager_for(int branch) const;
    /// The NVLink 5 additions for a branch (FabricManagerNames::nvlink5); empty when none.
    [[nodiscard]] std::vector<std::string> nvlink5_for(int branch) const;
    /// IMEX's packages for a branch (FabricManagerNames::imex); empty when none.
    [[nodiscard]] std::vector<std::string> imex_for(int branch) const;
};

/// Fills the templates of a PackageNames value.
struct PackageVars {
    std::string branch;
    std::string version; ///< driver.version ("595.71.05")
    std::string cuda;    ///< "12.4"
    std::string arch;
    std::string pkgarch;
};
[[nodiscard]] std::string expand_package_name(std::string_view pattern, const PackageVars& vars);
[[nodiscard]] std::vector<std::string> expand_package_names(const std::vector<std::string>& names,
                                                            const PackageVars& vars);

/// How a driver branch runs a CUDA release (Matrix::driver_runs_cuda).
struct DriverCudaFit {
    enum class Kind { toolkit_driver, minor_compat, too_old };
    Kind kind = Kind::too_old;
    std::string note; ///< minor_compat: what works and what does not; too_old: why and the fixes
};

/// Whether a cuDNN 9 version prefix has a build for a CUDA release (Matrix::cudnn9_for).
struct Cudnn9Fit {
    enum class Kind { supported, unsupported, unconfirmed };
    Kind kind = Kind::unsupported;
    std::string message; ///< unsupported: why, with the alternatives; unconfirmed: the note
    /// Set when later cuDNN 9 minors still build for this CUDA major but no longer serve this
    /// release (CUDA 11.4-11.7 stop at 9.4): install no newer minor than this.
    std::optional<DottedVersion> newest_minor;
};

struct Architecture {
    std::string name;                      ///< "hopper"
    DottedVersion min_cuda;                ///< first CUDA that compiles native code for it
    bool open_module_ok = true;            ///< open kernel modules support it (Turing+)
    bool proprietary_ok = true;            ///< proprietary modules support it (not Blackwell/GH200)
    std::optional<DottedVersion> max_cuda; ///< last CUDA that targets it (Volta: 12.9)
    std::optional<int> first_branch;       ///< first driver branch that runs it (Hopper: 520)
    std::optional<int> last_branch;        ///< last driver branch that supports it (Volta: 580)
};

class Matrix {
public:
    /// The compiled-in data file. Parsed once; throws BugError if the embedded file is broken.
    static const Matrix& builtin();
    /// Parses a matrix YAML document (tests use small ones). Throws ProfileError on bad data.
    static Matrix parse(std::string_view yaml, const std::string& source_name);

    [[nodiscard]] const GpuModel* gpu_by_device(std::uint16_t device_id) const;
    [[nodiscard]] std::vector<std::string> gpu_models() const; ///< distinct model names, sorted
    /// Every PCI device of a model family ("A100": SXM4 40/80, PCIe 40/80).
    [[nodiscard]] std::vector<const GpuModel*> gpus_of_model(const std::string& model) const;
    [[nodiscard]] const std::vector<GpuModel>& gpus() const { return m_gpus; }
    [[nodiscard]] const CudaRelease* cuda(const DottedVersion& major_minor) const;
    [[nodiscard]] const std::vector<CudaRelease>& cuda_releases() const { return m_cuda; }
    [[nodiscard]] const DistroRepo* distro(const std::string& slug) const;
    /// By the host.os id a profile uses ("ubuntu-22.04").
    [[nodiscard]] const DistroRepo* distro_by_os(const std::string& os) const;
    [[nodiscard]] const std::vector<DistroRepo>& distros() const { return m_distros; }
    [[nodiscard]] const Architecture* architecture(const std::string& name) const;
    [[nodiscard]] const std::vector<Architecture>& architectures() const { return m_archs; }
    /// cuDNN 8 builds (for "8.x" profiles); cuDNN 9 resolves from the repo index by CUDA major.
    [[nodiscard]] const std::vector<CudnnBuild>& cudnn8_builds() const { return m_cudnn8; }
    /// Newest cuDNN 8 build whose `+cudaX.Y` suits `cuda` (same major, X.Y ≤ cuda), if any.
    [[nodiscard]] std::optional<std::pair<std::string, DottedVersion>>
    cudnn8_for(const DottedVersion& cudnn_prefix, const DottedVersion& cuda) const;
    /// True when some cuDNN 9 release builds for `cuda` (its major, at or after the oldest
    /// release of that major the build serves).
    [[nodiscard]] bool cudnn9_supports(const DottedVersion& cuda) const;
    /// Whether cuDNN `prefix` ("9", "9.17") builds for `cuda`, with the reason when not.
    [[nodiscard]] Cudnn9Fit cudnn9_for(const DottedVersion& prefix,
                                       const DottedVersion& cuda) const;
    [[nodiscard]] const std::vector<Cudnn9Range>& cudnn9_ranges() const { return m_cudnn9; }
    /// Why cuDNN `prefix` ("9": the newest build for `cuda`; "9.17") does not support a GPU of
    /// compute capability `cc`, naming the last release that does; empty when it does or the
    /// matrix cannot tell.
    [[nodiscard]] std::string cudnn9_drops_cc(const DottedVersion& prefix,
                                              const DottedVersion& cuda,
                                              const DottedVersion& cc) const;
    /// The TensorRT line of a major (10, 8), or nullptr.
    [[nodiscard]] const TensorrtLine* tensorrt(int major) const;
    [[nodiscard]] const std::vector<TensorrtLine>& tensorrt_lines() const { return m_tensorrt; }
    /// The device plugin image without its tag ("nvcr.io/nvidia/k8s-device-plugin"); empty
    /// when the data file has no `kubernetes` table.
    [[nodiscard]] const std::string& device_plugin_image() const { return m_device_plugin_image; }
    /// Oldest NVIDIA container toolkit the device plugin works with ("1.7.0").
    [[nodiscard]] const std::string& device_plugin_min_toolkit() const {
        return m_device_plugin_min_toolkit;
    }
    /// Newest first.
    [[nodiscard]] const std::vector<DevicePluginRelease>& device_plugin_releases() const {
        return m_device_plugin;
    }
    /// The newest release validated with driver `branch`; without one (or without a branch) the
    /// newest release, not validated.
    [[nodiscard]] DevicePluginPick device_plugin_for(std::optional<int> branch) const;
    /// Package names of a package family ("debian", "rhel"); nullptr when the data file has
    /// none for it.
    [[nodiscard]] const PackageNames* package_names(const std::string& family) const;
    /// Container toolkit repo key fingerprint.
    [[nodiscard]] const std::string& container_key_fingerprint() const { return m_ctk_key; }
    /// The key a publisher signs a repository with when `url` is NVIDIA's own
    /// (https://developer.download.nvidia.com/compute/cuda/repos/..., with `slug` the host's
    /// distro, or https://nvidia.github.io/libnvidia-container/...) or Docker's
    /// (https://download.docker.com/linux/..., the key for `slug`'s distro): who, fingerprint
    /// and where it comes from. nullopt for any other URL (a mirror pins its own key) or a
    /// distro the matrix has no key for.
    struct PublisherKey {
        std::string publisher; ///< "NVIDIA", "Docker"
        std::string fingerprint;
        std::string what; ///< "3bf863cc.pub (ubuntu2204)", "the container toolkit's gpgkey"
    };
    [[nodiscard]] std::optional<PublisherKey> publisher_repo_key(std::string_view url,
                                                                 const std::string& slug) const;
    /// Every fingerprint NVIDIA signs its CUDA repositories with (any distro) that the matrix
    /// knows.
    [[nodiscard]] std::vector<std::string> cuda_repo_fingerprints() const;
    /// NVIDIA's CUDA repository keys the matrix knows by file name only ("CDF6BA43.pub
    /// (rhel10)"): a pinned fingerprint outside cuda_repo_fingerprints() may be one of them.
    [[nodiscard]] std::vector<std::string> cuda_repo_unknown_keys() const;
    /// True when `url` points at NVIDIA's CUDA network repositories.
    [[nodiscard]] static bool is_nvidia_cuda_repo(std::string_view url);
    /// True when `url` points at NVIDIA's container toolkit repository.
    [[nodiscard]] static bool is_nvidia_container_repo(std::string_view url);
    /// True when `url` points at Docker's own package repositories (download.docker.com/linux/).
    [[nodiscard]] static bool is_docker_repo(std::string_view url);

    /// Minor version compatibility floor of a CUDA major, if NVIDIA defines one.
    [[nodiscard]] const MinorVersionCompat* minor_version_compat(int cuda_major) const;
    /// Can driver branch `branch` (or the exact driver `exact`, when given) run CUDA `cuda`:
    /// with its own toolkit driver, under minor version compatibility (with a note on what
    /// does not work), or not at all (with the fixes, forward compatibility among them when
    /// `datacenter_gpus`).
    [[nodiscard]] DriverCudaFit driver_runs_cuda(int branch,
                                                 const std::optional<DottedVersion>& exact,
                                                 const CudaRelease& cuda,
                                                 bool datacenter_gpus) const;
    /// The forward compatibility package for a CUDA release: "cuda-compat-13-0".
    [[nodiscard]] std::string forward_compat_package(const DottedVersion& cuda) const;
    [[nodiscard]] const DriverBranchInfo* driver_branch(int branch) const;
    /// "R535: Long Term Support Branch, end of life June 2026 (past)" for a plan note; empty
    /// when the matrix knows nothing about the branch. `today` is "YYYY-MM".
    [[nodiscard]] std::string branch_lifecycle(int branch, const std::string& today) const;
    /// First branch with the open GPU kernel modules (515).
    [[nodiscard]] int open_modules_since() const { return m_open_modules_since; }
    /// First CUDA that builds native code for this GPU (its architecture's, or its compute
    /// capability's when later: A10 needs 11.1).
    [[nodiscard]] DottedVersion min_cuda_for(const GpuModel& gpu) const;
    /// The MIG profiles of a board; empty when the matrix knows none (no MIG, or unknown).
    [[nodiscard]] const std::vector<MigProfile>& mig_profiles(std::uint16_t device_id) const;
    /// Every MIG profile name of any board, sorted, without repeats.
    [[nodiscard]] std::vector<std::string> mig_profile_names() const;

private:
    std::vector<GpuModel> m_gpus;
    std::vector<CudaRelease> m_cuda;
    std::vector<DistroRepo> m_distros;
    std::vector<Architecture> m_archs;
    std::vector<CudnnBuild> m_cudnn8;
    std::vector<Cudnn9Range> m_cudnn9;
    std::vector<MinorVersionCompat> m_mvc;
    std::string m_forward_compat_package;
    std::vector<DriverBranchInfo> m_branches;
    int m_open_modules_since = 0;
    std::vector<ComputeCapability> m_ccs;
    std::string m_ctk_key;
    std::vector<TensorrtLine> m_tensorrt;
    std::map<std::string, PackageNames> m_names;
    std::string m_device_plugin_image;
    std::string m_device_plugin_min_toolkit;
    std::vector<DevicePluginRelease> m_device_plugin;
    std::map<std::uint16_t, std::vector<MigProfile>> m_mig;
};

} // namespace gpuprov
