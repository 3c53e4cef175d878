#pragma once
// JSON text that never throws: host inputs (os-release, paths, a command's stderr) can hold
// bytes that are not UTF-8, and nlohmann's dump() aborts the process on them by default.
#include <nlohmann/json.hpp>
#include <string>

namespace gpuprov {

/// `j` serialized with invalid UTF-8 replaced by U+FFFD.
[[nodiscard]] inline std::string json_text(const nlohmann::json& j, int indent = 2) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace gpuprov
