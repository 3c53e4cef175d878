// Parsers of what the smoke tests print: gpuprov's own CUDA program and PyTorch probe
// ("gpuprov-smoke key=value ..." lines), and nccl-tests' summary lines.
#include <cmath>
#include <gpuprov/smoke.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>
#include <map>

namespace gpuprov {

namespace {

constexpr std::string_view kTag = "gpuprov-smoke ";

// "key=value" words of `rest`; `last_key`'s value runs to the end of the line (a device name
// or an error text holds spaces).
std::map<std::string, std::string> fields(std::string_view rest, std::string_view last_key) {
    std::map<std::string, std::string> out;
    while (!rest.empty()) {
        rest = trim(rest);
        const auto eq = rest.find('=');
        if (eq == std::string_view::npos) {
            break;
        }
        const auto key = std::string(rest.substr(0, eq));
        rest.remove_prefix(eq + 1);
        const auto space = key == last_key ? std::string_view::npos : rest.find(' ');
        out[key] = std::string(trim(rest.substr(0, space)));
        rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space);
    }
    return out;
}

std::optional<long long> int_field(const std::map<std::string, std::string>& f,
                                   const std::string& key) {
    const auto it = f.find(key);
    return it == f.end() ? std::nullopt : parse_int(it->second);
}

// A number the programs print as an int; one that does not fit is no reading (a cast would
// wrap 4294967298 devices to 2).
std::optional<int> int32_field(const std::map<std::string, std::string>& f,
                               const std::string& key) {
    const auto it = f.find(key);
    return it == f.end() ? std::nullopt : parse_int32(it->second);
}

// The tagged lines as (word, rest): "devices 2" -> ("devices", "2").
std::vector<std::pair<std::string, std::string>> tagged(std::string_view out) {
    std::vector<std::pair<std::string, std::string>> result;
    for (const auto& line : lines(out)) {
        const auto t = trim(line);
        if (!starts_with(t, kTag)) {
            continue;
        }
        const auto body = trim(t.substr(kTag.size()));
        const auto space = body.find(' ');
        result.emplace_back(std::string(body.substr(0, space)),
                            space == std::string_view::npos
                                ? std::string()
                                : std::string(trim(body.substr(space))));
    }
    return result;
}

// "# Avg bus bandwidth    : 2.05774" or, from older nccl-tests, " Avg bus bandwidth : ...":
// the text after the colon of a summary line that starts with `label`.
std::optional<std::string> summary_value(std::string_view line, std::string_view label) {
    auto t = trim(line);
    if (starts_with(t, "#")) {
        t = trim(t.substr(1));
    }
    if (!starts_with(t, label)) {
        return std::nullopt;
    }
    const auto colon = t.find(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    return std::string(trim(t.substr(colon + 1)));
}

std::string first_word(std::string_view s) {
    s = trim(s);
    return std::string(s.substr(0, s.find(' ')));
}

} // namespace

std::string_view smoke_status_name(SmokeStatus s) {
    switch (s) {
    case SmokeStatus::passed:
        return "passed";
    case SmokeStatus::failed:
        return "failed";
    case SmokeStatus::skipped:
        break;
    }
    return "skipped";
}

CudaSmokeReport parse_cuda_smoke(std::string_view out) {
    CudaSmokeReport r;
    for (const auto& [word, rest] : tagged(out)) {
        if (word == "versions") {
            const auto f = fields(rest, "");
            if (const auto v = int32_field(f, "runtime")) {
                r.runtime_version = v;
            }
            if (const auto v = int32_field(f, "driver")) {
                r.driver_version = v;
            }
        } else if (word == "devices") {
            if (const auto n = parse_int32(rest); n && *n >= 0) {
                r.device_count = *n;
            }
        } else if (word == "device") {
            // "0 cc=9.0 mem_mib=143771 sms=132 name=NVIDIA H200"
            const auto index = parse_int32(first_word(rest));
            if (!index) {
                continue;
            }
            const auto f = fields(std::string_view(rest).substr(rest.find(' ') + 1), "name");
            CudaSmokeDevice d;
            d.index = *index;
            d.name = f.count("name") != 0 ? f.at("name") : "";
            d.compute_capability = f.count("cc") != 0 ? f.at("cc") : "";
            d.memory_mib = int_field(f, "mem_mib").value_or(0);
            r.devices.push_back(d);
        } else if (word == "vector-add") {
            const auto f = fields(rest, "");
            const auto index = int_field(f, "device");
            for (auto& d : r.devices) {
                if (index && d.index == *index) {
                    d.elements = int_field(f, "elements");
                    d.wrong = int_field(f, "wrong");
                }
            }
        } else if (word == "error") {
            const auto f = fields(rest, "text");
            CudaSmokeError e;
            e.device = int32_field(f, "device").value_or(-1);
            e.call = f.count("call") != 0 ? f.at("call") : "";
            e.code = int32_field(f, "code").value_or(0);
            e.text = f.count("text") != 0 ? f.at("text") : "";
            r.errors.push_back(e);
        }
    }
    return r;
}

AllReduceReport parse_all_reduce_perf(std::string_view out) {
    AllReduceReport r;
    long long wrong_rows = 0;
    bool rows = false;
    for (const auto& line : lines(out)) {
        const auto t = trim(line);
        if (const auto pos = t.find("nGpus "); starts_with(t, "#") && pos != std::string::npos) {
            if (const auto n = parse_int32(first_word(t.substr(pos + 6)))) {
                r.gpus = *n;
            }
        }
        if (const auto v = summary_value(t, "Out of bounds values")) {
            r.out_of_bounds = parse_int(first_word(*v));
        }
        if (const auto v = summary_value(t, "Avg bus bandwidth")) {
            // "nan" or "inf" is no bandwidth.
            const auto bw = parse_double(first_word(*v));
            r.avg_bus_bandwidth = bw && std::isfinite(*bw) ? bw : std::nullopt;
        }
        if (t.empty() || starts_with(t, "#")) {
            continue;
        }
        // A result row: size count type redop root, then time algbw busbw #wrong for the
        // out-of-place and the in-place run (#wrong is "N/A" when data checking is off).
        const auto words = split_words(t);
        if (words.size() < 13 || !parse_int(words[0])) {
            continue;
        }
        rows = true;
        const auto oop = parse_int(words[8]).value_or(0);
        const auto ip = parse_int(words[12]).value_or(0);
        wrong_rows += (oop != 0 || ip != 0) ? 1 : 0;
    }
    if (rows) {
        r.wrong_rows = wrong_rows;
    }
    return r;
}

TorchSmokeReport parse_torch_smoke(std::string_view out) {
    TorchSmokeReport r;
    for (const auto& [word, rest] : tagged(out)) {
        if (word == "torch-missing") {
            r.torch_missing = true;
            r.missing_text = rest;
        } else if (word == "torch") {
            const auto f = fields(rest, "");
            r.version = f.count("version") != 0 ? f.at("version") : "";
            r.cuda = f.count("cuda") != 0 ? f.at("cuda") : "";
        } else if (word == "cuda-available") {
            const auto value = first_word(rest);
            if (value == "True" || value == "False") {
                r.cuda_available = value == "True";
            }
            const auto f = fields(std::string_view(rest).substr(value.size()), "");
            if (const auto n = int32_field(f, "devices")) {
                r.device_count = n;
            }
        } else if (word == "matmul") {
            const auto f = fields(rest, "");
            r.matmul_elements = int_field(f, "elements");
            r.matmul_wrong = int_field(f, "wrong");
        } else if (word == "error") {
            r.error = rest;
        }
    }
    return r;
}

} // namespace gpuprov
