#pragma once
// NVIDIA version data: CUDA → minimum driver, what each distro repo carries, cuDNN builds per
// CUDA, GPU PCI ids → model, repo key fingerprints. Loaded from the one data file
// src/data/nvidia-matrix.yaml (compiled in); every table there cites its NVIDIA source.
#include <cstdint>
#include <gpuprov/version.hpp>
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
    std::string smi_name;           ///< what nvidia-smi prints: "NVIDIA A100-SXM4-80GB"
    std::string architecture;       ///< "ampere"
    std::string compute_capability; ///< "8.0"
    int memory_gib = 0;
    bool nvswitch = false; ///< HGX/DGX SXM part: NVSwitch systems need fabric manager
};

struct CudaRelease {
    DottedVersion version;    ///< "12.4"
    DottedVersion min_driver; ///< toolkit driver of the GA release, "550.54.14"
    int driver_branch = 0;    ///< lowest branch that carries it: 550
    /// min_driver as NVIDIA writes it ("580.65.06"); DottedVersion::str() drops the zero.
    std::string min_driver_text;
    bool confirmed = true; ///< false: min_driver is only "<branch>.0" (13.3, 13.4)
};

struct DistroRepo {
    std::string slug;       ///< "debian12"
    std::string os;         ///< the host.os id profiles use: "debian-12", "ubuntu-22.04"
    std::string family;     ///< "debian" | "rhel"
    DottedVersion cuda_min; ///< oldest cuda-toolkit-X-Y in the network repo
    DottedVersion cuda_max; ///< newest known
    std::string key_fingerprint;
    std::string key_file;  ///< "3bf863cc.pub"
    bool confirmed = true; ///< false: cuda_min/cuda_max are inferred, not seen
    /// True when the repo carries cuda-toolkit-X-Y for this major.minor.
    [[nodiscard]] bool carries(const DottedVersion& cuda) const {
        return cuda_min <= cuda && cuda <= cuda_max;
    }
};

struct CudnnBuild {
    std::string cudnn;               ///< full version "8.9.7.29"
    std::vector<DottedVersion> cuda; ///< the +cudaX.Y builds that exist
};

struct Architecture {
    std::string name;                      ///< "hopper"
    DottedVersion min_cuda;                ///< first CUDA that compiles native code for it
    bool open_module_ok = true;            ///< open kernel modules support it (Turing+)
    bool proprietary_ok = true;            ///< proprietary modules support it (not Blackwell/GH200)
    std::optional<DottedVersion> max_cuda; ///< last CUDA that targets it (Volta: 12.9)
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
    /// Supported cuDNN majors per CUDA major ("9" needs CUDA ≥ 11.8 for cuda-11 builds, ...).
    [[nodiscard]] bool cudnn9_supports(const DottedVersion& cuda) const;
    /// Oldest CUDA cuDNN 9 serves (11.8).
    [[nodiscard]] const DottedVersion& cudnn9_min_cuda() const { return m_cudnn9_min_cuda; }
    /// Container toolkit repo key fingerprint.
    [[nodiscard]] const std::string& container_key_fingerprint() const { return m_ctk_key; }

private:
    std::vector<GpuModel> m_gpus;
    std::vector<CudaRelease> m_cuda;
    std::vector<DistroRepo> m_distros;
    std::vector<Architecture> m_archs;
    std::vector<CudnnBuild> m_cudnn8;
    DottedVersion m_cudnn9_min_cuda;
    std::vector<int> m_cudnn9_majors;
    std::string m_ctk_key;
};

} // namespace gpuprov
