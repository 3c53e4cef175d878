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

} // namespace

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
    const std::vector<std::string> argv =
        rpm ? std::vector<std::string>{"rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", "libnccl"}
            : std::vector<std::string>{"dpkg-query", "-W", "-f=${Version}", "libnccl2"};
    auto pkg = make_outcome("nccl.package", "nccl", display_argv(argv));
    pkg.fix = fix;
    // The build must match the toolkit's CUDA major: a +cuda11.8 NCCL on CUDA 12 fails to load.
    std::string needle = "+cuda";
    if (in.profile.cuda) {
        const auto cuda = DottedVersion::parse(in.profile.cuda->version);
        needle += std::to_string(cuda ? cuda->major() : 0) + ".";
    }
    pkg.expected = (rpm ? "libnccl " : "libnccl2 ") + std::string("built for ") + needle + "x";
    const auto r = probe(sys, argv);
    const auto version = std::string(trim(r.out));
    pkg.found = r.ok() && !version.empty() ? version : "not installed";
    pkg.excerpt = head_lines(output_of(r), 2);
    settle(pkg, r.ok() && version.find(needle) != std::string::npos);
    out.push_back(pkg);
    return out;
}

} // namespace gpuprov
