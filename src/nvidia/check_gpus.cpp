#include "probe.hpp"

#include <algorithm>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>
#include <set>

namespace gpuprov {

using namespace nvidia_detail;

namespace {

constexpr const char* kPreflightStep = "preflight";
// nvidia-smi reports usable memory, a little under the marketed size (T4 "16GB": 15109 MiB,
// H100 "80GB": 81559 MiB); a tenth of slack accepts those and still refuses a 40GB part for 80.
constexpr double kMemorySlack = 0.9;

std::string distinct_names(const std::vector<SmiGpu>& gpus) {
    std::set<std::string> names;
    for (const auto& g : gpus) {
        names.insert(g.name);
    }
    return join(std::vector<std::string>(names.begin(), names.end()), ", ");
}

CheckOutcome nvlink_outcome(const System& sys) {
    const std::vector<std::string> argv = {"nvidia-smi", "topo", "-m"};
    auto c = make_outcome("gpus.nvlink", kPreflightStep, display_argv(argv));
    c.expected = "NVLink (NV#) between every GPU pair";
    c.fix = "check the NVLink bridges or NVSwitch trays, and on HGX systems that "
            "nvidia-fabricmanager runs; `nvidia-smi nvlink --status` shows each link";
    const auto r = probe(sys, argv);
    const auto topo = r.ok() ? parse_topo_matrix(r.out) : std::nullopt;
    if (!topo) {
        c.found = r.ok() ? "no GPU matrix in the output" : failure_text(r);
        c.excerpt = head_lines(output_of(r));
        settle(c, false);
        return c;
    }
    c.excerpt = head_lines(r.out, 3);
    c.found = "NVLink between every pair";
    // Name the first pair without NVLink: that is where to look.
    bool gap = false;
    for (std::size_t i = 0; i < topo->gpus.size() && !gap; ++i) {
        for (std::size_t j = i + 1; j < topo->gpus.size() && !gap; ++j) {
            if (!starts_with(topo->links[i][j], "NV")) {
                c.found = topo->gpus[i] + "-" + topo->gpus[j] + ": " + topo->links[i][j];
                gap = true;
            }
        }
    }
    settle(c, all_pairs_nvlink(*topo));
    return c;
}

} // namespace

bool gpu_name_matches_model(std::string_view smi_name, std::string_view model) {
    const auto wanted = to_lower(model);
    std::string word;
    for (const char ch : to_lower(smi_name) + " ") {
        if (ch == ' ' || ch == '-') {
            if (word == wanted) {
                return true;
            }
            word.clear();
        } else {
            word += ch;
        }
    }
    return false;
}

std::vector<CheckOutcome> check_gpus(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.host.gpus) {
        return out;
    }
    const auto& req = *in.profile.host.gpus;
    const auto q = query_gpus(sys);

    auto count = make_outcome("gpus.count", kPreflightStep, q.command);
    count.expected = "at least " + std::to_string(req.count) + " GPU(s)";
    if (!q.ok()) {
        count.found = "nvidia-smi failed: " + failure_text(q.result);
        count.excerpt = head_lines(output_of(q.result));
        count.fix = "make nvidia-smi work first (see driver.nvidia-smi, `gpuprov doctor`)";
        settle(count, false);
        out.push_back(count);
        return out;
    }
    const auto n = static_cast<int>(q.gpus.size());
    count.found = std::to_string(n) + " (" + distinct_names(q.gpus) + ")";
    count.excerpt = head_lines(q.result.out);
    count.fix = "a GPU is missing: check `lspci -nn -d 10de:` and `dmesg | grep -i xid`";
    settle(count, n >= req.count);
    out.push_back(count);

    if (req.model) {
        auto model = make_outcome("gpus.model", kPreflightStep, q.command);
        model.expected = "every GPU is an " + *req.model;
        model.found = distinct_names(q.gpus);
        model.fix = "this host does not have the profile's GPUs: change host.gpus.model or use "
                    "another profile";
        settle(model, std::all_of(q.gpus.begin(), q.gpus.end(), [&](const SmiGpu& g) {
                   return gpu_name_matches_model(g.name, *req.model);
               }));
        out.push_back(model);
    }

    if (req.memory_gib) {
        auto memory = make_outcome("gpus.memory", kPreflightStep, q.command);
        memory.expected = ">= " + std::to_string(*req.memory_gib) + " GiB per GPU";
        std::uint64_t smallest = UINT64_MAX;
        for (const auto& g : q.gpus) {
            smallest = std::min(smallest, g.memory_total_mib.value_or(0));
        }
        memory.found = std::to_string(smallest) + " MiB on the smallest GPU";
        memory.fix =
            "this host's GPUs have less memory than the profile asks (host.gpus.memory_gib)";
        const double needed = *req.memory_gib * 1024.0 * kMemorySlack;
        settle(memory, static_cast<double>(smallest) >= needed);
        out.push_back(memory);
    }

    if (req.interconnect == "nvlink" && std::max(n, req.count) >= 2) {
        out.push_back(nvlink_outcome(sys));
    }
    return out;
}

} // namespace gpuprov
