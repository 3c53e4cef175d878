// Which kernel the boot loader boots next: GRUB's grub.cfg and grubenv (Debian, Ubuntu), BLS
// entries with grubby (EL 8+), else the newest installed kernel, and the forecast says so.
#include <algorithm>
#include <gpuprov/forecast.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/version.hpp>

namespace gpuprov {

namespace {

constexpr const char* kGrubEnv = "/boot/grub/grubenv";
constexpr const char* kGrub2Env = "/boot/grub2/grubenv";
constexpr const char* kGrubCfg = "/boot/grub/grub.cfg";
constexpr const char* kGrub2Cfg = "/boot/grub2/grub.cfg";
constexpr const char* kBlsDir = "/boot/loader/entries";

/// The quoted words of a grub.cfg line, in order ('...' or "...").
std::vector<std::string> quoted_words(std::string_view line) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char q = line[i];
        if (q != '\'' && q != '"') {
            continue;
        }
        const auto end = line.find(q, i + 1);
        if (end == std::string_view::npos) {
            break;
        }
        out.emplace_back(line.substr(i + 1, end - i - 1));
        i = end;
    }
    return out;
}

struct MenuNode {
    std::string title;
    std::string id;
    std::string kernel;
    bool submenu = false;
    std::vector<MenuNode> children;
};

/// grub.cfg's menu as a tree: menuentry and submenu blocks, each closed by a line "}".
std::vector<MenuNode> parse_menu(std::string_view cfg) {
    std::vector<MenuNode> top;
    std::vector<MenuNode*> stack;    // the open blocks that are menu nodes
    std::vector<bool> block_is_node; // every open "{" block, node or not (if/function)
    for (const auto& raw : lines(cfg)) {
        const auto line = trim(raw);
        const bool entry = starts_with(line, "menuentry ") || starts_with(line, "submenu ");
        if (entry && !line.empty() && line.back() == '{') {
            MenuNode n;
            n.submenu = starts_with(line, "submenu ");
            const auto words = quoted_words(line);
            if (!words.empty()) {
                n.title = words.front();
            }
            if (const auto at = line.find("$menuentry_id_option"); at != std::string_view::npos) {
                const auto ids = quoted_words(line.substr(at));
                if (!ids.empty()) {
                    n.id = ids.front();
                }
            }
            auto& list = stack.empty() ? top : stack.back()->children;
            list.push_back(std::move(n));
            stack.push_back(&list.back());
            block_is_node.push_back(true);
            continue;
        }
        if (line == "}") {
            if (!block_is_node.empty()) {
                if (block_is_node.back() && !stack.empty()) {
                    stack.pop_back();
                }
                block_is_node.pop_back();
            }
            continue;
        }
        if (!line.empty() && line.back() == '{') {
            block_is_node.push_back(false); // a function or other braced block
            continue;
        }
        if (!stack.empty() && !stack.back()->submenu && stack.back()->kernel.empty()) {
            const auto words = split(line, ' ');
            std::vector<std::string> w;
            for (const auto& x : words) {
                for (const auto& y : split(x, '\t')) {
                    if (!y.empty()) {
                        w.push_back(y);
                    }
                }
            }
            if (w.size() >= 2 && (w[0] == "linux" || w[0] == "linuxefi" || w[0] == "linux16")) {
                stack.back()->kernel = kernel_of_image(w[1]);
            }
        }
    }
    return top;
}

const MenuNode* pick(const std::vector<MenuNode>& level, std::string_view part) {
    const auto p = std::string(trim(part));
    // An index (bounded: a menu has few entries, and stoul must not overflow).
    if (!p.empty() && p.size() <= 4 &&
        std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const auto i = std::stoul(p);
        return i < level.size() ? &level[i] : nullptr;
    }
    for (const auto& n : level) {
        if (n.id == p || n.title == p) {
            return &n;
        }
    }
    return nullptr;
}

std::optional<std::string> first_file(const System& sys, std::initializer_list<const char*> paths) {
    for (const auto* p : paths) {
        if (auto text = sys.read_file(p)) {
            return text;
        }
    }
    return std::nullopt;
}

/// BLS: the entry file grubenv's saved_entry names, its `linux` line.
std::string bls_kernel(const System& sys, const std::string& entry) {
    const auto text = sys.read_file(std::string(kBlsDir) + "/" + entry + ".conf");
    if (!text) {
        return "";
    }
    for (const auto& l : lines(*text)) {
        const auto t = trim(l);
        if (starts_with(t, "linux ") || starts_with(t, "linux\t")) {
            return kernel_of_image(trim(t.substr(5)));
        }
    }
    return "";
}

} // namespace

std::optional<std::string> grubenv_value(std::string_view grubenv, std::string_view key) {
    for (const auto& l : lines(grubenv)) {
        if (starts_with(l, "#")) {
            continue;
        }
        const auto eq = l.find('=');
        if (eq != std::string::npos && std::string_view(l).substr(0, eq) == key) {
            return l.substr(eq + 1);
        }
    }
    return std::nullopt;
}

std::string grub_cfg_default(std::string_view grub_cfg) {
    std::string value;
    for (const auto& raw : lines(grub_cfg)) {
        const auto line = trim(raw);
        if (!starts_with(line, "set default=")) {
            continue;
        }
        auto v = std::string(line.substr(12));
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
            v = v.substr(1, v.size() - 2);
        }
        // update-grub's preamble sets default to ${next_entry} for grub-reboot; the caller
        // reads grubenv's next_entry itself.
        if (v != "${next_entry}") {
            value = v;
        }
    }
    return value;
}

std::string grub_cfg_entry_kernel(std::string_view grub_cfg, std::string_view selector) {
    const auto menu = parse_menu(grub_cfg);
    const std::vector<MenuNode>* level = &menu;
    const MenuNode* node = nullptr;
    for (const auto& part : split(selector, '>')) {
        if (level == nullptr) {
            return "";
        }
        node = pick(*level, part);
        if (node == nullptr) {
            return "";
        }
        level = &node->children;
    }
    // A submenu alone boots its first entry.
    while (node != nullptr && node->submenu && !node->children.empty()) {
        node = &node->children.front();
    }
    return node != nullptr ? node->kernel : "";
}

std::string kernel_of_image(std::string_view path) {
    const auto slash = path.rfind('/');
    auto name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const auto space = name.find_first_of(" \t");
    name = name.substr(0, space);
    if (!starts_with(name, "vmlinuz-")) {
        return "";
    }
    return std::string(name.substr(8));
}

bool kernel_older(std::string_view a, std::string_view b) {
    return compare_deb_versions(a, b) < 0;
}

BootDefault boot_default(const System& sys, const std::vector<std::string>& installed) {
    BootDefault out;
    const auto env = first_file(sys, {kGrubEnv, kGrub2Env});
    if (const auto cfg = first_file(sys, {kGrubCfg, kGrub2Cfg})) {
        std::string selector;
        std::string source;
        if (env) {
            if (auto next = grubenv_value(*env, "next_entry"); next && !next->empty()) {
                selector = *next;
                source = "grubenv next_entry (grub-reboot)";
            }
        }
        if (selector.empty()) {
            selector = grub_cfg_default(*cfg);
            source = "grub.cfg set default=\"" + selector + "\"";
            if (selector == "${saved_entry}") {
                selector = env ? grubenv_value(*env, "saved_entry").value_or("") : "";
                source = "grubenv saved_entry \"" + selector + "\"";
                if (selector.empty()) {
                    selector = "0"; // GRUB boots the first entry when saved_entry is unset
                }
            }
        }
        if (selector.empty()) {
            selector = "0";
        }
        if (auto k = grub_cfg_entry_kernel(*cfg, selector); !k.empty()) {
            out.kernel = std::move(k);
            out.source = source;
            return out;
        }
        // BLS configurations (EL) have no menuentry lines: the entry is a file.
        if (auto k = bls_kernel(sys, selector); !k.empty()) {
            out.kernel = std::move(k);
            out.source = "BLS entry " + selector + " (" + source + ")";
            return out;
        }
    }
    if (sys.exists("/usr/sbin/grubby") || sys.exists("/sbin/grubby")) {
        const auto r = sys.query({.argv = {"grubby", "--default-kernel"}, .timeout = 30s});
        if (r.ok()) {
            if (auto k = kernel_of_image(trim(r.out)); !k.empty()) {
                out.kernel = std::move(k);
                out.source = "grubby --default-kernel";
                return out;
            }
        }
    }
    if (!installed.empty()) {
        out.kernel = *std::max_element(
            installed.begin(), installed.end(),
            [](const std::string& a, const std::string& b) { return kernel_older(a, b); });
        out.fallback = true;
        out.source = "the newest installed kernel (no boot loader default could be read)";
    }
    return out;
}

} // namespace gpuprov
