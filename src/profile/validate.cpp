// Merged tree -> Profile: schema v1 (docs/profiles.md). Every value is checked where it is read,
// so the error can point at it; nothing unknown is silently ignored.
#include "internal.hpp"
#include "text_checks.hpp"

#include <algorithm>
#include <cctype>
#include <gpuprov/matrix.hpp>
#include <gpuprov/step_ids.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::profile_detail {
namespace {

const std::vector<std::string> k_repository_names = {"cuda", "container-toolkit", kDockerRepoName};

std::string kind_name(const Node& n) {
    switch (n.kind) {
    case Node::Kind::null:
        return "empty";
    case Node::Kind::scalar:
        return "the value '" + n.scalar + "'";
    case Node::Kind::map:
        return "a mapping";
    case Node::Kind::seq:
        return "a list";
    }
    return "?";
}

std::string join_path(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
}

bool matches(std::string_view s, bool (*allowed)(char)) {
    return !s.empty() && std::all_of(s.begin(), s.end(), allowed);
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-';
}

// "X.Y" with both parts decimal.
bool is_major_minor(std::string_view s) {
    const auto dot = s.find('.');
    return dot != std::string_view::npos && matches(s.substr(0, dot), is_digit) &&
           matches(s.substr(dot + 1), is_digit);
}

class Reader {
public:
    explicit Reader(const Matrix& matrix) : m_matrix(matrix) {}

    const Matrix& matrix() const { return m_matrix; }

    // A mapping whose keys must all come from `allowed`; null counts as empty.
    void expect_map(const Node& n, const std::string& path,
                    const std::vector<std::string>& allowed) const {
        if (n.kind == Node::Kind::null) {
            return;
        }
        if (n.kind != Node::Kind::map) {
            fail(n.pos, "'" + path + "' must be a mapping (allowed keys: " + join(allowed, ", ") +
                            "); got " + kind_name(n));
        }
        for (const auto& [key, value] : n.map) {
            if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
                continue;
            }
            const auto guess = nearest(key, allowed);
            std::string msg = "unknown key '" + join_path(path, key) + "'";
            if (!guess.empty()) {
                msg += "; did you mean '" + guess + "'?";
            }
            msg += " Allowed keys" + (path.empty() ? std::string() : " in '" + path + "'") + ": " +
                   join(allowed, ", ");
            fail(value.key_pos, msg);
        }
    }

    std::string scalar(const Node& n, const std::string& path, const std::string& expected) const {
        if (n.kind != Node::Kind::scalar) {
            fail(n.pos, "'" + path + "' must be " + expected + "; got " + kind_name(n));
        }
        return n.scalar;
    }

    // Values that reach files or argv.
    std::string safe(const Node& n, const std::string& path, const std::string& expected) const {
        auto s = scalar(n, path, expected);
        check_safe(s, n.pos, path);
        return s;
    }

    std::string one_of(const Node& n, const std::string& path,
                       const std::vector<std::string>& allowed) const {
        auto s = safe(n, path, "one of " + join(allowed, ", "));
        if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
            const auto guess = nearest(s, allowed);
            fail(n.pos, "'" + path + "' must be one of " + join(allowed, ", ") + "; got '" + s +
                            "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)"));
        }
        return s;
    }

    bool boolean(const Node& n, const std::string& path) const {
        const auto s = scalar(n, path, "true or false");
        if (s != "true" && s != "false") {
            fail(n.pos, "'" + path + "' must be true or false; got '" + s + "'");
        }
        return s == "true";
    }

    int integer(const Node& n, const std::string& path, int min, int max) const {
        const auto expected =
            "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
        const auto s = scalar(n, path, expected);
        const auto v = parse_int(s);
        if (!v || *v < min || *v > max) {
            fail(n.pos, "'" + path + "' must be " + expected + "; got '" + s + "'");
        }
        return static_cast<int>(*v);
    }

    const Node& required(const Node& map, const std::string& path, const std::string& key) const {
        const auto* n = map.kind == Node::Kind::map ? map.find(key) : nullptr;
        if (n == nullptr || n->kind == Node::Kind::null) {
            fail(map.kind == Node::Kind::map ? map.key_pos : map.pos,
                 "'" + join_path(path, key) + "' is required" +
                     (path.empty() ? std::string(" at the top level") : " in '" + path + "'"));
        }
        return *n;
    }

private:
    const Matrix& m_matrix;
};

// Present and not null.
const Node* get(const Node& map, std::string_view key) {
    const auto* n = map.kind == Node::Kind::map ? map.find(key) : nullptr;
    return n == nullptr || n->kind == Node::Kind::null ? nullptr : n;
}

std::vector<std::string> os_ids(const Matrix& matrix) {
    std::vector<std::string> ids;
    for (const auto& d : matrix.distros()) {
        ids.push_back(d.os);
    }
    return ids;
}

GpuRequirement read_gpus(const Reader& r, const Node& n) {
    r.expect_map(n, "host.gpus", {"count", "model", "memory_gib", "interconnect"});
    GpuRequirement g;
    if (const auto* v = get(n, "count")) {
        g.count = r.integer(*v, "host.gpus.count", 1, 64);
    }
    if (const auto* v = get(n, "model")) {
        const auto models = r.matrix().gpu_models();
        g.model = r.safe(*v, "host.gpus.model", "a GPU model");
        if (std::find(models.begin(), models.end(), *g.model) == models.end()) {
            const auto guess = nearest(*g.model, models);
            fail(v->pos, "'host.gpus.model' is '" + *g.model + "', which gpuprov does not know" +
                             (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                             "; known models: " + join(models, ", "));
        }
    }
    if (const auto* v = get(n, "memory_gib")) {
        g.memory_gib = r.integer(*v, "host.gpus.memory_gib", 1, 4096);
    }
    if (const auto* v = get(n, "interconnect")) {
        g.interconnect = r.one_of(*v, "host.gpus.interconnect", {"nvlink", "pcie"});
    }
    return g;
}

std::vector<DiskSpec> read_disks(const Reader& r, const Node& n) {
    if (n.kind != Node::Kind::seq) {
        fail(n.pos, "'host.disks' must be a list such as [{path: /data, size_gib: 1800, nvme: "
                    "true}]; got " +
                        kind_name(n));
    }
    std::vector<DiskSpec> out;
    for (std::size_t i = 0; i < n.seq.size(); ++i) {
        const auto& e = n.seq[i];
        const auto at = "host.disks[" + std::to_string(i) + "]";
        r.expect_map(e, at, {"path", "size_gib", "free_gib", "nvme", "ssd"});
        DiskSpec d;
        if (const auto* p = get(e, "path")) {
            d.path = r.scalar(*p, at + ".path", "an absolute path");
            check_abs_path(d.path, p->pos, at + ".path");
        }
        if (const auto* v = get(e, "size_gib")) {
            d.size_gib = r.integer(*v, at + ".size_gib", 1, 1 << 20);
        }
        if (const auto* v = get(e, "free_gib")) {
            d.free_gib = r.integer(*v, at + ".free_gib", 1, 1 << 20);
        }
        if (const auto* v = get(e, "nvme")) {
            d.nvme = r.boolean(*v, at + ".nvme");
        }
        if (const auto* v = get(e, "ssd")) {
            d.ssd = r.boolean(*v, at + ".ssd");
        }
        if (!d.size_gib && !d.free_gib && !d.nvme && !d.ssd) {
            fail(e.pos, "'" + at +
                            "' asks for nothing; give size_gib (the disk's size: a 2 TB "
                            "disk is 1863 GiB), free_gib, nvme: true or ssd: true");
        }
        const bool duplicate = std::any_of(out.begin(), out.end(),
                                           [&](const DiskSpec& o) { return o.path == d.path; });
        if (duplicate) {
            fail(e.pos, "'" + at + "': path " + d.path + " is listed twice in host.disks");
        }
        out.push_back(std::move(d));
    }
    return out;
}

HostRequirements read_host(const Reader& r, const Node& n) {
    r.expect_map(n, "host", {"os", "gpus", "memory_gib", "disk", "disks"});
    HostRequirements h;
    if (const auto* os = get(n, "os")) {
        if (os->kind != Node::Kind::seq) {
            fail(os->pos, "'host.os' must be a list such as [ubuntu-22.04, debian-12]; got " +
                              kind_name(*os));
        }
        const auto allowed = os_ids(r.matrix());
        for (std::size_t i = 0; i < os->seq.size(); ++i) {
            h.os.push_back(r.one_of(os->seq[i], "host.os[" + std::to_string(i) + "]", allowed));
        }
    }
    if (const auto* g = get(n, "gpus")) {
        h.gpus = read_gpus(r, *g);
    }
    if (const auto* m = get(n, "memory_gib")) {
        h.memory_gib = r.integer(*m, "host.memory_gib", 1, 1 << 20);
    }
    if (const auto* d = get(n, "disk")) {
        r.expect_map(*d, "host.disk", {"path", "free_gib"});
        DiskRequirement disk;
        if (const auto* p = get(*d, "path")) {
            disk.path = r.scalar(*p, "host.disk.path", "an absolute path");
            check_abs_path(disk.path, p->pos, "host.disk.path");
        }
        disk.free_gib =
            r.integer(r.required(*d, "host.disk", "free_gib"), "host.disk.free_gib", 1, 1 << 20);
        h.disk = disk;
    }
    if (const auto* d = get(n, "disks")) {
        h.disks = read_disks(r, *d);
    }
    return h;
}

RepositorySpec read_repository(const Reader& r, const std::string& name, const Node& n) {
    const auto path = "repositories." + name;
    r.expect_map(n, path, {"url", "key_url", "key_fingerprint", "allow_insecure"});
    RepositorySpec spec;
    spec.name = name;
    if (const auto* v = get(n, "allow_insecure")) {
        spec.allow_insecure = r.boolean(*v, path + ".allow_insecure");
    }
    const auto& url = r.required(n, path, "url");
    spec.url = r.scalar(url, path + ".url", "an https:// URL");
    check_url(spec.url, spec.allow_insecure, url.pos, path + ".url");
    const auto* key_url = get(n, "key_url");
    const auto* fpr = get(n, "key_fingerprint");
    if (key_url == nullptr && fpr == nullptr) {
        // Unpinned: NVIDIA's key for the host's distro, from the version matrix
        // (resolve_host_repo). Only NVIDIA's CUDA URL has one per distro; any other URL (a
        // mirror re-signs with its own key) must say which key it trusts.
        // Likewise Docker's own URL as repositories.docker: Docker's key for the distro.
        if (!Matrix::is_nvidia_cuda_repo(spec.url) &&
            !(name == kDockerRepoName && Matrix::is_docker_repo(spec.url))) {
            fail(n.key_pos,
                 "'" + path + "' has no key_url and key_fingerprint; only NVIDIA's CUDA " +
                     "repository (https://developer.download.nvidia.com/compute/cuda/repos/...) " +
                     "and Docker's (repositories.docker: " + std::string(kDockerRepoRoot) +
                     ") get their publisher's key for the host's distro from gpuprov's version " +
                     "matrix. Pin the key that signs " + spec.url +
                     ": add key_url and key_fingerprint");
        }
        return spec;
    }
    if (key_url == nullptr || fpr == nullptr) {
        const bool has_url = key_url != nullptr;
        fail((has_url ? key_url : fpr)->pos,
             "'" + path + "." + (has_url ? "key_url" : "key_fingerprint") + "' without '" + path +
                 "." + (has_url ? "key_fingerprint" : "key_url") +
                 "': a key is trusted only with both (where to fetch it, and the fingerprint it " +
                 "must have). Add " + (has_url ? "key_fingerprint" : "key_url") +
                 (Matrix::is_nvidia_cuda_repo(spec.url)
                      ? ", or remove both to use NVIDIA's key for the host's distro"
                      : ""));
    }
    spec.key_url = r.scalar(*key_url, path + ".key_url", "an https:// URL");
    check_url(spec.key_url, spec.allow_insecure, key_url->pos, path + ".key_url");
    spec.key_fingerprint = normalise_fingerprint(
        r.scalar(*fpr, path + ".key_fingerprint", "a 40-hex-digit key fingerprint"), fpr->pos,
        path + ".key_fingerprint");
    return spec;
}

std::map<std::string, RepositorySpec> read_repositories(const Reader& r, const Node& n) {
    if (n.kind != Node::Kind::map) {
        fail(n.pos, "'repositories' must be a mapping of repository name to url, key_url and "
                    "key_fingerprint; got " +
                        kind_name(n));
    }
    std::map<std::string, RepositorySpec> out;
    for (const auto& [name, value] : n.map) {
        if (std::find(k_repository_names.begin(), k_repository_names.end(), name) ==
            k_repository_names.end()) {
            const auto guess = nearest(name, k_repository_names);
            fail(value.key_pos, "unknown repository '" + name + "'" +
                                    (guess.empty() ? "" : "; did you mean '" + guess + "'?") +
                                    "; allowed: " + join(k_repository_names, ", "));
        }
        if (value.kind != Node::Kind::null) {
            out.emplace(name, read_repository(r, name, value));
        }
    }
    return out;
}

DriverSpec read_driver(const Reader& r, const Node& n) {
    r.expect_map(
        n, "driver",
        {"branch", "version", "flavor", "hold", "hold_kernel", "kernel_guard", "replace_runfile"});
    DriverSpec d;
    const auto& branch = r.required(n, "driver", "branch");
    d.branch = r.safe(branch, "driver.branch", "a driver branch such as \"550\"");
    if (d.branch.size() != 3 || !matches(d.branch, is_digit)) {
        fail(branch.pos, "'driver.branch' must be a 3-digit driver branch such as \"550\" or "
                         "\"580\"; got '" +
                             d.branch + "'");
    }
    if (const auto* v = get(n, "flavor")) {
        d.flavor = r.one_of(*v, "driver.flavor", {"auto", "proprietary", "open", "server"});
    }
    if (const auto* v = get(n, "hold")) {
        d.hold = r.boolean(*v, "driver.hold");
    }
    if (const auto* v = get(n, "hold_kernel")) {
        d.hold_kernel = r.boolean(*v, "driver.hold_kernel");
    }
    if (const auto* v = get(n, "kernel_guard")) {
        d.kernel_guard = r.one_of(*v, "driver.kernel_guard", {"warn", "block"}) == "block"
                             ? KernelGuard::block
                             : KernelGuard::warn;
    }
    if (const auto* v = get(n, "replace_runfile")) {
        d.replace_runfile = r.boolean(*v, "driver.replace_runfile");
    }
    if (const auto* v = get(n, "version")) {
        const auto text = r.safe(*v, "driver.version", "an exact driver such as \"550.90.07\"");
        const auto parsed = DottedVersion::parse(text);
        if (!parsed || parsed->parts.size() < 2 || parsed->parts.size() > 3 ||
            std::to_string(parsed->major()) != d.branch || parsed->str() != text) {
            fail(v->pos, "'driver.version' must be an exact driver of branch " + d.branch +
                             " such as \"" + d.branch +
                             ".90.07\" (as nvidia-smi prints it); got '" + text +
                             "'. Omit it for the newest driver in the branch");
        }
        d.version = text;
    }
    return d;
}

CudaSpec read_cuda(const Reader& r, const Node& n) {
    r.expect_map(n, "cuda", {"version"});
    const auto& v = r.required(n, "cuda", "version");
    CudaSpec c;
    c.version = r.safe(v, "cuda.version", "a CUDA release such as \"12.4\"");
    // "12.4.1": an exact toolkit update of a release gpuprov knows.
    if (const auto full = DottedVersion::parse(c.version);
        full && full->parts.size() == 3 && DottedVersion{full->parts}.str() == c.version &&
        r.matrix().cuda(*full) != nullptr) {
        c.exact = c.version;
        c.version = std::to_string(full->major()) + "." + std::to_string(full->minor());
    }
    const auto parsed = DottedVersion::parse(c.version);
    // "12.04" is not how NVIDIA writes a release: compare with the plain rendering.
    if (!is_major_minor(c.version) || !parsed || DottedVersion{parsed->parts}.str() != c.version ||
        r.matrix().cuda(*parsed) == nullptr) {
        std::vector<std::string> known;
        for (const auto& rel : r.matrix().cuda_releases()) {
            known.push_back(rel.version.str());
        }
        fail(v.pos, "'cuda.version' must be a CUDA release as major.minor (or an exact update, "
                    "major.minor.patch); '" +
                        c.version +
                        "' is not one gpuprov knows. Known releases: " + join(known, ", "));
    }
    return c;
}

CudnnSpec read_cudnn(const Reader& r, const Node& n) {
    r.expect_map(n, "cudnn", {"version"});
    const auto& v = r.required(n, "cudnn", "version");
    CudnnSpec c;
    c.version = r.safe(v, "cudnn.version", "\"8.x\" or \"9\"");
    const bool v8 = starts_with(c.version, "8.") && is_major_minor(c.version);
    const bool v9 = c.version == "9" || (starts_with(c.version, "9.") && is_major_minor(c.version));
    if (!v8 && !v9) {
        fail(v.pos, "'cudnn.version' must be \"8.x\" (e.g. \"8.9\"), \"9\" or \"9.x\"; got '" +
                        c.version + "'. Omit cudnn (or set it to null) to install none");
    }
    return c;
}

TensorrtSpec read_tensorrt(const Reader& r, const Node& n) {
    r.expect_map(n, "tensorrt", {"version"});
    const auto& v = r.required(n, "tensorrt", "version");
    TensorrtSpec t;
    t.version = r.safe(v, "tensorrt.version", "\"10\" or \"10.x\"");
    const auto parsed = DottedVersion::parse(t.version);
    const bool shape = parsed && parsed->parts.size() <= 2 &&
                       std::all_of(t.version.begin(), t.version.end(),
                                   [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
    if (!shape || r.matrix().tensorrt(parsed->major()) == nullptr) {
        std::vector<std::string> majors;
        for (const auto& line : r.matrix().tensorrt_lines()) {
            majors.push_back("\"" + std::to_string(line.major) + "\"");
        }
        fail(v.pos, "'tensorrt.version' must be a TensorRT major the matrix knows (" +
                        join(majors, ", ") + "), optionally with a minor such as \"10.4\"; got '" +
                        t.version + "'. Omit tensorrt (or set it to null) to install none");
    }
    return t;
}

bool is_image_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-' ||
           c == '/' || c == ':' || c == '@';
}

// The engine gpuprov installs runs containers through exactly one runtime.
std::string runtime_of_engine(const std::string& engine) {
    return engine == "containerd" ? "containerd" : "docker";
}

ContainerSpec read_container(const Reader& r, const Node& n) {
    r.expect_map(n, "container", {"toolkit", "runtime", "engine", "cdi", "test_image"});
    ContainerSpec c;
    if (const auto* v = get(n, "toolkit")) {
        c.toolkit = r.boolean(*v, "container.toolkit");
    }
    const auto* engine = get(n, "engine");
    if (engine != nullptr) {
        c.engine =
            r.one_of(*engine, "container.engine", {"none", "docker.io", "docker-ce", "containerd"});
    }
    if (const auto* v = get(n, "runtime")) {
        c.runtime = r.one_of(*v, "container.runtime", {"docker", "containerd", "crio"});
    } else if (c.engine != "none") {
        c.runtime = runtime_of_engine(c.engine);
    }
    if (c.engine != "none") {
        if (!c.toolkit) {
            fail(engine->pos, "'container.engine' " + c.engine +
                                  " is installed for the NVIDIA container toolkit, which this "
                                  "profile does not enable; set container.toolkit: true, or "
                                  "engine: none");
        }
        if (c.runtime != runtime_of_engine(c.engine)) {
            fail(engine->pos, "'container.engine' " + c.engine + " runs containers through " +
                                  runtime_of_engine(c.engine) + ", but container.runtime is " +
                                  c.runtime + "; set runtime: " + runtime_of_engine(c.engine) +
                                  ", or engine: none to configure a " + c.runtime +
                                  " the host already has");
        }
    }
    if (const auto* v = get(n, "cdi")) {
        c.cdi = r.boolean(*v, "container.cdi");
    }
    if (const auto* v = get(n, "test_image")) {
        const auto image = r.safe(*v, "container.test_image", "an image reference");
        if (image.empty() || image.size() > 255 || image.front() == '-' ||
            !matches(image, is_image_char)) {
            fail(v->pos, "'container.test_image' must be an image reference such as "
                         "nvidia/cuda:12.4.1-base-ubuntu22.04 (letters, digits and ._-/:@, not "
                         "starting with '-'); got '" +
                             image + "'");
        }
        c.test_image = image;
    }
    return c;
}

// mig: (docs/mig.md). The layout takes the short form ({all: [1g.10gb x7]}), a map per
// GPU selector ({all: {"1g.10gb": 7}}), or mig-parted's own entries (NVIDIA/mig-parted
// examples/config.yaml: [{devices: all | [0, 1], mig-enabled: true, mig-devices: {...}}]).
std::string mig_known(const Matrix& m) {
    // The profiles per board, for the error: "A100 SXM4 40GB, ...: 1g.5gb, ...".
    std::vector<std::string> parts;
    std::map<std::string, std::vector<std::string>> by_profiles;
    for (const auto& g : m.gpus()) {
        const auto& ps = m.mig_profiles(g.device_id);
        if (ps.empty()) {
            continue;
        }
        std::vector<std::string> names;
        for (const auto& p : ps) {
            names.push_back(p.name);
        }
        by_profiles[join(names, ", ")].push_back(g.name);
    }
    for (const auto& [names, boards] : by_profiles) {
        parts.push_back(join(boards, ", ") + ": " + names);
    }
    return join(parts, "; ");
}

std::pair<std::string, int> read_mig_item(const Reader& r, const Node& n, const std::string& path) {
    // "1g.10gb x7", "1g.10gb x 7", "1g.10gb"
    // The space before xN is the notation; the name itself must be safe for argv.
    const auto s = r.scalar(n, path, "a MIG profile such as 1g.10gb, with xN for N of them");
    std::string name = std::string(trim(s));
    int count = 1;
    if (const auto x = name.find(" x"); x != std::string::npos) {
        const auto n_text = trim(std::string_view(name).substr(x + 2));
        const auto v = parse_int(n_text);
        if (!v || *v < 1 || *v > 7) {
            fail(n.pos, "'" + path +
                            "': the count after 'x' must be 1 to 7 (MIG makes at most 7 "
                            "GPU instances); got '" +
                            s + "'");
        }
        count = static_cast<int>(*v);
        name = std::string(trim(std::string_view(name).substr(0, x)));
    }
    check_safe(name, n.pos, path);
    return {name, count};
}

void check_mig_entry(const Reader& r, const MigLayoutEntry& e, const Node& at,
                     const std::string& path) {
    const auto known = r.matrix().mig_profile_names();
    int slices = 0;
    for (const auto& [name, count] : e.devices) {
        if (std::find(known.begin(), known.end(), name) == known.end()) {
            const auto guess = nearest(name, known);
            fail(at.pos,
                 "'" + path + "': unknown MIG profile '" + name + "'" +
                     (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                     ". MIG profiles per GPU (NVIDIA MIG user guide): " + mig_known(r.matrix()));
        }
        // "<g>g.<mem>gb": g compute slices of 7.
        slices += count * std::stoi(name.substr(0, name.find('g')));
    }
    if (slices > 7) {
        fail(at.pos, "'" + path + "' needs " + std::to_string(slices) +
                         " compute slices; a GPU has 7 (e.g. 1g.10gb x7, or 3g.40gb + 2g.20gb + "
                         "1g.10gb x2)");
    }
}

std::vector<std::pair<std::string, int>> read_mig_devices(const Reader& r, const Node& n,
                                                          const std::string& path) {
    std::vector<std::pair<std::string, int>> out;
    if (n.kind == Node::Kind::seq) {
        for (std::size_t i = 0; i < n.seq.size(); ++i) {
            out.push_back(read_mig_item(r, n.seq[i], path + "[" + std::to_string(i) + "]"));
        }
    } else if (n.kind == Node::Kind::map) {
        for (const auto& [name, count] : n.map) {
            check_safe(name, count.key_pos, path);
            out.emplace_back(name, r.integer(count, path + "." + name, 1, 7));
        }
    } else if (n.kind != Node::Kind::null) {
        fail(n.pos, "'" + path +
                        "' must list MIG profiles ([1g.10gb x7]) or map them to counts "
                        "({\"1g.10gb\": 7}); got " +
                        kind_name(n));
    }
    return out;
}

std::vector<int> read_mig_gpus(const Reader& r, const Node& n, const std::string& path, bool& all) {
    std::vector<int> gpus;
    if (n.kind == Node::Kind::scalar && n.scalar == "all") {
        all = true;
        return gpus;
    }
    const std::string expected = "all, a GPU index, or a list of GPU indices such as [0, 1]";
    if (n.kind == Node::Kind::seq) {
        for (const auto& g : n.seq) {
            gpus.push_back(r.integer(g, path, 0, 63));
        }
    } else if (n.kind == Node::Kind::scalar) {
        for (const auto& part : split(n.scalar, ',')) {
            const auto v = parse_int(trim(part));
            if (!v || *v < 0 || *v > 63) {
                fail(n.pos, "'" + path + "' must be " + expected + "; got '" + n.scalar + "'");
            }
            gpus.push_back(static_cast<int>(*v));
        }
    } else {
        fail(n.pos, "'" + path + "' must be " + expected + "; got " + kind_name(n));
    }
    return gpus;
}

MigSpec read_mig(const Reader& r, const Node& n) {
    r.expect_map(n, "mig", {"mode", "layout"});
    MigSpec m;
    if (const auto* v = get(n, "mode")) {
        m.enabled = r.one_of(*v, "mig.mode", {"enabled", "disabled"}) == "enabled";
    }
    const auto* layout = get(n, "layout");
    if (layout != nullptr && layout->kind == Node::Kind::map) {
        for (const auto& [key, value] : layout->map) {
            const std::string path = "mig.layout." + key;
            MigLayoutEntry e;
            e.pos = value.key_pos;
            Node key_node;
            key_node.kind = Node::Kind::scalar;
            key_node.scalar = key;
            key_node.pos = value.key_pos;
            e.gpus = read_mig_gpus(r, key_node, path, e.all);
            e.devices = read_mig_devices(r, value, path);
            check_mig_entry(r, e, value, path);
            m.layout.push_back(std::move(e));
        }
    } else if (layout != nullptr && layout->kind == Node::Kind::seq) {
        for (std::size_t i = 0; i < layout->seq.size(); ++i) {
            const auto& entry = layout->seq[i];
            const std::string path = "mig.layout[" + std::to_string(i) + "]";
            r.expect_map(entry, path, {"devices", "mig-enabled", "mig-devices"});
            MigLayoutEntry e;
            e.pos = entry.pos;
            e.gpus = read_mig_gpus(r, r.required(entry, path, "devices"), path + ".devices", e.all);
            if (const auto* v = get(entry, "mig-enabled")) {
                e.mig_enabled = r.boolean(*v, path + ".mig-enabled");
            }
            if (const auto* v = get(entry, "mig-devices")) {
                e.devices = read_mig_devices(r, *v, path + ".mig-devices");
                if (!e.mig_enabled && !e.devices.empty()) {
                    fail(v->pos, "'" + path + ".mig-devices' needs mig-enabled: true");
                }
                check_mig_entry(r, e, *v, path + ".mig-devices");
            }
            m.layout.push_back(std::move(e));
        }
    } else if (layout != nullptr && layout->kind != Node::Kind::null) {
        fail(layout->pos, "'mig.layout' must map GPUs to MIG profiles ({all: [1g.10gb x7]}) or "
                          "be mig-parted's list of {devices, mig-enabled, mig-devices}; got " +
                              kind_name(*layout));
    }
    if (!m.enabled && !m.layout.empty()) {
        fail(layout->pos, "'mig.layout' needs mig.mode: enabled (mode disabled turns MIG off on "
                          "every GPU)");
    }
    return m;
}

KubernetesSpec read_kubernetes(const Reader& r, const Node& n) {
    r.expect_map(n, "kubernetes", {"node", "runtime_class"});
    KubernetesSpec k;
    if (const auto* v = get(n, "node")) {
        k.node = r.boolean(*v, "kubernetes.node");
    }
    if (const auto* v = get(n, "runtime_class")) {
        k.runtime_class = r.one_of(*v, "kubernetes.runtime_class", {"default", "nvidia"});
    }
    return k;
}

FabricSpec read_fabric(const Reader& r, const Node& n) {
    r.expect_map(n, "fabric", {"imex", "imex_nodes"});
    FabricSpec f;
    if (const auto* v = get(n, "imex")) {
        f.imex = r.boolean(*v, "fabric.imex");
    }
    const auto* nodes = get(n, "imex_nodes");
    if (nodes == nullptr) {
        return f;
    }
    if (nodes->kind != Node::Kind::seq || nodes->seq.empty()) {
        fail(nodes->pos, "'fabric.imex_nodes' must be a non-empty list of the IMEX domain's node "
                         "addresses, this node's included, such as [10.0.0.11, 10.0.0.12]; got " +
                             kind_name(*nodes));
    }
    if (!f.imex) {
        fail(nodes->key_pos, "'fabric.imex_nodes' needs 'fabric.imex: true' (the node list is "
                             "IMEX's /etc/nvidia-imex/nodes_config.cfg)");
    }
    for (std::size_t i = 0; i < nodes->seq.size(); ++i) {
        const auto& e = nodes->seq[i];
        const auto path = "fabric.imex_nodes[" + std::to_string(i) + "]";
        auto address = r.scalar(e, path, "an IP address or host name");
        check_node_address(address, e.pos, path);
        if (std::find(f.imex_nodes.begin(), f.imex_nodes.end(), address) != f.imex_nodes.end()) {
            fail(e.pos, "'" + path + "' repeats '" + address +
                            "'; name each node once (every node of the domain must hold the same "
                            "list: IMEX compares its node map with each peer's)");
        }
        f.imex_nodes.push_back(std::move(address));
    }
    return f;
}

InfinibandSpec read_infiniband(const Reader& r, const Node& n) {
    r.expect_map(n, "infiniband",
                 {"required", "min_active_ports", "min_rate_gbps", "gpudirect_rdma", "nccl_conf"});
    InfinibandSpec ib;
    if (const auto* v = get(n, "required")) {
        ib.required = r.boolean(*v, "infiniband.required");
    }
    if (const auto* v = get(n, "min_active_ports")) {
        ib.min_active_ports = r.integer(*v, "infiniband.min_active_ports", 0, 64);
    }
    if (const auto* v = get(n, "min_rate_gbps")) {
        // 2.5 (1X SDR) .. 1600 (8X XDR) Gb/s are the rates the kernel prints.
        ib.min_rate_gbps = r.integer(*v, "infiniband.min_rate_gbps", 1, 3200);
    }
    if (const auto* v = get(n, "gpudirect_rdma")) {
        const auto mode =
            r.one_of(*v, "infiniband.gpudirect_rdma", {"auto", "dmabuf", "peermem", "false"});
        ib.gpudirect_rdma = mode == "auto"      ? GpuDirectMode::automatic
                            : mode == "dmabuf"  ? GpuDirectMode::dmabuf
                            : mode == "peermem" ? GpuDirectMode::peermem
                                                : GpuDirectMode::off;
    }
    if (const auto* v = get(n, "nccl_conf")) {
        ib.nccl_conf = r.boolean(*v, "infiniband.nccl_conf");
    }
    return ib;
}

MonitoringSpec read_monitoring(const Reader& r, const Node& n) {
    r.expect_map(n, "monitoring",
                 {"textfile_dir", "temperature_alert_c", "node_exporter", "dcgm", "dcgm_exporter"});
    MonitoringSpec m;
    if (const auto* v = get(n, "textfile_dir")) {
        m.textfile_dir = r.scalar(*v, "monitoring.textfile_dir", "an absolute directory path");
        check_abs_path(m.textfile_dir, v->pos, "monitoring.textfile_dir");
    }
    if (const auto* v = get(n, "temperature_alert_c")) {
        m.temperature_alert_c = r.integer(*v, "monitoring.temperature_alert_c", 30, 120);
    }
    if (const auto* v = get(n, "node_exporter")) {
        m.node_exporter = r.boolean(*v, "monitoring.node_exporter");
    }
    if (const auto* v = get(n, "dcgm")) {
        m.dcgm = r.boolean(*v, "monitoring.dcgm");
    }
    if (const auto* v = get(n, "dcgm_exporter")) {
        m.dcgm_exporter = r.boolean(*v, "monitoring.dcgm_exporter");
        // The exporter reads every metric from DCGM's host engine; without it there is nothing
        // to export (dcgm-exporter README: it "uses DCGM to collect GPU telemetry").
        if (m.dcgm_exporter && !m.dcgm) {
            fail(v->pos, "'monitoring.dcgm_exporter: true' needs 'monitoring.dcgm: true': "
                         "dcgm-exporter reads its metrics from DCGM's host engine, which the dcgm "
                         "step installs");
        }
    }
    return m;
}

FrameworkSpec read_framework(const Reader& r, const Node& n) {
    r.expect_map(n, "framework", {"pytorch", "venv"});
    FrameworkSpec f;
    const auto& v = r.required(n, "framework", "pytorch");
    f.pytorch = r.safe(v, "framework.pytorch", "\"2\", \"2.x\" or \"2.4\"");
    // "2", "2.x" or "2.4": the existing digit helpers, with "x" standing for any minor.
    const bool major_only = !f.pytorch.empty() && matches(f.pytorch, is_digit);
    const bool any_minor = f.pytorch.size() > 2 && f.pytorch.substr(f.pytorch.size() - 2) == ".x" &&
                           matches(f.pytorch.substr(0, f.pytorch.size() - 2), is_digit);
    if (!major_only && !any_minor && !is_major_minor(f.pytorch)) {
        fail(v.pos, "'framework.pytorch' must be a PyTorch major (\"2\" or \"2.x\") or "
                    "major.minor (\"2.4\"); got '" +
                        f.pytorch + "'");
    }
    if (const auto* p = get(n, "venv")) {
        f.venv = r.scalar(*p, "framework.venv", "an absolute directory path");
        check_abs_path(f.venv, p->pos, "framework.venv");
    }
    return f;
}

std::vector<std::string> read_skip(const Reader& r, const Node& n) {
    r.expect_map(n, "steps", {"skip"});
    std::vector<std::string> out;
    const auto* skip = get(n, "skip");
    if (skip == nullptr) {
        return out;
    }
    if (skip->kind != Node::Kind::seq) {
        fail(skip->pos, "'steps.skip' must be a list of step ids such as [monitoring]; got " +
                            kind_name(*skip));
    }
    for (std::size_t i = 0; i < skip->seq.size(); ++i) {
        out.push_back(r.one_of(skip->seq[i], "steps.skip[" + std::to_string(i) + "]", step_ids()));
    }
    return out;
}

void record_positions(const Node& n, const std::string& path,
                      std::map<std::string, SourcePos>& out) {
    // Scalars point at the value (what a plan-time error is about); containers at their key.
    if (!path.empty()) {
        out[path] = n.kind == Node::Kind::scalar ? n.pos : n.key_pos;
    }
    if (n.kind == Node::Kind::map) {
        for (const auto& [key, value] : n.map) {
            record_positions(value, join_path(path, key), out);
        }
    } else if (n.kind == Node::Kind::seq) {
        for (std::size_t i = 0; i < n.seq.size(); ++i) {
            record_positions(n.seq[i], path + "[" + std::to_string(i) + "]", out);
        }
    }
}

} // namespace

Profile build_profile(const Node& root, const Matrix& matrix) {
    const Reader r(matrix);
    r.expect_map(root, "", {"name",         "description", "extends",   "host",           "nouveau",
                            "repositories", "driver",      "cuda",      "cudnn",          "nccl",
                            "tensorrt",     "infiniband",  "container", "fabric_manager", "fabric",
                            "tuning",       "monitoring",  "framework", "kubernetes",     "steps",
                            "mig",          "readiness",   "bundle"});
    Profile p;
    p.source = root.pos.file;
    const auto& name = r.required(root, "", "name");
    p.name = r.safe(name, "name", "a profile name");
    if (p.name.size() > 63 || !matches(p.name, is_name_char) || p.name.front() == '-') {
        fail(name.pos, "'name' must be 1-63 characters of [a-z0-9-] not starting with '-' "
                       "(it names files and journal entries); got '" +
                           p.name + "'");
    }
    if (const auto* v = get(root, "description")) {
        p.description = r.scalar(*v, "description", "one line of text");
        check_one_line(p.description, v->pos, "description");
    }
    if (const auto* v = get(root, "host")) {
        p.host = read_host(r, *v);
    }
    if (const auto* v = get(root, "nouveau")) {
        r.expect_map(*v, "nouveau", {"blacklist"});
        if (const auto* b = get(*v, "blacklist")) {
            p.nouveau_blacklist = r.boolean(*b, "nouveau.blacklist");
        }
    }
    if (const auto* v = get(root, "repositories")) {
        p.repositories = read_repositories(r, *v);
    }
    if (const auto* v = get(root, "driver")) {
        p.driver = read_driver(r, *v);
    }
    if (const auto* v = get(root, "cuda")) {
        p.cuda = read_cuda(r, *v);
    }
    if (const auto* v = get(root, "cudnn")) {
        p.cudnn = read_cudnn(r, *v);
    }
    if (const auto* v = get(root, "nccl")) {
        p.nccl = r.boolean(*v, "nccl");
    }
    if (const auto* v = get(root, "tensorrt")) {
        p.tensorrt = read_tensorrt(r, *v);
    }
    if (const auto* v = get(root, "infiniband")) {
        p.infiniband = read_infiniband(r, *v);
    }
    if (const auto* v = get(root, "container")) {
        p.container = read_container(r, *v);
        if (p.container->engine == "docker-ce" && p.repositories.count(kDockerRepoName) == 0) {
            // Docker's own repository for the host's distro, key from the matrix
            // (resolve_host_repo); repositories.docker overrides it with a mirror.
            p.repositories.emplace(
                kDockerRepoName,
                RepositorySpec{.name = kDockerRepoName, .url = std::string(kDockerRepoRoot)});
        }
    }
    if (const auto* v = get(root, "fabric_manager")) {
        const auto mode = r.one_of(*v, "fabric_manager", {"auto", "true", "false"});
        p.fabric_manager = mode == "auto"   ? FabricManagerMode::automatic
                           : mode == "true" ? FabricManagerMode::enabled
                                            : FabricManagerMode::disabled;
    }
    if (const auto* v = get(root, "fabric")) {
        p.fabric = read_fabric(r, *v);
    }
    if (const auto* v = get(root, "tuning")) {
        r.expect_map(*v, "tuning", {"persistence_mode"});
        if (const auto* b = get(*v, "persistence_mode")) {
            p.tuning.persistence_mode = r.boolean(*b, "tuning.persistence_mode");
        }
    }
    if (const auto* v = get(root, "mig")) {
        p.mig = read_mig(r, *v);
    }
    if (const auto* v = get(root, "readiness")) {
        r.expect_map(*v, "readiness", {"gate", "timeout_s"});
        ReadinessSpec spec;
        if (const auto* t = get(*v, "timeout_s")) {
            spec.timeout_s = r.integer(*t, "readiness.timeout_s", 10, 24 * 3600);
        }
        const auto* gate = get(*v, "gate");
        if (gate == nullptr || r.boolean(*gate, "readiness.gate")) {
            p.readiness = spec;
        }
    }
    if (const auto* v = get(root, "bundle")) {
        r.expect_map(*v, "bundle", {"key_fingerprint"});
        const auto& fpr = r.required(*v, "bundle", "key_fingerprint");
        p.bundle_key = normalise_fingerprint(
            r.scalar(fpr, "bundle.key_fingerprint", "a 40-hex-digit key fingerprint"), fpr.pos,
            "bundle.key_fingerprint");
    }
    if (const auto* v = get(root, "monitoring")) {
        p.monitoring = read_monitoring(r, *v);
    }
    if (const auto* v = get(root, "framework")) {
        p.framework = read_framework(r, *v);
    }
    if (const auto* v = get(root, "kubernetes")) {
        p.kubernetes = read_kubernetes(r, *v);
    }
    if (const auto* v = get(root, "steps")) {
        p.skip_steps = read_skip(r, *v);
    }
    record_positions(root, "", p.positions);
    return p;
}

} // namespace gpuprov::profile_detail
