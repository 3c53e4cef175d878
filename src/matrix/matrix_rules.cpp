// NVIDIA's compatibility rules over the matrix data: which driver runs which CUDA (toolkit
// driver, minor version compatibility, forward compatibility), which cuDNN 9 minor builds for
// which CUDA, driver branch lifecycle, CUDA per GPU. Every value comes from
// src/data/nvidia-matrix.yaml, where its NVIDIA source is quoted.
#include <algorithm>
#include <array>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::string month_name(const std::string& year_month) {
    static const std::array<const char*, 12> names = {
        "January", "February", "March",     "April",   "May",      "June",
        "July",    "August",   "September", "October", "November", "December"};
    const auto month = parse_int(year_month.substr(5));
    if (!month || *month < 1 || *month > 12) {
        return year_month;
    }
    return std::string(names[static_cast<std::size_t>(*month - 1)]) + " " + year_month.substr(0, 4);
}

/// True when the cuDNN 9 range covers the version prefix ("9" covers every range).
bool covers(const Cudnn9Range& r, const DottedVersion& prefix) {
    if (prefix.parts.size() < 2) {
        return prefix.major() == 9;
    }
    const DottedVersion minor{{prefix.major(), prefix.minor()}};
    return r.first <= minor && minor <= r.last;
}

bool serves_from(const std::map<int, DottedVersion>& majors, const DottedVersion& cuda) {
    const auto it = majors.find(cuda.major());
    return it != majors.end() && it->second <= cuda;
}

bool serves(const Cudnn9Range& r, const DottedVersion& cuda) {
    return serves_from(r.cuda, cuda);
}

std::string range_name(const Cudnn9Range& r) {
    return r.first == r.last ? r.first.str() : r.first.str() + "-" + r.last.str();
}

std::string served(const Cudnn9Range& r) {
    std::vector<std::string> parts;
    for (const auto& [major, from] : r.cuda) {
        parts.push_back(from.str() + "+");
    }
    return parts.empty() ? "no CUDA release" : "CUDA " + join(parts, ", ");
}

} // namespace

std::string DriverBranchInfo::type_name() const {
    if (type == "ltsb") {
        return "Long Term Support Branch";
    }
    if (type == "production") {
        return "Production Branch";
    }
    if (type == "new-feature") {
        return "New Feature Branch";
    }
    return {};
}

const MinorVersionCompat* Matrix::minor_version_compat(int cuda_major) const {
    const auto it = std::find_if(m_mvc.begin(), m_mvc.end(), [&](const MinorVersionCompat& m) {
        return m.cuda_major == cuda_major;
    });
    return it == m_mvc.end() ? nullptr : &*it;
}

std::string Matrix::forward_compat_package(const DottedVersion& cuda) const {
    auto out = m_forward_compat_package;
    const auto replace = [&](const std::string& key, int value) {
        const auto at = out.find(key);
        if (at != std::string::npos) {
            out.replace(at, key.size(), std::to_string(value));
        }
    };
    replace("{major}", cuda.major());
    replace("{minor}", cuda.minor());
    return out;
}

DriverCudaFit Matrix::driver_runs_cuda(int branch, const std::optional<DottedVersion>& exact,
                                       const CudaRelease& cuda, bool datacenter_gpus) const {
    DriverCudaFit fit;
    const auto release = cuda.version.str();
    const auto driver =
        exact ? "driver " + exact->str() : "driver branch " + std::to_string(branch);
    const bool own = exact ? cuda.min_driver <= *exact : branch >= cuda.driver_branch;
    if (own) {
        fit.kind = DriverCudaFit::Kind::toolkit_driver;
        return fit;
    }
    const auto* mvc = minor_version_compat(cuda.version.major());
    const bool compat =
        mvc != nullptr && (exact ? mvc->min_driver <= *exact : branch >= mvc->min_driver.major());
    const auto toolkit_driver =
        cuda.min_driver.str() + " (branch " + std::to_string(cuda.driver_branch) + ")";
    if (compat) {
        fit.kind = DriverCudaFit::Kind::minor_compat;
        fit.note = "minor version compatibility: CUDA " + release + " applications run on " +
                   driver + ", as every CUDA " + std::to_string(mvc->cuda_major) +
                   ".x release does on " + mvc->min_driver.str() + " or newer" +
                   (!exact && branch == mvc->min_driver.major()
                        ? " (a " + std::to_string(branch) + " driver of at least " +
                              mvc->min_driver.str() + ")"
                        : std::string()) +
                   ", with a limited feature set: PTX JIT of code built by CUDA " + release +
                   " and features that need a newer driver fail there; they need CUDA " + release +
                   "'s toolkit driver " + toolkit_driver + " or newer";
        return fit;
    }
    fit.kind = DriverCudaFit::Kind::too_old;
    fit.note = driver + " cannot run CUDA " + release + ": its toolkit driver is " + toolkit_driver;
    if (mvc != nullptr) {
        fit.note += ", and minor version compatibility for CUDA " +
                    std::to_string(mvc->cuda_major) + ".x starts at " + mvc->min_driver.str() +
                    " (branch " + std::to_string(mvc->min_driver.major()) + ")";
    }
    if (datacenter_gpus) {
        fit.note += ". On data-center GPUs, NVIDIA's forward compatibility package " +
                    forward_compat_package(cuda.version) + " also runs it on an older branch " +
                    "(gpuprov does not install it)";
    }
    return fit;
}

Cudnn9Fit Matrix::cudnn9_for(const DottedVersion& prefix, const DottedVersion& cuda) const {
    Cudnn9Fit fit;
    std::vector<const Cudnn9Range*> rows;
    for (const auto& r : m_cudnn9) {
        if (covers(r, prefix)) {
            rows.push_back(&r);
        }
    }
    const auto wanted = "cuDNN " + prefix.str();
    if (rows.empty()) {
        fit.kind = Cudnn9Fit::Kind::unconfirmed;
        fit.message = wanted +
                      " is newer than gpuprov's version matrix; the repository index "
                      "decides whether it has a build for CUDA " +
                      cuda.str();
        return fit;
    }
    const Cudnn9Range* newest = nullptr;
    for (const auto* r : rows) {
        if (serves(*r, cuda)) {
            newest = r;
        }
    }
    if (newest != nullptr) {
        fit.kind = Cudnn9Fit::Kind::supported;
        // Later minors that still build for this CUDA major but no longer serve this release
        // (cuDNN 9.5+ needs CUDA 11.8): the package for the major would pull one of them in.
        const bool later_drops = std::any_of(m_cudnn9.begin(), m_cudnn9.end(), [&](const auto& r) {
            return newest->last < r.first && r.cuda.count(cuda.major()) != 0 && !serves(r, cuda);
        });
        if (later_drops) {
            fit.newest_minor = newest->last;
        }
        return fit;
    }
    if (std::any_of(rows.begin(), rows.end(),
                    [&](const auto* r) { return serves_from(r->maybe, cuda); })) {
        fit.kind = Cudnn9Fit::Kind::unconfirmed;
        fit.message = "whether " + wanted + " builds for CUDA " + cuda.str() +
                      " is not confirmed in gpuprov's version matrix; the repository index "
                      "decides";
        return fit;
    }
    fit.kind = Cudnn9Fit::Kind::unsupported;
    std::vector<std::string> what;
    for (const auto* r : rows) {
        what.push_back(range_name(*r) + " builds for " + served(*r));
    }
    fit.message =
        wanted + " has no build for CUDA " + cuda.str() + " (cuDNN " + join(what, "; ") + ")";
    std::vector<std::string> others;
    for (const auto& r : m_cudnn9) {
        if (serves(r, cuda)) {
            others.push_back(range_name(r));
        }
    }
    if (!others.empty() && prefix.parts.size() >= 2) {
        fit.message +=
            ". cuDNN " + join(others, ", ") + " serve" +
            (others.size() == 1 && others.front().find('-') == std::string::npos ? "s" : "") +
            " CUDA " + cuda.str() + ": set cudnn.version to \"9\" or one of them";
    } else {
        fit.message += ". Use cudnn \"8.x\" or a cuda.version cuDNN 9 builds for";
    }
    return fit;
}

std::string Matrix::cudnn9_drops_cc(const DottedVersion& prefix, const DottedVersion& cuda,
                                    const DottedVersion& cc) const {
    // "9" installs the newest build of the CUDA major's package: the newest range serving this
    // CUDA release. "9.x" installs that minor's range.
    const bool latest = prefix.parts.size() < 2;
    const Cudnn9Range* used = nullptr;
    for (const auto& r : m_cudnn9) {
        if (covers(r, prefix) && (!latest || serves(r, cuda))) {
            used = &r;
        }
    }
    if (used == nullptr || !used->min_cc || !(cc < *used->min_cc)) {
        return {};
    }
    const Cudnn9Range* last_ok = nullptr;
    std::vector<std::string> unknown;
    for (const auto& r : m_cudnn9) {
        if (r.min_cc && !(cc < *r.min_cc)) {
            last_ok = &r;
        } else if (!r.min_cc) {
            unknown.push_back(range_name(r));
        }
    }
    std::string msg =
        (latest
             ? "cuDNN 9 (the newest build for CUDA " + cuda.str() + ", " + range_name(*used) + ")"
             : "cuDNN " + prefix.str()) +
        " does not support compute capability " + cc.str() +
        ": NVIDIA's cuDNN support matrix for " + used->first.str() +
        " and later lists compute capability " + used->min_cc->str() + " and newer only";
    if (last_ok == nullptr) {
        return msg;
    }
    msg += ". The last cuDNN release NVIDIA lists for compute capability " + cc.str() + " is " +
           last_ok->last.str() +
           (unknown.empty() ? std::string()
                            : " (" + join(unknown, ", ") + " not confirmed in gpuprov's matrix)") +
           ": set cudnn.version to \"" + last_ok->last.str() + "\"";
    if (!serves(*last_ok, cuda)) {
        msg += " with a CUDA release it builds for (" + served(*last_ok) + ")";
    }
    return msg;
}

const DriverBranchInfo* Matrix::driver_branch(int branch) const {
    const auto it = std::find_if(m_branches.begin(), m_branches.end(),
                                 [&](const DriverBranchInfo& b) { return b.branch == branch; });
    return it == m_branches.end() ? nullptr : &*it;
}

std::string Matrix::branch_lifecycle(int branch, const std::string& today) const {
    const auto* info = driver_branch(branch);
    if (info == nullptr) {
        return {};
    }
    std::string out = "R" + std::to_string(branch) + ":";
    if (!info->type.empty()) {
        out += " " + info->type_name() + ",";
    }
    if (info->eol == "ended") {
        return out + " past its end of life (NVIDIA no longer lists a date); it gets no more "
                     "fixes, choose a supported branch";
    }
    if (info->eol == "none") {
        return out + " no end-of-life date: NVIDIA fixes a new feature branch only until the "
                     "next branch ships; for fixes over years choose a production or long term "
                     "support branch";
    }
    const bool past = !today.empty() && info->eol < today;
    out += " end of life " + month_name(info->eol);
    if (past) {
        out += ", which has passed: it gets no more fixes, choose a supported branch";
    }
    return out;
}

bool Matrix::is_nvidia_cuda_repo(std::string_view url) {
    return starts_with(url, "https://developer.download.nvidia.com/compute/cuda/repos/");
}

bool Matrix::is_nvidia_container_repo(std::string_view url) {
    return starts_with(url, "https://nvidia.github.io/libnvidia-container/");
}

bool Matrix::is_docker_repo(std::string_view url) {
    return starts_with(url, kDockerRepoRoot);
}

std::optional<Matrix::PublisherKey> Matrix::publisher_repo_key(std::string_view url,
                                                               const std::string& slug) const {
    if (is_nvidia_container_repo(url)) {
        return PublisherKey{"NVIDIA", m_ctk_key, "the container toolkit's gpgkey"};
    }
    const bool cuda = is_nvidia_cuda_repo(url);
    if (!cuda && !is_docker_repo(url)) {
        return std::nullopt;
    }
    const auto* d = distro(slug);
    if (d == nullptr) {
        return std::nullopt;
    }
    if (cuda) {
        if (d->key_fingerprint.empty()) {
            return std::nullopt; // known by file name only: the profile pins it
        }
        return PublisherKey{"NVIDIA", d->key_fingerprint, d->key_file + " (" + d->slug + ")"};
    }
    if (!d->docker) {
        return std::nullopt;
    }
    return PublisherKey{"Docker", d->docker->key_fingerprint,
                        "Docker's key for " + d->slug + ", " + d->docker->key_url};
}

std::vector<std::string> Matrix::cuda_repo_fingerprints() const {
    std::vector<std::string> out;
    for (const auto& d : m_distros) {
        if (!d.key_fingerprint.empty() &&
            std::find(out.begin(), out.end(), d.key_fingerprint) == out.end()) {
            out.push_back(d.key_fingerprint);
        }
    }
    return out;
}

std::vector<std::string> Matrix::cuda_repo_unknown_keys() const {
    std::vector<std::string> out;
    for (const auto& d : m_distros) {
        if (d.key_fingerprint.empty()) {
            out.push_back(d.key_file + " (" + d.slug + ")");
        }
    }
    return out;
}

DottedVersion Matrix::min_cuda_for(const GpuModel& gpu) const {
    DottedVersion need;
    if (const auto* arch = architecture(gpu.architecture)) {
        need = arch->min_cuda;
    }
    for (const auto& cc : m_ccs) {
        if (cc.cc == gpu.compute_capability && need < cc.min_cuda) {
            need = cc.min_cuda;
        }
    }
    return need;
}

DevicePluginPick Matrix::device_plugin_for(std::optional<int> branch) const {
    if (m_device_plugin.empty()) {
        return {};
    }
    if (branch) {
        for (const auto& rel : m_device_plugin) { // newest first
            const auto& b = rel.driver_branches;
            if (std::find(b.begin(), b.end(), *branch) != b.end()) {
                return {&rel, true};
            }
        }
    }
    return {&m_device_plugin.front(), false};
}

} // namespace gpuprov
