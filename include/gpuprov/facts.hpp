#pragma once
// What the host is. Plain data, filled by detect_facts() from real file formats through System.
#include <cstdint>
#include <gpuprov/system.hpp>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct OsInfo {
    std::string id; ///< os-release ID: ubuntu, debian, rhel, rocky, almalinux, amzn
    std::vector<std::string> id_like;
    std::string version_id; ///< "22.04", "12", "9.6"
    std::string codename;   ///< "jammy", "bookworm"; empty when the file has none
    std::string pretty_name;
    std::string family;     ///< "debian" (apt) or "rhel" (dnf); empty when unknown
    std::string repo_slug;  ///< NVIDIA repo dir: ubuntu2204, debian12, rhel9; empty if none
    std::string profile_os; ///< the profile's spelling: ubuntu-22.04, debian-12, rhel-9
    /// When the release's maintainer stopped (or stops) updating it, "YYYY-MM-DD"; set for the
    /// CentOS releases gpuprov maps onto NVIDIA's rhelN repository, empty otherwise.
    std::string end_of_life;
};

/// Every OS family and release gpuprov provisions, for messages that refuse the others.
[[nodiscard]] std::string supported_os_list();
/// A warning for a release past `end_of_life` on `today` ("YYYY-MM-DD"); empty otherwise.
[[nodiscard]] std::string end_of_life_warning(const OsInfo& os, std::string_view today);

struct PciGpu {
    std::string address;         ///< "0000:17:00.0"
    std::uint16_t vendor_id = 0; ///< 0x10de
    std::uint16_t device_id = 0;
    std::uint32_t class_code = 0; ///< 0x030200
    std::string driver;           ///< bound kernel driver ("nvidia", "nouveau"), empty if none
    // From the version matrix when the device id is known:
    std::string model;              ///< "A100", "H100", "T4"; empty when unknown
    std::string also_model;         ///< a second family on the same PCI id ("A16" beside "A2")
    std::string name;               ///< "A100 SXM4 80GB"
    std::string architecture;       ///< "ampere", "hopper"
    std::string compute_capability; ///< "8.0"
    int memory_gib = 0;
    bool nvswitch_system = false; ///< SXM part that is deployed with NVSwitch (fabric manager)
};

/// One port of an RDMA device, from /sys/class/infiniband/<dev>/ports/<n>/ (values as the
/// kernel prints them: state "4: ACTIVE", rate "200 Gb/sec (4X HDR)", link_layer "InfiniBand").
struct IbPort {
    int number = 0;
    std::string state;      ///< "ACTIVE", "DOWN", "INIT", "ARMED"; the number dropped
    std::string phys_state; ///< "LinkUp", "Polling", "Disabled"
    std::string rate;       ///< the kernel's text, "200 Gb/sec (4X HDR)"
    double rate_gbps = 0;   ///< 200; 0 when the text has no number
    std::string link_layer; ///< "InfiniBand" or "Ethernet" (RoCE)
};

/// An RDMA device (/sys/class/infiniband/<name>): mlx5_0, with the PCI function behind it.
struct IbDevice {
    std::string name;
    std::string pci_address; ///< "0000:0c:00.0"; empty when the device link is missing
    std::vector<IbPort> ports;
    /// An NVLink 5 NVSwitch's management function, not a network port: its PCI VPD
    /// (<dev>/device/vpd) holds "SW_MNG" (NVIDIA/gpu-driver-container `_assert_nvlink5_system`).
    bool nvswitch = false;
};

/// "4: ACTIVE" → "ACTIVE" (the state and phys_state files); a value without the number as is.
[[nodiscard]] std::string parse_ib_state(std::string_view text);
/// Whether a PCI VPD image (sysfs `vpd`, binary) marks an NVLink 5 NVSwitch management function:
/// "SW_MNG" anywhere in it, as NVIDIA's driver container greps it.
[[nodiscard]] bool vpd_marks_nvswitch(std::string_view vpd);
/// "200 Gb/sec (4X HDR)" → 200, "2.5 Gb/sec (1X SDR)" → 2.5; 0 when the text is not a rate.
[[nodiscard]] double parse_ib_rate_gbps(std::string_view text);

struct LoadedDriver {
    std::string version;      ///< "580.126.09"
    bool open_module = false; ///< "Open Kernel Module" in /proc/driver/nvidia/version
};

/// A driver installed by NVIDIA's .run installer: files no package owns. Installing packages
/// over it is the conflict NVIDIA's driver installation guide warns about.
struct RunfileDriver {
    std::string version;               ///< "550.90.07" when a library or the log names it
    std::vector<std::string> evidence; ///< "/usr/bin/nvidia-uninstall exists", ...
};

struct InstalledCuda {
    std::string path; ///< "/usr/local/cuda-12.4"
    /// "12.4.1" (version.json), "11.0.228" (version.txt) or "13.0" (include/cuda.h)
    std::string version;
};

struct InstalledCudnn {
    std::string header; ///< the header that was read
    int major = 0, minor = 0, patch = 0;
};

/// A kernel installed on the host (one /lib/modules/<release> the next boot may load).
struct InstalledKernel {
    std::string release; ///< its `uname -r`
    /// DKMS can build for it: /lib/modules/<release>/build resolves to a directory and, on the
    /// rhel family, kernel-devel of exactly that release is installed (the link can dangle).
    bool build_tree = false;
};

struct HostFacts {
    OsInfo os;
    std::string arch;         ///< uname -m: x86_64, aarch64
    std::string repo_arch;    ///< NVIDIA repo arch dir: x86_64, sbsa
    std::string pkg_arch;     ///< dpkg/rpm arch: amd64, arm64 (x86_64/aarch64 on rpm)
    std::string kernel;       ///< running kernel release (/proc/sys/kernel/osrelease)
    std::vector<PciGpu> gpus; ///< NVIDIA display/3D controllers (class 0x03xx) only
    int nvswitch_count = 0;   ///< NVIDIA PCI bridges (NVSwitch), class 0x0680
    /// NVLink 5 NVSwitches (HGX B200/B300): not on the PCI bus as NVIDIA functions but behind
    /// ConnectX management functions that enumerate as InfiniBand devices with "SW_MNG" in their
    /// VPD (IbDevice::nvswitch). These hosts need NVLSM beside fabric manager. Reading VPD needs
    /// root: unprivileged, this is 0.
    int nvlink5_switch_count = 0;
    /// PCI functions of class 0x0207 (InfiniBand controller), any vendor, whether or not an
    /// RDMA driver is bound: a ConnectX HCA shows here before rdma-core is installed.
    std::vector<std::string> ib_hca_pci;
    std::vector<IbDevice> infiniband; ///< RDMA devices the kernel registered
    bool peermem_loaded = false;      ///< /sys/module/nvidia_peermem: GPUDirect RDMA
    bool nouveau_loaded = false;
    /// nova_core (the Rust driver for Turing and newer, CONFIG_NOVA_CORE; Ubuntu 26.04's kernel
    /// ships it) loaded, or a GPU bound to it: the NVIDIA module cannot bind those GPUs.
    bool nova_core_loaded = false;
    std::optional<bool> secure_boot; ///< nullopt: not a UEFI boot or efivars not readable
    std::optional<LoadedDriver> driver;
    bool kernel_headers = false; ///< /lib/modules/<kernel>/build exists
    /// Every installed kernel the next boot may pick (src/facts/kernels.cpp), sorted: DKMS must
    /// have built the module for each, and the competing-drivers step regenerates each image.
    std::vector<InstalledKernel> kernels;
    std::vector<InstalledCuda> cuda; ///< /usr/local/cuda-*, oldest first
    /// Where /usr/local/cuda finally points, links followed (it goes through
    /// /etc/alternatives/cuda on deb installs); nullopt when it is not a link.
    std::optional<std::string> cuda_default_link;
    std::optional<InstalledCudnn> cudnn;
    /// Installed NVIDIA-related packages → version, from the family's package database
    /// (gpuprov/package_db.hpp): dpkg's status file, or `rpm -qa` on the rhel family, where
    /// versions are rpm's "[epoch:]version-release".
    std::map<std::string, std::string> packages;
    /// Set when a runfile-installed driver is present (src/facts/runfile.cpp).
    std::optional<RunfileDriver> runfile_driver;
    // ---- rhel family only (empty/false elsewhere) ----
    /// kernel-devel / kernel-headers rpms installed for exactly the running kernel
    /// (version-release.arch == uname -r): what DKMS needs on EL besides the build link.
    bool kernel_devel = false;
    bool kernel_headers_rpm = false;
    /// dnf module name → enabled stream, from /etc/dnf/modules.d/*.module (state=enabled).
    std::map<std::string, std::string> module_streams;
    /// EPEL configured (/etc/yum.repos.d/epel*.repo) or its release package installed: dkms
    /// comes from EPEL on RHEL 8/9.
    bool epel = false;
    /// "enforcing", "permissive" or "disabled" (running state from selinuxfs, else the
    /// configured one); empty when the host has no SELinux at all.
    std::string selinux;
    std::uint64_t memory_bytes = 0; ///< MemTotal
    std::optional<DiskSpace> root_disk;
};

/// The block device behind a path, from /proc/self/mountinfo and /sys/block (what a sysadmin
/// reads with findmnt and lsblk).
struct BlockDevice {
    std::string mount_point;        ///< the mount that holds the path: "/", "/data"
    std::string source;             ///< mountinfo's mount source: "/dev/nvme0n1p2"
    std::vector<std::string> disks; ///< whole disks under it: ["nvme0n1"] (several for md/dm)
    std::uint64_t size_bytes = 0;   ///< the whole disk's size (smallest of several); 0 unknown
    bool nvme = false;              ///< every disk is an NVMe namespace
    std::optional<bool> rotational; ///< any disk rotational (queue/rotational); nullopt unknown
};

/// One line of /proc/self/mountinfo: mount point and source.
struct MountEntry {
    std::string mount_point;
    std::string source;
    std::string fstype;
};
[[nodiscard]] std::vector<MountEntry> parse_mountinfo(std::string_view content);

/// The device holding `path`: the longest mount point that contains it, its source resolved
/// to whole disks through /sys/block (partitions, device-mapper and md via slaves/). nullopt
/// when the mount or its device cannot be found (a bind mount, tmpfs, no sysfs).
[[nodiscard]] std::optional<BlockDevice> block_device_for(const System& sys,
                                                          const std::string& path);

class Matrix;

/// Reads everything above; GPUs are named from `matrix`. Never throws for a missing or odd
/// file: that fact is left empty.
[[nodiscard]] HostFacts detect_facts(const System& sys, const Matrix& matrix);

// Parsers, each a pure function over one real file format (unit-tested on real samples).
[[nodiscard]] OsInfo parse_os_release(std::string_view content);
/// Fills family, repo_slug and profile_os from id/id_like/version_id.
void classify_os(OsInfo& os);
[[nodiscard]] std::optional<LoadedDriver> parse_proc_driver_version(std::string_view content);
/// "version" of the `cuda` entry in version.json, or the number in a CUDA ≤ 11.0 version.txt.
[[nodiscard]] std::optional<std::string> parse_cuda_version_json(std::string_view content);
[[nodiscard]] std::optional<std::string> parse_cuda_version_txt(std::string_view content);
/// "X.Y" from `#define CUDA_VERSION 13000` in include/cuda.h: the last resort for toolkits
/// assembled without version.json (pip wheels, some containers).
[[nodiscard]] std::optional<std::string> parse_cuda_h_version(std::string_view content);
[[nodiscard]] std::optional<InstalledCudnn> parse_cudnn_header(std::string_view content);
/// MemTotal in bytes.
[[nodiscard]] std::optional<std::uint64_t> parse_meminfo_total(std::string_view content);
/// Installed packages (PackageDb's one meaning: state "installed", flag "ok") from
/// /var/lib/dpkg/status → version. A second architecture of a package is keyed "name:arch".
[[nodiscard]] std::map<std::string, std::string> parse_dpkg_status(std::string_view content);
/// Whether a package belongs to the NVIDIA stack (driver, CUDA, cuDNN, NCCL, container toolkit,
/// DCGM): the filter for HostFacts::packages.
[[nodiscard]] bool is_nvidia_package(std::string_view name);
/// dnf module state files (/etc/dnf/modules.d/*.module, INI): section name → stream, for
/// sections whose state is "enabled".
[[nodiscard]] std::map<std::string, std::string> parse_dnf_module_file(std::string_view content);
/// The SELINUX= mode of /etc/selinux/config ("enforcing", "permissive", "disabled"); empty
/// when absent or another word. Facts prefer /sys/fs/selinux/enforce, the running mode.
[[nodiscard]] std::string parse_selinux_config(std::string_view config);
/// Whether a PCI driver name (the basename of a device's sysfs `driver` link) is nova_core's. Its
/// module is nova_core.ko, but the PCI driver registers under the module! macro's name,
/// "NovaCore" (drivers/gpu/nova-core/nova_core.rs: `module_pci_driver! { type:
/// driver::NovaCore, name: "NovaCore", ... }`, MODULE_NAME; code index ids 61984586022,
/// 67198913142), hence "already bound to NovaCore" (beclab/Olares PR#3963). The module's
/// spellings are accepted too.
[[nodiscard]] bool is_nova_core_driver(std::string_view driver);
/// The open-source driver that holds the GPUs now ("nouveau", "nova_core"), so the NVIDIA
/// module loads only after a reboot with the blacklist; empty when none.
[[nodiscard]] std::string competing_driver_loaded(const HostFacts& facts);
/// The same, asked again while apply runs: by the facts, or by /sys/module/<name> now (apply's
/// own steps load and unload modules after the facts were read). nouveau before nova_core.
[[nodiscard]] std::string competing_driver_holding(const HostFacts& facts, const System& sys);
/// The GPUs whose sysfs `driver` link names nova_core (is_nova_core_driver), in facts order.
[[nodiscard]] std::vector<const PciGpu*> gpus_bound_to_nova_core(const HostFacts& facts);
/// Whether a module name appears at the start of a /proc/modules line.
[[nodiscard]] bool proc_modules_has(std::string_view content, std::string_view module);
/// The SecureBoot efivar: 4 attribute bytes then the value byte.
[[nodiscard]] std::optional<bool> parse_secure_boot_efivar(std::string_view bytes);

/// The runfile driver on this host, if any: nvidia-installer/nvidia-uninstall in /usr/bin, or a
/// libnvidia-ml.so.<version> in a library directory that no installed NVIDIA package carries at
/// that version; /var/log/nvidia-installer.log adds its version as evidence. Needs `packages`.
[[nodiscard]] std::optional<RunfileDriver>
detect_runfile_driver(const System& sys, const std::map<std::string, std::string>& packages);
/// "installer version: 550.90.07" from /var/log/nvidia-installer.log.
[[nodiscard]] std::optional<std::string> parse_installer_log_version(std::string_view log);

/// JSON form of the facts (the `facts --json` document; schema in docs/facts.md).
[[nodiscard]] nlohmann::json facts_to_json(const HostFacts& facts);

} // namespace gpuprov
