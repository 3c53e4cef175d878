#include "probe.hpp"

#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

using namespace nvidia_detail;

std::vector<CheckOutcome> check_cuda_toolkit(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.cuda) {
        return out;
    }
    const auto& wanted = in.profile.cuda->version;
    const auto want = DottedVersion::parse(wanted);
    const auto dir = "/usr/local/cuda-" + wanted;
    const auto fix =
        "install the toolkit: gpuprov apply " + in.profile.name + " --only cuda-toolkit";

    // The versioned path, not PATH: PATH is per login shell, and /usr/local/cuda may point at
    // another toolkit (doctor reports that).
    const std::vector<std::string> argv = {dir + "/bin/nvcc", "--version"};
    auto nvcc = make_outcome("cuda.nvcc-release", "cuda-toolkit", display_argv(argv));
    nvcc.expected = "release " + wanted;
    nvcc.fix = fix;
    const auto r = probe(sys, argv);
    const auto parsed = r.ok() ? parse_nvcc_version(r.out) : std::nullopt;
    nvcc.excerpt = head_lines(output_of(r));
    if (!r.ok()) {
        nvcc.found = failure_text(r);
    } else if (!parsed) {
        nvcc.found = "no release line in the output";
    } else {
        nvcc.found = "release " + parsed->release + ", V" + parsed->version;
        nvcc.excerpt =
            "Cuda compilation tools, release " + parsed->release + ", V" + parsed->version;
    }
    const auto release = parsed ? DottedVersion::parse(parsed->release) : std::nullopt;
    settle(nvcc, release && want && *release == *want);
    out.push_back(nvcc);

    // version.json from CUDA 11.1; version.txt before.
    auto json = make_outcome("cuda.version-json", "cuda-toolkit", dir + "/version.json");
    json.expected = wanted + ".x";
    json.fix = fix;
    std::optional<std::string> version;
    if (const auto text = sys.read_file(dir + "/version.json")) {
        version = parse_cuda_version_json(*text);
        json.found = version ? *version : "no cuda.version entry";
    } else if (const auto txt = sys.read_file(dir + "/version.txt")) {
        json.command = dir + "/version.txt";
        version = parse_cuda_version_txt(*txt);
        json.found = version ? *version : "no version in version.txt";
    } else {
        json.found = "missing";
    }
    const auto full = version ? DottedVersion::parse(*version) : std::nullopt;
    settle(json, full && want && full->has_prefix(*want));
    out.push_back(json);
    return out;
}

} // namespace gpuprov
