// Matrix::parse: the data file is hand-edited, so every field is checked and every error points
// at the line that needs fixing.
#include <algorithm>
#include <cctype>
#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>
#include <initializer_list>
#include <set>
#include <yaml-cpp/yaml.h>

namespace gpuprov {
namespace {

class Reader {
public:
    explicit Reader(std::string source) : m_source(std::move(source)) {}

    [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
        const auto mark = at.Mark();
        if (mark.is_null()) {
            throw ProfileError(m_source, 1, 1, message);
        }
        throw ProfileError(m_source, mark.line + 1, mark.column + 1, message);
    }

    void expect_map(const YAML::Node& node, const std::string& what) const {
        if (!node.IsMap()) {
            fail(node, what + " must be a mapping");
        }
    }

    void expect_seq(const YAML::Node& node, const std::string& what) const {
        if (!node.IsSequence()) {
            fail(node, what + " must be a list");
        }
    }

    void only_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed) const {
        for (const auto& kv : map) {
            const auto key = kv.first.Scalar();
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                std::vector<std::string> names(allowed.begin(), allowed.end());
                fail(kv.first, "unknown key '" + key + "'; expected one of: " + join(names, ", "));
            }
        }
    }

    YAML::Node required(const YAML::Node& map, const std::string& key) const {
        const YAML::Node node = map[key];
        if (!node || node.IsNull()) {
            fail(map, "missing required key '" + key + "'");
        }
        return node;
    }

    std::string string(const YAML::Node& map, const std::string& key) const {
        const auto node = required(map, key);
        if (!node.IsScalar() || node.Scalar().empty()) {
            fail(node, "'" + key + "' must be a non-empty string");
        }
        return node.Scalar();
    }

    DottedVersion version_at(const YAML::Node& node, const std::string& key) const {
        if (!node.IsScalar()) {
            fail(node, "'" + key + "' must be a dotted version such as \"12.4\"");
        }
        const auto v = DottedVersion::parse(node.Scalar());
        if (!v) {
            fail(node, "'" + key + "' must be a dotted version such as \"12.4\", not '" +
                           node.Scalar() + "'");
        }
        return *v;
    }

    DottedVersion version(const YAML::Node& map, const char* key) const {
        return version_at(required(map, key), key);
    }

    long long integer_at(const YAML::Node& node, const std::string& key) const {
        const auto v = node.IsScalar() ? parse_int(node.Scalar()) : std::nullopt;
        if (!v) {
            fail(node, "'" + key + "' must be an integer");
        }
        return *v;
    }

    long long integer(const YAML::Node& map, const char* key) const {
        return integer_at(required(map, key), key);
    }

    bool boolean(const YAML::Node& map, const std::string& key, bool fallback) const {
        const YAML::Node node = map[key];
        if (!node) {
            return fallback;
        }
        if (!node.IsScalar() || (node.Scalar() != "true" && node.Scalar() != "false")) {
            fail(node, "'" + key + "' must be true or false");
        }
        return node.Scalar() == "true";
    }

    std::string fingerprint(const YAML::Node& map, const std::string& key) const {
        const auto node = required(map, key);
        const auto value = string(map, key);
        const bool hex = std::all_of(value.begin(), value.end(), [](char c) {
            return std::isxdigit(static_cast<unsigned char>(c)) != 0 &&
                   std::islower(static_cast<unsigned char>(c)) == 0;
        });
        if (value.size() != 40 || !hex) {
            fail(node, "'" + key + "' must be 40 upper-case hex digits");
        }
        return value;
    }

private:
    std::string m_source;
};

std::vector<CudaRelease> read_cuda(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'cuda'");
    std::vector<CudaRelease> out;
    for (const auto& row : list) {
        r.expect_map(row, "a cuda row");
        r.only_keys(row, {"version", "min_driver", "branch", "confirmed"});
        CudaRelease c;
        c.version = r.version(row, "version");
        if (c.version.parts.size() != 2) {
            r.fail(row["version"], "cuda 'version' must be major.minor, e.g. \"12.4\"");
        }
        c.min_driver = r.version(row, "min_driver");
        c.min_driver_text = r.string(row, "min_driver");
        c.driver_branch = static_cast<int>(r.integer(row, "branch"));
        if (c.min_driver.major() != c.driver_branch) {
            r.fail(row["min_driver"], "min_driver " + c.min_driver.str() + " is not on branch " +
                                          std::to_string(c.driver_branch));
        }
        c.confirmed = r.boolean(row, "confirmed", true);
        if (!out.empty() && !(out.back().version < c.version)) {
            r.fail(row["version"], "cuda rows must be sorted by version, oldest first");
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<DistroRepo> read_distros(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'distros'");
    std::vector<DistroRepo> out;
    for (const auto& row : list) {
        r.expect_map(row, "a distros row");
        r.only_keys(row, {"slug", "os", "family", "cuda_min", "cuda_max", "key_file",
                          "key_fingerprint", "confirmed"});
        DistroRepo d;
        d.slug = r.string(row, "slug");
        d.os = r.string(row, "os");
        d.family = r.string(row, "family");
        if (d.family != "debian" && d.family != "rhel") {
            r.fail(row["family"], "'family' must be debian or rhel, not '" + d.family + "'");
        }
        d.cuda_min = r.version(row, "cuda_min");
        d.cuda_max = r.version(row, "cuda_max");
        if (d.cuda_max < d.cuda_min) {
            r.fail(row["cuda_max"], "cuda_max is older than cuda_min");
        }
        d.key_file = r.string(row, "key_file");
        d.key_fingerprint = r.fingerprint(row, "key_fingerprint");
        d.confirmed = r.boolean(row, "confirmed", true);
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<CudnnBuild> read_cudnn8(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'cudnn8'");
    std::vector<CudnnBuild> out;
    for (const auto& row : list) {
        r.expect_map(row, "a cudnn8 row");
        r.only_keys(row, {"version", "cuda"});
        CudnnBuild b;
        const auto v = r.version(row, "version");
        if (v.major() != 8 || v.parts.size() != 4) {
            r.fail(row["version"], "cudnn8 'version' must be a full 8.x.y.z build number");
        }
        b.cudnn = v.str();
        const auto cuda = r.required(row, "cuda");
        r.expect_seq(cuda, "'cuda'");
        for (const auto& c : cuda) {
            b.cuda.push_back(r.version_at(c, "cuda"));
        }
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<Architecture> read_archs(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'architectures'");
    std::vector<Architecture> out;
    for (const auto& row : list) {
        r.expect_map(row, "an architectures row");
        r.only_keys(row, {"name", "min_cuda", "max_cuda", "open_module_ok", "proprietary_ok"});
        Architecture a;
        a.name = r.string(row, "name");
        a.min_cuda = r.version(row, "min_cuda");
        if (row["max_cuda"]) {
            a.max_cuda = r.version(row, "max_cuda");
        }
        a.open_module_ok = r.boolean(row, "open_module_ok", true);
        a.proprietary_ok = r.boolean(row, "proprietary_ok", true);
        out.push_back(std::move(a));
    }
    return out;
}

std::uint16_t device_id(const Reader& r, const YAML::Node& node) {
    // Quoted hex in the file: yaml-cpp would read a bare 0x20B2 as a string anyway, and the
    // quotes keep it greppable against `lspci -nn` output.
    const std::string s = node.IsScalar() ? node.Scalar() : "";
    const bool ok = s.size() == 6 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
                    std::all_of(s.begin() + 2, s.end(), [](char c) {
                        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                    });
    if (!ok) {
        r.fail(node, "'device_id' must be a PCI device id such as \"0x2330\"");
    }
    return static_cast<std::uint16_t>(std::stoul(s.substr(2), nullptr, 16));
}

std::vector<GpuModel> read_gpus(const Reader& r, const YAML::Node& list,
                                const std::vector<Architecture>& archs) {
    r.expect_seq(list, "'gpus'");
    std::vector<GpuModel> out;
    for (const auto& row : list) {
        r.expect_map(row, "a gpus row");
        r.only_keys(row, {"device_id", "model", "name", "smi_name", "architecture",
                          "compute_capability", "memory_gib", "nvswitch"});
        GpuModel g;
        g.device_id = device_id(r, r.required(row, "device_id"));
        g.model = r.string(row, "model");
        g.name = r.string(row, "name");
        g.smi_name = r.string(row, "smi_name");
        g.architecture = r.string(row, "architecture");
        const bool known = std::any_of(archs.begin(), archs.end(), [&](const Architecture& a) {
            return a.name == g.architecture;
        });
        if (!known) {
            r.fail(row["architecture"],
                   "architecture '" + g.architecture + "' is not in the architectures table");
        }
        g.compute_capability = r.version(row, "compute_capability").str();
        g.memory_gib = static_cast<int>(r.integer(row, "memory_gib"));
        g.nvswitch = r.boolean(row, "nvswitch", false);
        const bool duplicate = std::any_of(
            out.begin(), out.end(), [&](const GpuModel& o) { return o.device_id == g.device_id; });
        if (duplicate) {
            r.fail(row["device_id"], "device_id " + r.string(row, "device_id") + " listed twice");
        }
        out.push_back(std::move(g));
    }
    return out;
}

} // namespace

Matrix Matrix::parse(std::string_view yaml, const std::string& source_name) {
    const Reader r(source_name);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
        throw ProfileError(source_name, e.mark.line + 1, e.mark.column + 1,
                           "YAML syntax error: " + e.msg);
    }
    r.expect_map(root, "the version matrix");
    r.only_keys(root, {"schema", "cuda", "distros", "cudnn8", "cudnn9", "architectures", "gpus",
                       "container_toolkit"});
    if (r.integer(root, "schema") != 1) {
        r.fail(root["schema"], "unsupported matrix schema; expected 1");
    }

    Matrix m;
    m.m_cuda = read_cuda(r, r.required(root, "cuda"));
    m.m_distros = read_distros(r, r.required(root, "distros"));
    m.m_cudnn8 = read_cudnn8(r, r.required(root, "cudnn8"));
    m.m_archs = read_archs(r, r.required(root, "architectures"));
    m.m_gpus = read_gpus(r, r.required(root, "gpus"), m.m_archs);

    const auto cudnn9 = r.required(root, "cudnn9");
    r.expect_map(cudnn9, "'cudnn9'");
    r.only_keys(cudnn9, {"min_cuda", "cuda_majors"});
    m.m_cudnn9_min_cuda = r.version(cudnn9, "min_cuda");
    const auto majors = r.required(cudnn9, "cuda_majors");
    r.expect_seq(majors, "'cuda_majors'");
    for (const auto& major : majors) {
        m.m_cudnn9_majors.push_back(static_cast<int>(r.integer_at(major, "cuda_majors")));
    }

    const auto ctk = r.required(root, "container_toolkit");
    r.expect_map(ctk, "'container_toolkit'");
    r.only_keys(ctk, {"key_fingerprint"});
    m.m_ctk_key = r.fingerprint(ctk, "key_fingerprint");
    return m;
}

} // namespace gpuprov
