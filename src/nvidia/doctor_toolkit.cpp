#include "doctor_parts.hpp"

#include <algorithm>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

std::optional<DottedVersion> major_minor(const std::string& version) {
    const auto v = DottedVersion::parse(version);
    if (!v) {
        return std::nullopt;
    }
    return DottedVersion{{v->major(), v->minor()}};
}

// The driver's own "CUDA Version" (the newest CUDA it runs) from the default table.
void toolkit_vs_driver(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (ctx.facts.cuda.empty() || !ctx.smi.ok()) {
        return;
    }
    const std::vector<std::string> argv = {"nvidia-smi"};
    const auto r = probe(ctx.sys, argv);
    const auto banner = r.ok() ? parse_smi_banner(r.out) : std::nullopt;
    const auto supported = banner ? major_minor(banner->cuda_version) : std::nullopt;
    if (!supported) {
        return;
    }
    for (const auto& tk : ctx.facts.cuda) {
        const auto have = major_minor(tk.version);
        if (!have || *have <= *supported) {
            continue;
        }
        // Within one major, minor-version compatibility runs most code on the older driver;
        // across majors nothing runs.
        const bool same_major = have->major() == supported->major();
        Finding f{.id = "cuda-newer-than-driver", .severity = same_major ? "warning" : "error"};
        f.summary = "CUDA " + have->str() + " at " + tk.path + " is newer than driver " +
                    banner->driver_version + " supports (CUDA " + supported->str() + ")";
        f.evidence.push_back({display_argv(argv), head_lines(r.out, 2)});
        f.evidence.push_back({tk.path + "/version.json", "cuda " + tk.version});
        std::string branch;
        if (ctx.options.matrix != nullptr) {
            if (const auto* rel = ctx.options.matrix->cuda(*have)) {
                branch = " (>= " + rel->min_driver.str() + ", branch " +
                         std::to_string(rel->driver_branch) + ")";
            }
        }
        f.fix = "install a newer driver" + branch + " with " + apply_hint(ctx.options, "driver") +
                ", or use a toolkit no newer than CUDA " + supported->str();
        out.push_back(std::move(f));
    }
}

bool path_has_cuda(const std::optional<std::string>& path) {
    if (!path) {
        return false;
    }
    const auto dirs = split(*path, ':');
    return std::any_of(dirs.begin(), dirs.end(), [](const std::string& d) {
        return starts_with(d, "/usr/local/cuda") && d.size() >= 4 &&
               d.compare(d.size() - 4, 4, "/bin") == 0;
    });
}

void nvcc_on_path(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (ctx.facts.cuda.empty()) {
        return;
    }
    const auto path = ctx.sys.env("PATH");
    if (path_has_cuda(path)) {
        return;
    }
    for (const auto& name : ctx.sys.list_dir("/etc/profile.d")) {
        const auto text = ctx.sys.read_file("/etc/profile.d/" + name);
        if (text && text->find("/usr/local/cuda") != std::string::npos) {
            return; // a new login shell gets it
        }
    }
    Finding f{.id = "nvcc-not-on-path", .severity = "warning"};
    f.summary = "a CUDA toolkit is installed but nvcc is not on PATH, and no /etc/profile.d "
                "script adds it";
    f.evidence.push_back({"PATH", path.value_or("(unset)")});
    f.evidence.push_back({"/etc/profile.d/", "no file mentions /usr/local/cuda"});
    f.fix = apply_hint(ctx.options, "cuda-toolkit") +
            " writes /etc/profile.d/cuda.sh; or add /usr/local/cuda/bin to PATH";
    out.push_back(std::move(f));
}

void default_link(const DoctorContext& ctx, std::vector<Finding>& out) {
    const auto* profile = ctx.options.profile;
    if (profile == nullptr || !profile->cuda || ctx.facts.cuda.size() < 2 ||
        !ctx.facts.cuda_default_link) {
        return;
    }
    const auto wanted = "/usr/local/cuda-" + profile->cuda->version;
    auto target = *ctx.facts.cuda_default_link;
    if (!target.empty() && target.front() != '/') {
        target = "/usr/local/" + target; // a relative link is relative to /usr/local
    }
    while (target.size() > 1 && target.back() == '/') {
        target.pop_back();
    }
    if (target == wanted) {
        return;
    }
    std::vector<std::string> installed;
    for (const auto& tk : ctx.facts.cuda) {
        installed.push_back(tk.path + " (" + tk.version + ")");
    }
    Finding f{.id = "cuda-link-mismatch", .severity = "warning"};
    f.summary = "/usr/local/cuda points at " + target + ", not the profile's " + wanted;
    f.evidence.push_back({"readlink -f /usr/local/cuda", target});
    f.evidence.push_back({"/usr/local/cuda-*", join(installed, "\n")});
    f.fix =
        "update-alternatives --set cuda " + wanted + " (or ln -sfn " + wanted + " /usr/local/cuda)";
    out.push_back(std::move(f));
}

} // namespace

void diagnose_toolkit(const DoctorContext& ctx, std::vector<Finding>& out) {
    toolkit_vs_driver(ctx, out);
    nvcc_on_path(ctx, out);
    default_link(ctx, out);
}

} // namespace gpuprov::nvidia_detail
