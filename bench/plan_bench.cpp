// Times what `gpuprov plan cv-train` does in-process: load the profile, read the host's facts
// from a real fixture root, resolve packages against a repository index of realistic size and
// check all twelve steps. Reports the median and 90th percentile over many runs.
//
//   build/bench/plan_bench [runs] [packages-in-index] [host-root]
// host-root defaults to the ubuntu-22.04 fixture; "/" measures this machine (its real dpkg
// status, typically hundreds of KiB to a few MiB).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/local_system.hpp>
#include <gpuprov/matrix.hpp>

using namespace gpuprov;

namespace {

// NVIDIA's debian12/x86_64 Packages lists thousands of records; this builds one of that order,
// with the packages cv-train needs among them, in the real deb822 shape.
std::string synthetic_packages(int records) {
    std::string out;
    const auto add = [&](const std::string& name, const std::string& version) {
        out += fmt::format("Package: {}\nArchitecture: amd64\nVersion: {}\nPriority: optional\n"
                           "Section: devel\nMaintainer: cudatools <cudatools@nvidia.com>\n"
                           "Installed-Size: 8\nDepends: cuda-libraries (>= 1)\n"
                           "Filename: ./{}_{}_amd64.deb\nSize: 3036\nSHA256: {}\n"
                           "Description: {}\n\n",
                           name, version, name, version, std::string(64, 'a'), name);
    };
    for (int i = 0; i < records; ++i) {
        add(fmt::format("libcublas-12-{}", i % 10), fmt::format("12.{}.{}-1", i % 10, i));
    }
    for (const auto* v : {"550.54.14-1", "550.54.15-1", "550.90.07-1"}) {
        add("cuda-drivers-550", v);
    }
    add("cuda-toolkit-12-4", "12.4.1-1");
    add("libcudnn9-cuda-12", "9.1.0.70-1");
    add("libcudnn9-dev-cuda-12", "9.1.0.70-1");
    add("libnccl2", "2.21.5-1+cuda12.4");
    add("libnccl-dev", "2.21.5-1+cuda12.4");
    return out;
}

class StaticRepos final : public RepoProvider {
public:
    explicit StaticRepos(const std::string& packages) {
        RepoState state;
        state.index = PackageIndex(parse_packages_file(packages));
        state.key = OpenPgpKey{.fingerprint = "EB693B3035CD5710E231E123A4B469963BF863CC"};
        m_cuda = std::move(state);
        m_other.error = "not used by this benchmark";
    }
    [[nodiscard]] const RepoState& repo(const std::string& name) const override {
        return name == "cuda" ? m_cuda : m_other;
    }

private:
    RepoState m_cuda;
    RepoState m_other;
};

} // namespace

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::atoi(argv[1]) : 200;
    const int records = argc > 2 ? std::atoi(argv[2]) : 6000;
    const auto packages = synthetic_packages(records);
    const std::string root =
        argc > 3 ? argv[3] : std::string(GPUPROV_FIXTURES_DIR) + "/hosts/ubuntu-22.04";
    LocalSystem sys(root);
    const auto& matrix = Matrix::builtin();
    const auto steps = make_steps();

    std::vector<double> total_ms;
    std::vector<double> index_ms;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto profile = load_profile("cv-train", matrix);
        const auto facts = detect_facts(sys, matrix);
        const auto t1 = std::chrono::steady_clock::now();
        const StaticRepos repos(packages); // parsing the index is part of every plan
        const auto t2 = std::chrono::steady_clock::now();
        const StepContext ctx{profile, facts, matrix, repos};
        const auto plan = build_plan(ctx, sys, steps, {});
        const auto t3 = std::chrono::steady_clock::now();
        if (plan.steps.size() != 12) {
            return 1;
        }
        total_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t0).count());
        index_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    const auto pct = [](std::vector<double> v, double p) {
        std::sort(v.begin(), v.end());
        return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
    };
    fmt::print("plan cv-train (in-process, {} runs, {} index records, {:.1f} MiB index, host {})\n",
               runs, records + 8, static_cast<double>(packages.size()) / (1024.0 * 1024.0), root);
    fmt::print("  total:       median {:.2f} ms, p90 {:.2f} ms\n", pct(total_ms, 0.5),
               pct(total_ms, 0.9));
    fmt::print("  index parse: median {:.2f} ms, p90 {:.2f} ms\n", pct(index_ms, 0.5),
               pct(index_ms, 0.9));
    return 0;
}
