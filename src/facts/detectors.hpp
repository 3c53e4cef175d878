#pragma once
// Per-fact readers used by detect_facts(). Each reads the host only through System and leaves
// its fact empty when a file is missing or odd; none runs a command, so detection stays a few
// milliseconds of file reads (it runs on every `plan`).
#include <cstdint>
#include <gpuprov/facts.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {
class Matrix;
class PackageDb;
} // namespace gpuprov

namespace gpuprov::facts_detail {

[[nodiscard]] OsInfo read_os(const System& sys);
/// Fills gpus (named from `matrix`) and nvswitch_count.
void read_pci(const System& sys, const Matrix& matrix, HostFacts& facts);
/// A module loaded: /sys/module/<name> (also for a built-in one) or a /proc/modules line.
[[nodiscard]] bool read_module_loaded(const System& sys, const std::string& module);
/// RDMA devices and their ports (/sys/class/infiniband), sorted by name and port.
[[nodiscard]] std::vector<IbDevice> read_infiniband(const System& sys);
[[nodiscard]] std::optional<bool> read_secure_boot(const System& sys);
[[nodiscard]] std::optional<LoadedDriver> read_loaded_driver(const System& sys);
[[nodiscard]] std::vector<InstalledCuda> read_cuda_installs(const System& sys);
[[nodiscard]] std::optional<std::string> read_cuda_default_link(const System& sys);
[[nodiscard]] std::optional<InstalledCudnn> read_cudnn(const System& sys);
/// Installed NVIDIA-stack packages → version from the family's package database (dpkg or rpm).
[[nodiscard]] std::map<std::string, std::string> read_nvidia_packages(const System& sys,
                                                                      const std::string& family);
[[nodiscard]] std::uint64_t read_memory(const System& sys);
/// kernel_devel, kernel_headers_rpm, module_streams, epel, selinux; nothing off the rhel family.
void read_el_facts(const System& sys, HostFacts& facts);

/// /lib/modules/<kernel>/build resolves to a directory (false for an empty kernel).
[[nodiscard]] bool has_build_link(const System& sys, const std::string& kernel);
/// An installed rpm `name` built for exactly `kernel` (uname -r is version-release.arch).
[[nodiscard]] bool rpm_for_kernel(const PackageDb& db, std::string_view name,
                                  const std::string& kernel);
/// HostFacts::kernels; after read_os and the running kernel.
[[nodiscard]] std::vector<InstalledKernel> read_installed_kernels(const System& sys,
                                                                  const HostFacts& facts);

/// `path` with every symlink in it resolved through System (the alternatives system makes
/// /usr/local/cuda a two-hop link; --root trees hold absolute links that must stay inside).
[[nodiscard]] std::string resolve_path(const System& sys, const std::string& path);
/// resolve_path() of `path` when `path` itself is a link; nullopt when it is not.
[[nodiscard]] std::optional<std::string> link_target(const System& sys, const std::string& path);
/// read_file() of resolve_path().
[[nodiscard]] std::optional<std::string> read_resolved(const System& sys, const std::string& path);

} // namespace gpuprov::facts_detail
