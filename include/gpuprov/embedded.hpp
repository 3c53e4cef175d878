#pragma once
// Files compiled into the binary (built-in profiles, the NVIDIA version matrix).
#include <string_view>
#include <vector>

namespace gpuprov {

struct EmbeddedFile {
    std::string_view name; ///< file name without directory, e.g. "cv-train.yaml"
    std::string_view content;
};

} // namespace gpuprov
