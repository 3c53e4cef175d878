// The block device behind a path: /proc/self/mountinfo names the mount and its source, /sys/block
// the whole disk, its size (512-byte sectors), whether it is an NVMe namespace (the kernel names
// them nvmeXnY) and whether it rotates. Device-mapper (LVM, LUKS) and md RAID are followed
// through slaves/ to the disks underneath.
#include <algorithm>
#include <gpuprov/facts.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/system.hpp>

namespace gpuprov {

namespace {

// mountinfo escapes space, tab, newline and backslash as \040 \011 \012 \134.
std::string unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            const auto digits = s.substr(i + 1, 3);
            if (digits.size() == 3 && std::all_of(digits.begin(), digits.end(),
                                                  [](char c) { return c >= '0' && c <= '7'; })) {
                out += static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 +
                                         (digits[2] - '0'));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

std::vector<std::string> fields_of(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    for (const char c : line) {
        if (c == ' ' || c == '\t') {
            if (!cur.empty()) {
                out.push_back(std::move(cur));
                cur.clear();
            }
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) {
        out.push_back(std::move(cur));
    }
    return out;
}

bool contains_path(const std::string& mount, const std::string& path) {
    if (mount == "/") {
        return starts_with(path, "/");
    }
    return path == mount || starts_with(path, mount + "/");
}

/// The whole disk in /sys/block that is `name` or holds partition `name`.
std::optional<std::string> whole_disk(const System& sys, const std::string& name) {
    if (sys.exists("/sys/block/" + name)) {
        return name;
    }
    for (const auto& disk : sys.list_dir("/sys/block")) {
        if (sys.exists("/sys/block/" + disk + "/" + name + "/partition")) {
            return disk;
        }
    }
    return std::nullopt;
}

/// A device-mapper name ("/dev/mapper/vg0-root") to its dm-N node.
std::optional<std::string> dm_node(const System& sys, const std::string& mapper_name) {
    for (const auto& disk : sys.list_dir("/sys/block")) {
        const auto name = sys.read_file("/sys/block/" + disk + "/dm/name");
        if (name && trim(*name) == mapper_name) {
            return disk;
        }
    }
    return std::nullopt;
}

/// Whole disks at the bottom of `disk` (itself, or its slaves' disks for dm/md), depth-limited.
void leaves(const System& sys, const std::string& disk, std::vector<std::string>& out, int depth) {
    const auto slaves = sys.list_dir("/sys/block/" + disk + "/slaves");
    if (slaves.empty() || depth > 4) {
        if (std::find(out.begin(), out.end(), disk) == out.end()) {
            out.push_back(disk);
        }
        return;
    }
    for (const auto& slave : slaves) {
        if (const auto parent = whole_disk(sys, slave)) {
            leaves(sys, *parent, out, depth + 1);
        }
    }
}

} // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view content) {
    // "36 35 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw"
    std::vector<MountEntry> out;
    for (const auto& line : lines(content)) {
        const auto fields = fields_of(line);
        const auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 3) {
            continue;
        }
        out.push_back({unescape(fields[4]), unescape(*(dash + 2)), *(dash + 1)});
    }
    return out;
}

std::optional<BlockDevice> block_device_for(const System& sys, const std::string& path) {
    const auto mountinfo = sys.read_file("/proc/self/mountinfo");
    if (!mountinfo) {
        return std::nullopt;
    }
    const MountEntry* best = nullptr;
    const auto mounts = parse_mountinfo(*mountinfo);
    for (const auto& m : mounts) {
        // Later lines mount over earlier ones at the same point.
        if (contains_path(m.mount_point, path) &&
            (best == nullptr || m.mount_point.size() >= best->mount_point.size())) {
            best = &m;
        }
    }
    if (best == nullptr || !starts_with(best->source, "/dev/")) {
        return std::nullopt;
    }
    BlockDevice dev{.mount_point = best->mount_point, .source = best->source};
    std::string name = best->source.substr(5);
    if (starts_with(name, "mapper/")) {
        const auto node = dm_node(sys, name.substr(7));
        if (!node) {
            return std::nullopt;
        }
        name = *node;
    }
    const auto disk = whole_disk(sys, name);
    if (!disk) {
        return std::nullopt;
    }
    leaves(sys, *disk, dev.disks, 0);
    dev.nvme = !dev.disks.empty();
    for (const auto& d : dev.disks) {
        dev.nvme = dev.nvme && starts_with(d, "nvme");
        if (const auto sectors = sys.read_file("/sys/block/" + d + "/size")) {
            if (const auto n = parse_int(trim(*sectors)); n && *n > 0) {
                const auto bytes = static_cast<std::uint64_t>(*n) * 512;
                dev.size_bytes = dev.size_bytes == 0 ? bytes : std::min(dev.size_bytes, bytes);
            }
        }
        if (const auto rot = sys.read_file("/sys/block/" + d + "/queue/rotational")) {
            const bool spins = trim(*rot) == "1";
            dev.rotational = dev.rotational.value_or(false) || spins;
        }
    }
    return dev;
}

} // namespace gpuprov
