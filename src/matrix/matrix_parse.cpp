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
        auto value = string(map, key);
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

DockerRepo read_docker(const Reader& r, const YAML::Node& map, const std::string& family) {
    r.expect_map(map, "a distros row's 'docker'");
    r.only_keys(map, {"url", "suite", "key_url", "key_fingerprint"});
    DockerRepo d;
    d.url = r.string(map, "url");
    if (!Matrix::is_docker_repo(d.url + "/")) {
        r.fail(map["url"], "'url' must be Docker's https://download.docker.com/linux/...");
    }
    if (family == "debian") {
        d.suite = r.string(map, "suite"); // apt's dists/<suite>: the release codename
    } else if (map["suite"]) {
        r.fail(map["suite"], "'suite' is apt's; a rhel-family url is dnf's baseurl");
    }
    d.key_url = r.string(map, "key_url");
    d.key_fingerprint = r.fingerprint(map, "key_fingerprint");
    return d;
}

std::vector<DistroRepo> read_distros(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'distros'");
    std::vector<DistroRepo> out;
    for (const auto& row : list) {
        r.expect_map(row, "a distros row");
        r.only_keys(row, {"slug", "os", "family", "cuda_min", "cuda_max", "key_file",
                          "key_fingerprint", "confirmed", "docker", "docker_unpublished"});
        DistroRepo d;
        d.slug = r.string(row, "slug");
        d.os = r.string(row, "os");
        d.family = r.string(row, "family");
        if (d.family != "debian" && d.family != "rhel") {
            r.fail(row["family"], "'family' must be debian or rhel, not '" + d.family + "'");
        }
        d.cuda_min = r.version(row, "cuda_min");
        if (row["cuda_max"]) {
            d.cuda_max = r.version(row, "cuda_max");
            if (*d.cuda_max < d.cuda_min) {
                r.fail(row["cuda_max"], "cuda_max is older than cuda_min");
            }
        }
        d.key_file = r.string(row, "key_file");
        // Optional: a key NVIDIA names by file only (rhel10's CDF6BA43.pub) has no fingerprint
        // gpuprov can vouch for; resolve_host_repo then asks the profile to pin one.
        if (row["key_fingerprint"]) {
            d.key_fingerprint = r.fingerprint(row, "key_fingerprint");
        }
        d.confirmed = r.boolean(row, "confirmed", true);
        if (const auto docker = row["docker"]) {
            d.docker = read_docker(r, docker, d.family);
        }
        if (row["docker_unpublished"]) {
            if (d.docker) {
                r.fail(row["docker_unpublished"],
                       "a row has 'docker' (Docker publishes for it) or 'docker_unpublished' "
                       "(Docker stopped), not both");
            }
            d.docker_unpublished = r.string(row, "docker_unpublished");
        }
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<CudnnBuild> read_cudnn8(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'cudnn8'");
    std::vector<CudnnBuild> out;
    for (const auto& row : list) {
        r.expect_map(row, "a cudnn8 row");
        r.only_keys(row, {"version", "cuda", "serves"});
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
        b.serves_from = b.cuda;
        if (const auto serves = row["serves"]) {
            r.expect_map(serves, "'serves'");
            for (const auto& kv : serves) {
                const auto built = r.version_at(kv.first, "serves");
                const auto from = r.version_at(kv.second, "serves");
                const auto it = std::find(b.cuda.begin(), b.cuda.end(), built);
                if (it == b.cuda.end()) {
                    r.fail(kv.first, "'serves' names +cuda" + built.str() +
                                         ", which is not in this row's cuda list");
                }
                if (from.major() != built.major() || built < from) {
                    r.fail(kv.second, "+cuda" + built.str() + " can only serve CUDA " +
                                          std::to_string(built.major()) + ".x up to " +
                                          built.str() + ", not from " + from.str());
                }
                b.serves_from[static_cast<std::size_t>(it - b.cuda.begin())] = from;
            }
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
        r.only_keys(row, {"name", "min_cuda", "max_cuda", "first_branch", "last_branch",
                          "open_module_ok", "proprietary_ok"});
        Architecture a;
        a.name = r.string(row, "name");
        a.min_cuda = r.version(row, "min_cuda");
        if (row["max_cuda"]) {
            a.max_cuda = r.version(row, "max_cuda");
        }
        if (row["first_branch"]) {
            a.first_branch = static_cast<int>(r.integer(row, "first_branch"));
        }
        if (row["last_branch"]) {
            a.last_branch = static_cast<int>(r.integer(row, "last_branch"));
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

std::map<std::uint16_t, std::vector<MigProfile>> read_mig_profiles(const Reader& r,
                                                                   const YAML::Node& list) {
    r.expect_seq(list, "'mig_profiles'");
    std::map<std::uint16_t, std::vector<MigProfile>> out;
    for (const auto& row : list) {
        r.expect_map(row, "a mig_profiles row");
        r.only_keys(row, {"gpus", "profiles", "confirmed"});
        const bool confirmed = r.boolean(row, "confirmed", true);
        const auto profiles = r.required(row, "profiles");
        r.expect_seq(profiles, "'profiles'");
        std::vector<MigProfile> ps;
        for (const auto& p : profiles) {
            r.expect_map(p, "a MIG profile");
            r.only_keys(p, {"name", "id", "slices", "max"});
            MigProfile m;
            m.name = r.string(p, "name");
            m.id = static_cast<int>(r.integer(p, "id"));
            m.slices = static_cast<int>(r.integer(p, "slices"));
            m.max = static_cast<int>(r.integer(p, "max"));
            m.confirmed = confirmed;
            if (m.slices < 1 || m.slices > 7 || m.max < 1 || m.max > 7) {
                r.fail(p, "a MIG profile has 1 to 7 slices and at most 7 instances");
            }
            ps.push_back(std::move(m));
        }
        const auto gpus = r.required(row, "gpus");
        r.expect_seq(gpus, "'gpus'");
        for (const auto& g : gpus) {
            if (!out.emplace(device_id(r, g), ps).second) {
                r.fail(g, "a board appears in two mig_profiles rows");
            }
        }
    }
    return out;
}

std::vector<GpuModel> read_gpus(const Reader& r, const YAML::Node& list,
                                const std::vector<Architecture>& archs) {
    r.expect_seq(list, "'gpus'");
    std::vector<GpuModel> out;
    for (const auto& row : list) {
        r.expect_map(row, "a gpus row");
        r.only_keys(row, {"device_id", "model", "also_model", "name", "smi_name", "architecture",
                          "compute_capability", "memory_gib", "nvswitch", "datacenter",
                          "requires_open", "first_branch", "confirmed"});
        GpuModel g;
        g.device_id = device_id(r, r.required(row, "device_id"));
        g.model = r.string(row, "model");
        g.name = r.string(row, "name");
        if (row["smi_name"]) {
            g.smi_name = r.string(row, "smi_name");
        }
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
        g.datacenter = r.boolean(row, "datacenter", true);
        if (row["also_model"]) {
            g.also_model = r.string(row, "also_model");
        }
        g.requires_open = r.boolean(row, "requires_open", false);
        if (row["first_branch"]) {
            g.first_branch = static_cast<int>(r.integer(row, "first_branch"));
        }
        g.confirmed = r.boolean(row, "confirmed", true);
        const bool duplicate = std::any_of(
            out.begin(), out.end(), [&](const GpuModel& o) { return o.device_id == g.device_id; });
        if (duplicate) {
            r.fail(row["device_id"], "device_id " + r.string(row, "device_id") + " listed twice");
        }
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<Cudnn9Range> read_cudnn9(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'cudnn9'");
    std::vector<Cudnn9Range> out;
    for (const auto& row : list) {
        r.expect_map(row, "a cudnn9 row");
        r.only_keys(row, {"first", "last", "cuda", "maybe", "min_cc"});
        Cudnn9Range c;
        c.first = r.version(row, "first");
        c.last = r.version(row, "last");
        if (c.first.major() != 9 || c.last.major() != 9 || c.last < c.first) {
            r.fail(row["first"], "a cudnn9 row needs 9.x minors with first <= last");
        }
        if (!out.empty() && !(out.back().last < c.first)) {
            r.fail(row["first"], "cudnn9 rows must be sorted and must not overlap");
        }
        const auto majors = [&](const YAML::Node& map, const std::string& key) {
            std::map<int, DottedVersion> out_majors;
            r.expect_map(map, "'" + key + "'");
            for (const auto& kv : map) {
                const auto major = static_cast<int>(r.integer_at(kv.first, key));
                const auto from = r.version_at(kv.second, key);
                if (from.major() != major) {
                    r.fail(kv.second, "CUDA " + from.str() + " is not a CUDA " +
                                          std::to_string(major) + ".x release");
                }
                out_majors.emplace(major, from);
            }
            return out_majors;
        };
        c.cuda = majors(r.required(row, "cuda"), "cuda");
        if (const auto maybe = row["maybe"]) {
            c.maybe = majors(maybe, "maybe");
        }
        if (row["min_cc"]) {
            c.min_cc = r.version(row, "min_cc");
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<MinorVersionCompat> read_mvc(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'minor_version_compat'");
    std::vector<MinorVersionCompat> out;
    for (const auto& row : list) {
        r.expect_map(row, "a minor_version_compat row");
        r.only_keys(row, {"cuda_major", "min_driver"});
        MinorVersionCompat m;
        m.cuda_major = static_cast<int>(r.integer(row, "cuda_major"));
        m.min_driver = r.version(row, "min_driver");
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<DriverBranchInfo> read_branches(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'branches'");
    std::vector<DriverBranchInfo> out;
    for (const auto& row : list) {
        r.expect_map(row, "a driver branch row");
        r.only_keys(row, {"branch", "type", "eol"});
        DriverBranchInfo b;
        b.branch = static_cast<int>(r.integer(row, "branch"));
        if (row["type"]) {
            b.type = r.string(row, "type");
            if (b.type != "ltsb" && b.type != "production" && b.type != "new-feature") {
                r.fail(row["type"],
                       "'type' must be ltsb, production or new-feature, not '" + b.type + "'");
            }
        }
        b.eol = r.string(row, "eol");
        const bool month =
            b.eol.size() == 7 && b.eol[4] == '-' &&
            std::all_of(b.eol.begin(), b.eol.end(), [](char ch) {
                return ch == '-' || std::isdigit(static_cast<unsigned char>(ch)) != 0;
            });
        if (b.eol != "ended" && b.eol != "none" && !month) {
            r.fail(row["eol"],
                   "'eol' must be a year-month such as \"2026-06\", ended, or none (a new "
                   "feature branch, which NVIDIA gives no end-of-life date)");
        }
        // NVIDIA: "New Feature Branches are short-lived and do not have an end-of-life date";
        // every other branch has one.
        if (b.eol == "none" && b.type != "new-feature") {
            r.fail(row["eol"], "'eol: none' is for a new-feature branch only: NVIDIA dates the "
                               "end of life of every long term support and production branch");
        }
        if (!out.empty() && out.back().branch >= b.branch) {
            r.fail(row["branch"], "driver branches must be sorted, oldest first");
        }
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<ComputeCapability> read_ccs(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'compute_capabilities'");
    std::vector<ComputeCapability> out;
    for (const auto& row : list) {
        r.expect_map(row, "a compute_capabilities row");
        r.only_keys(row, {"cc", "min_cuda", "confirmed"});
        ComputeCapability c;
        c.cc = r.version(row, "cc").str();
        c.min_cuda = r.version(row, "min_cuda");
        c.confirmed = r.boolean(row, "confirmed", true);
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<std::string> names_at(const Reader& r, const YAML::Node& map, const std::string& key) {
    const auto list = r.required(map, key);
    r.expect_seq(list, "'" + key + "'");
    std::vector<std::string> out;
    for (const auto& n : list) {
        if (!n.IsScalar() || n.Scalar().empty()) {
            r.fail(n, "'" + key + "' must list non-empty package names");
        }
        out.push_back(n.Scalar());
    }
    if (out.empty()) {
        r.fail(list, "'" + key + "' must name at least one package");
    }
    return out;
}

std::vector<TensorrtLine> read_tensorrt(const Reader& r, const YAML::Node& list) {
    r.expect_seq(list, "'tensorrt'");
    std::vector<TensorrtLine> out;
    for (const auto& row : list) {
        r.expect_map(row, "a tensorrt row");
        r.only_keys(row, {"major", "soname", "cuda", "deb", "rpm", "confirmed"});
        TensorrtLine t;
        t.major = static_cast<int>(r.integer(row, "major"));
        t.soname = r.string(row, "soname");
        if (t.soname != "libnvinfer.so." + std::to_string(t.major)) {
            r.fail(row["soname"], "TensorRT " + std::to_string(t.major) +
                                      "'s soname is libnvinfer.so." + std::to_string(t.major));
        }
        const auto cuda = r.required(row, "cuda");
        r.expect_seq(cuda, "'cuda'");
        for (const auto& c : cuda) {
            t.cuda_majors.push_back(static_cast<int>(r.integer_at(c, "cuda")));
        }
        t.deb = names_at(r, row, "deb");
        t.rpm = names_at(r, row, "rpm");
        t.confirmed = r.boolean(row, "confirmed", true);
        const bool duplicate = std::any_of(
            out.begin(), out.end(), [&](const TensorrtLine& o) { return o.major == t.major; });
        if (duplicate) {
            r.fail(row["major"], "TensorRT " + std::to_string(t.major) + " listed twice");
        }
        out.push_back(std::move(t));
    }
    return out;
}

/// `kubernetes.device_plugin`: the image, the oldest toolkit and the releases, newest first.
void read_device_plugin(const Reader& r, const YAML::Node& kubernetes, std::string& image,
                        std::string& min_toolkit, std::vector<DevicePluginRelease>& out) {
    r.expect_map(kubernetes, "'kubernetes'");
    r.only_keys(kubernetes, {"device_plugin"});
    const auto dp = r.required(kubernetes, "device_plugin");
    r.expect_map(dp, "'device_plugin'");
    r.only_keys(dp, {"image", "min_container_toolkit", "releases"});
    image = r.string(dp, "image");
    if (image.find(':', image.rfind('/') + 1) != std::string::npos ||
        image.find('@') != std::string::npos) {
        r.fail(dp["image"], "'image' is the repository without a tag; each release names its tag");
    }
    min_toolkit = r.version(dp, "min_container_toolkit").str();
    const auto releases = r.required(dp, "releases");
    r.expect_seq(releases, "'releases'");
    if (releases.size() == 0) {
        r.fail(releases, "'releases' must list at least one device plugin release");
    }
    std::optional<DottedVersion> previous;
    for (const auto& row : releases) {
        r.expect_map(row, "a device plugin release");
        r.only_keys(row, {"version", "gpu_operator", "driver_branches"});
        DevicePluginRelease rel;
        rel.version = r.string(row, "version");
        const auto number = rel.version.size() > 1 && rel.version.front() == 'v'
                                ? DottedVersion::parse(rel.version.substr(1))
                                : std::nullopt;
        if (!number || number->parts.size() != 3) {
            r.fail(row["version"],
                   "device plugin 'version' is the image tag, v<major>.<minor>.<patch> "
                   "such as \"v0.19.0\", not '" +
                       rel.version + "'");
        }
        if (previous && !(*number < *previous)) {
            r.fail(row["version"], "device plugin releases must be sorted newest first");
        }
        previous = number;
        rel.gpu_operator = r.string(row, "gpu_operator");
        const auto branches = r.required(row, "driver_branches");
        r.expect_seq(branches, "'driver_branches'");
        if (branches.size() == 0) {
            r.fail(branches, "'driver_branches' must list at least one driver branch");
        }
        for (const auto& b : branches) {
            rel.driver_branches.push_back(static_cast<int>(r.integer_at(b, "driver_branches")));
        }
        out.push_back(std::move(rel));
    }
}

CudaBuiltPackages read_cuda_built(const Reader& r, const YAML::Node& map, const std::string& key) {
    const auto node = r.required(map, key);
    r.expect_map(node, "'" + key + "'");
    r.only_keys(node, {"packages", "release"});
    CudaBuiltPackages out{names_at(r, node, "packages"), r.string(node, "release")};
    if (out.release.find("{cuda}") == std::string::npos) {
        r.fail(node["release"], "'release' must contain {cuda}");
    }
    return out;
}

RpmDriverPackages read_rpm_driver(const Reader& r, const YAML::Node& node) {
    r.expect_map(node, "'driver'");
    r.only_keys(node, {"module", "streams", "packages", "version_from", "dkms", "kernel_packages",
                       "no_module_streams_from", "versionlock_plugin"});
    RpmDriverPackages d;
    d.module = r.string(node, "module");
    const auto streams = r.required(node, "streams");
    const auto packages = r.required(node, "packages");
    r.expect_map(streams, "'streams'");
    r.expect_map(packages, "'packages'");
    for (const auto* flavor : {"proprietary", "open"}) {
        d.streams[flavor] = r.string(streams, flavor);
        if (d.streams[flavor].find("{branch}") == std::string::npos) {
            r.fail(streams[flavor], std::string("stream '") + flavor + "' must contain {branch}");
        }
        d.packages[flavor] = names_at(r, packages, flavor);
    }
    r.only_keys(streams, {"proprietary", "open"});
    r.only_keys(packages, {"proprietary", "open"});
    d.version_from = r.string(node, "version_from");
    d.dkms = r.string(node, "dkms");
    d.kernel_packages = names_at(r, node, "kernel_packages");
    if (const auto from = node["no_module_streams_from"]) {
        d.no_module_streams_from = static_cast<int>(r.integer_at(from, "no_module_streams_from"));
    }
    const auto plugin = r.required(node, "versionlock_plugin");
    r.expect_map(plugin, "'versionlock_plugin'");
    for (const auto& kv : plugin) {
        const auto major = static_cast<int>(r.integer_at(kv.first, "versionlock_plugin"));
        if (!kv.second.IsScalar() || kv.second.Scalar().empty()) {
            r.fail(kv.second, "'versionlock_plugin' maps an EL major to a package name");
        }
        d.versionlock_plugin.emplace(major, kv.second.Scalar());
    }
    return d;
}

BranchRange read_branch_range(const Reader& r, const YAML::Node& node) {
    BranchRange b;
    if (const auto min = node["min_branch"]) {
        b.min = static_cast<int>(r.integer_at(min, "min_branch"));
    }
    if (const auto max = node["max_branch"]) {
        b.max = static_cast<int>(r.integer_at(max, "max_branch"));
    }
    if (b.min > b.max) {
        r.fail(node, "'min_branch' is above 'max_branch'");
    }
    return b;
}

std::vector<FabricManagerNames> read_fabric_manager(const Reader& r, const YAML::Node& node) {
    r.expect_seq(node, "'fabric_manager'");
    std::vector<FabricManagerNames> out;
    for (const auto& row : node) {
        r.expect_map(row, "a fabric_manager row");
        r.only_keys(row, {"min_branch", "max_branch", "packages", "nvlink5", "imex"});
        FabricManagerNames n{read_branch_range(r, row), names_at(r, row, "packages"), {}, {}};
        if (row["nvlink5"]) {
            n.nvlink5 = names_at(r, row, "nvlink5");
        }
        if (row["imex"]) {
            n.imex = names_at(r, row, "imex");
        }
        out.push_back(std::move(n));
    }
    return out;
}

AptDriverPackages read_apt_driver(const Reader& r, const YAML::Node& node) {
    r.expect_map(node, "'driver'");
    r.only_keys(node, {"pinning", "schemes"});
    AptDriverPackages d;
    const auto pin = r.required(node, "pinning");
    r.expect_map(pin, "'pinning'");
    r.only_keys(pin, {"branch", "version"});
    d.pinning_branch = r.string(pin, "branch");
    d.pinning_version = r.string(pin, "version");
    if (d.pinning_branch.find("{branch}") == std::string::npos) {
        r.fail(pin["branch"], "'branch' must contain {branch}");
    }
    if (d.pinning_version.find("{version}") == std::string::npos) {
        r.fail(pin["version"], "'version' must contain {version}");
    }
    const auto schemes = r.required(node, "schemes");
    r.expect_seq(schemes, "'schemes'");
    for (const auto& row : schemes) {
        r.expect_map(row, "a driver scheme");
        r.only_keys(row,
                    {"name", "os", "min_branch", "max_branch", "lock", "open_since", "packages"});
        AptDriverScheme s;
        s.name = r.string(row, "name");
        s.os = names_at(r, row, "os");
        s.branches = read_branch_range(r, row);
        const auto lock = r.string(row, "lock");
        if (lock != "hold" && lock != "pin") {
            r.fail(row["lock"], "'lock' must be hold or pin");
        }
        s.lock = lock == "pin" ? BranchLock::pin : BranchLock::hold;
        if (const auto since = row["open_since"]) {
            s.open_since = static_cast<int>(r.integer_at(since, "open_since"));
        }
        const auto packages = r.required(row, "packages");
        r.expect_map(packages, "'packages'");
        r.only_keys(packages, {"proprietary", "open"});
        for (const auto* flavor : {"proprietary", "open"}) {
            s.packages[flavor] = names_at(r, packages, flavor);
        }
        d.schemes.push_back(std::move(s));
    }
    return d;
}

DcgmNames read_dcgm(const Reader& r, const YAML::Node& node) {
    r.expect_map(node, "'dcgm'");
    r.only_keys(node, {"packages", "cuda_majors", "min_branch"});
    DcgmNames d;
    d.packages = names_at(r, node, "packages");
    const auto majors = r.required(node, "cuda_majors");
    r.expect_seq(majors, "'dcgm.cuda_majors'");
    for (const auto& m : majors) {
        d.cuda_majors.push_back(static_cast<int>(r.integer_at(m, "dcgm.cuda_majors")));
    }
    d.min_branch = static_cast<int>(r.integer(node, "min_branch"));
    return d;
}

std::map<std::string, PackageNames> read_package_names(const Reader& r, const YAML::Node& node) {
    r.expect_map(node, "'packages'");
    r.only_keys(node, {"debian", "rhel"});
    std::map<std::string, PackageNames> out;
    for (const auto& kv : node) {
        const auto& f = kv.second;
        r.expect_map(f, "'packages." + kv.first.Scalar() + "'");
        r.only_keys(f, {"cuda_toolkit", "cudnn9", "cudnn8", "nccl", "fabric_manager",
                        "container_toolkit", "driver", "dcgm"});
        PackageNames n;
        n.cuda_toolkit = r.string(f, "cuda_toolkit");
        n.cudnn9 = names_at(r, f, "cudnn9");
        n.cudnn8 = read_cuda_built(r, f, "cudnn8");
        n.nccl = read_cuda_built(r, f, "nccl");
        n.fabric_manager = read_fabric_manager(r, r.required(f, "fabric_manager"));
        const auto ctk = r.required(f, "container_toolkit");
        r.expect_map(ctk, "'container_toolkit'");
        r.only_keys(ctk, {"packages", "repo_path"});
        n.container_toolkit = names_at(r, ctk, "packages");
        n.container_repo_path = r.string(ctk, "repo_path");
        if (const auto drv = f["driver"]) {
            if (kv.first.Scalar() == "debian") {
                n.apt_driver = read_apt_driver(r, drv);
            } else {
                n.driver = read_rpm_driver(r, drv);
            }
        }
        if (const auto dcgm = f["dcgm"]) {
            n.dcgm = read_dcgm(r, dcgm);
        }
        out.emplace(kv.first.Scalar(), std::move(n));
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
    r.only_keys(root,
                {"schema", "cuda", "minor_version_compat", "forward_compat", "driver_branches",
                 "distros", "cudnn8", "cudnn9", "architectures", "compute_capabilities", "gpus",
                 "container_toolkit", "tensorrt", "kubernetes", "packages", "mig_profiles"});
    if (r.integer(root, "schema") != 1) {
        r.fail(root["schema"], "unsupported matrix schema; expected 1");
    }

    Matrix m;
    m.m_cuda = read_cuda(r, r.required(root, "cuda"));
    m.m_distros = read_distros(r, r.required(root, "distros"));
    m.m_cudnn8 = read_cudnn8(r, r.required(root, "cudnn8"));
    m.m_archs = read_archs(r, r.required(root, "architectures"));
    m.m_gpus = read_gpus(r, r.required(root, "gpus"), m.m_archs);

    m.m_cudnn9 = read_cudnn9(r, r.required(root, "cudnn9"));
    m.m_mvc = read_mvc(r, r.required(root, "minor_version_compat"));
    m.m_ccs = read_ccs(r, r.required(root, "compute_capabilities"));

    const auto fwd = r.required(root, "forward_compat");
    r.expect_map(fwd, "'forward_compat'");
    r.only_keys(fwd, {"package"});
    m.m_forward_compat_package = r.string(fwd, "package");
    if (m.m_forward_compat_package.find("{major}") == std::string::npos ||
        m.m_forward_compat_package.find("{minor}") == std::string::npos) {
        r.fail(fwd["package"], "'package' must contain {major} and {minor}");
    }

    const auto branches = r.required(root, "driver_branches");
    r.expect_map(branches, "'driver_branches'");
    r.only_keys(branches, {"open_modules_since", "branches"});
    m.m_open_modules_since = static_cast<int>(r.integer(branches, "open_modules_since"));
    m.m_branches = read_branches(r, r.required(branches, "branches"));

    const auto ctk = r.required(root, "container_toolkit");
    r.expect_map(ctk, "'container_toolkit'");
    r.only_keys(ctk, {"key_fingerprint"});
    m.m_ctk_key = r.fingerprint(ctk, "key_fingerprint");
    if (const auto trt = root["tensorrt"]) {
        m.m_tensorrt = read_tensorrt(r, trt);
    }
    if (const auto k8s = root["kubernetes"]) {
        read_device_plugin(r, k8s, m.m_device_plugin_image, m.m_device_plugin_min_toolkit,
                           m.m_device_plugin);
    }
    if (const auto mig = root["mig_profiles"]) {
        m.m_mig = read_mig_profiles(r, mig);
    }
    if (const auto names = root["packages"]) {
        m.m_names = read_package_names(r, names);
    }
    return m;
}

} // namespace gpuprov
