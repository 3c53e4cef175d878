#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/container_config.hpp>
#include <gpuprov/strings.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

std::string engine_daemon(const std::string& runtime) {
    return runtime == "docker" ? "dockerd" : runtime;
}

std::string installed_engine_daemon(const System& sys, const std::string& runtime) {
    const auto daemon = engine_daemon(runtime);
    // kChildPath's directories (src/system/child_env.hpp), in its order.
    for (const auto* dir :
         {"/usr/local/sbin/", "/usr/local/bin/", "/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"}) {
        if (sys.exists(dir + daemon)) {
            return dir + daemon;
        }
    }
    return {};
}

std::string daemon_json_error(std::string_view text) {
    if (trim(text).empty()) {
        return {};
    }
    try {
        const auto doc = nlohmann::json::parse(text);
        if (!doc.is_object()) {
            return fmt::format("the top level is {} {}, not an object", doc.is_array() ? "an" : "a",
                               doc.type_name());
        }
        return {};
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte counts from 1 and points at the character that broke the parse.
        const auto at = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        const auto head = text.substr(0, at);
        const auto line = 1 + std::count(head.begin(), head.end(), '\n');
        const auto nl = head.rfind('\n');
        const auto col = at - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
        return fmt::format("{}:{}: not valid JSON ({})", line, col, e.what());
    }
}

} // namespace gpuprov
