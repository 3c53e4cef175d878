// Symlinks resolved through System, component by component, instead of by the kernel: an
// absolute link inside a --root tree (/usr/local/cuda -> /etc/alternatives/cuda) must resolve
// inside that tree, and FakeSystem only follows links it is asked about.
#include "detectors.hpp"

#include <deque>
#include <filesystem>

namespace gpuprov::facts_detail {

namespace fs = std::filesystem;

std::string resolve_path(const System& sys, const std::string& path) {
    // Generous for alternatives chains, small enough that a link loop ends quickly.
    constexpr int max_links = 16;
    int links = 0;
    std::deque<std::string> todo;
    for (const auto& part : fs::path(path).relative_path()) {
        todo.push_back(part.string());
    }
    fs::path resolved = "/";
    while (!todo.empty()) {
        const auto part = std::move(todo.front());
        todo.pop_front();
        if (part.empty() || part == ".") {
            continue;
        }
        if (part == "..") {
            resolved = resolved.parent_path();
            continue;
        }
        const auto candidate = resolved / part;
        const auto target = links < max_links ? sys.read_link(candidate) : std::nullopt;
        if (!target) {
            resolved = candidate;
            continue;
        }
        ++links;
        if (target->is_absolute()) {
            resolved = "/";
        }
        const auto rel = target->relative_path();
        todo.insert(todo.begin(), rel.begin(), rel.end());
    }
    return resolved.generic_string();
}

std::optional<std::string> link_target(const System& sys, const std::string& path) {
    if (!sys.read_link(path)) {
        return std::nullopt;
    }
    return resolve_path(sys, path);
}

std::optional<std::string> read_resolved(const System& sys, const std::string& path) {
    return sys.read_file(resolve_path(sys, path));
}

} // namespace gpuprov::facts_detail
