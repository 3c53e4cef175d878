#include "probe.hpp"

#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

using namespace nvidia_detail;

namespace {

// /sbin is not on an unprivileged user's PATH on Debian; /sbin/ldconfig exists on every
// supported distro (a wrapper around ldconfig.real on Ubuntu).
const std::vector<std::string> kLdconfig = {"/sbin/ldconfig", "-p"};

CheckOutcome library_outcome(const System& sys, std::string id, std::string step,
                             const std::string& soname, std::string fix) {
    auto c = make_outcome(std::move(id), std::move(step), display_argv(kLdconfig));
    c.expected = soname + " in the linker cache";
    c.fix = std::move(fix);
    const auto r = probe(sys, kLdconfig);
    if (!r.ok()) {
        c.found = "ldconfig: " + failure_text(r);
        c.excerpt = head_lines(output_of(r));
        settle(c, false);
        return c;
    }
    const auto entries = parse_ldconfig(r.out);
    const auto* hit = find_library(entries, soname);
    c.found = hit != nullptr ? hit->path : "absent";
    if (hit != nullptr) {
        c.excerpt = hit->soname + " => " + hit->path;
    }
    settle(c, hit != nullptr);
    return c;
}

std::vector<std::string> cudnn_headers(const VerifyInput& in, int major) {
    std::vector<std::string> paths;
    const auto v = "cudnn_version_v" + std::to_string(major) + ".h";
    for (const char* triplet : {"x86_64-linux-gnu", "aarch64-linux-gnu"}) {
        paths.push_back(std::string("/usr/include/") + triplet + "/" + v);
    }
    paths.emplace_back("/usr/include/cudnn_version.h");
    if (in.profile.cuda) {
        paths.push_back("/usr/local/cuda-" + in.profile.cuda->version + "/include/cudnn_version.h");
    }
    paths.emplace_back("/usr/local/cuda/include/cudnn_version.h");
    return paths;
}

/// The installed version of `package` (deb and rpm spell it alike here) as an outcome; `found`
/// is the version or "not installed". The caller settles it.
CheckOutcome package_version_outcome(const VerifyInput& in, const System& sys, std::string id,
                                     std::string step, const std::string& deb,
                                     const std::string& rpm_name, std::string& version) {
    const bool rpm = in.facts.os.family == "rhel";
    const std::vector<std::string> argv =
        rpm ? std::vector<std::string>{"rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", rpm_name}
            : std::vector<std::string>{"dpkg-query", "-W", "-f=${Version}", deb};
    auto c = make_outcome(std::move(id), std::move(step), display_argv(argv));
    const auto r = probe(sys, argv);
    version = r.ok() ? std::string(trim(r.out)) : std::string();
    c.found = !version.empty() ? version : "not installed";
    c.excerpt = head_lines(output_of(r), 2);
    return c;
}

/// "cuda12." for the profile's CUDA major: what a +cudaX.Y build tag of it contains.
std::string cuda_major_tag(const VerifyInput& in) {
    std::string needle = "cuda";
    if (in.profile.cuda) {
        const auto cuda = DottedVersion::parse(in.profile.cuda->version);
        needle += std::to_string(cuda ? cuda->major() : 0) + ".";
    }
    return needle;
}

// trtexec prints "&&&& RUNNING TensorRT.trtexec [TensorRT v101303] [b9] # trtexec --version":
// NV_TENSORRT_VERSION, major*10000+minor*100+patch since TensorRT 10 (v100400 is 10.4.0) and
// major*1000+minor*100+patch before (v8602 is 8.6.2). Some releases do not know --version and
// exit non-zero after that banner ("Model missing or format not recognized"), so the banner is
// what counts, not the exit status.
std::optional<std::string> trtexec_version(std::string_view output) {
    const std::string_view marker = "[TensorRT v";
    const auto at = output.find(marker);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    const auto digits = output.substr(at + marker.size());
    const auto end = digits.find(']');
    const auto number = parse_int(digits.substr(0, end));
    if (end == std::string_view::npos || !number || *number <= 0) {
        return std::nullopt;
    }
    const long long n = *number;
    const long long base = n >= 100000 ? 10000 : 1000;
    return std::to_string(n / base) + "." + std::to_string(n % base / 100) + "." +
           std::to_string(n % 100);
}

} // namespace

std::vector<CheckOutcome> check_tensorrt(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.tensorrt) {
        return out;
    }
    const auto& wanted = in.profile.tensorrt->version;
    const auto want = DottedVersion::parse(wanted).value_or(DottedVersion{});
    const auto major = std::to_string(want.major());
    const auto fix = "install TensorRT: gpuprov apply " + in.profile.name + " --only tensorrt";
    out.push_back(library_outcome(sys, "tensorrt.library", "tensorrt", "libnvinfer.so." + major,
                                  fix + ", then run ldconfig"));

    const auto lib = "libnvinfer" + major;
    std::string version;
    auto pkg = package_version_outcome(in, sys, "tensorrt.package", "tensorrt", lib, lib, version);
    pkg.fix = fix;
    const auto needle = cuda_major_tag(in);
    pkg.expected = lib + " " + wanted + ".x built for " + needle + "x";
    const auto tag = version.rfind('-');
    settle(pkg, starts_with(version, wanted + ".") && tag != std::string::npos &&
                    version.find(needle, tag) != std::string::npos);
    out.push_back(pkg);

    // trtexec ships in libnvinfer-bin outside PATH; checked where it is installed.
    const std::string trtexec = "/usr/src/tensorrt/bin/trtexec";
    if (sys.exists(trtexec)) {
        const std::vector<std::string> targv{trtexec, "--version"};
        auto run = make_outcome("tensorrt.trtexec", "tensorrt", display_argv(targv));
        run.expected = "TensorRT " + wanted + ".x";
        run.fix = fix;
        const auto t = probe(sys, targv);
        const auto text = output_of(t);
        const auto v = trtexec_version(text);
        run.found = v ? "TensorRT " + *v : "no version banner: " + failure_text(t);
        run.excerpt = head_lines(text, 2);
        settle(run, v && starts_with(*v + ".", wanted + "."));
        out.push_back(run);
    }
    return out;
}

std::vector<CheckOutcome> check_cudnn(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.cudnn) {
        return out;
    }
    const auto& wanted = in.profile.cudnn->version;
    const auto want = DottedVersion::parse(wanted).value_or(DottedVersion{});
    const auto fix = "install cuDNN: gpuprov apply " + in.profile.name + " --only cudnn";

    auto header = make_outcome("cudnn.header", "cudnn", "cudnn_version.h");
    header.expected = "cuDNN " + wanted;
    header.found = "no cudnn_version.h found";
    header.fix = fix;
    bool passed = false;
    for (const auto& path : cudnn_headers(in, want.major())) {
        const auto text = sys.read_file(path);
        const auto parsed = text ? parse_cudnn_header(*text) : std::nullopt;
        if (!parsed) {
            continue;
        }
        header.command = path;
        header.found = std::to_string(parsed->major) + "." + std::to_string(parsed->minor) + "." +
                       std::to_string(parsed->patch);
        header.excerpt = "#define CUDNN_MAJOR " + std::to_string(parsed->major) +
                         "\n#define CUDNN_MINOR " + std::to_string(parsed->minor);
        passed = parsed->major == want.major() &&
                 (want.parts.size() < 2 || parsed->minor == want.minor());
        break;
    }
    settle(header, passed);
    out.push_back(header);

    out.push_back(library_outcome(sys, "cudnn.library", "cudnn",
                                  "libcudnn.so." + std::to_string(want.major()),
                                  fix + ", then run ldconfig"));
    return out;
}

std::vector<CheckOutcome> check_nccl(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.nccl) {
        return out;
    }
    const auto fix = "install NCCL: gpuprov apply " + in.profile.name + " --only nccl";
    out.push_back(
        library_outcome(sys, "nccl.library", "nccl", "libnccl.so.2", fix + ", then run ldconfig"));

    const bool rpm = in.facts.os.family == "rhel";
    std::string version;
    auto pkg =
        package_version_outcome(in, sys, "nccl.package", "nccl", "libnccl2", "libnccl", version);
    pkg.fix = fix;
    // The build must match the toolkit's CUDA major: a +cuda11.8 NCCL on CUDA 12 fails to load.
    const auto needle = "+" + cuda_major_tag(in);
    pkg.expected = (rpm ? "libnccl " : "libnccl2 ") + std::string("built for ") + needle + "x";
    settle(pkg, version.find(needle) != std::string::npos);
    out.push_back(pkg);
    return out;
}

} // namespace gpuprov
