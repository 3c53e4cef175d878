#pragma once
#include <gpuprov/profile.hpp>
#include <string>

namespace gpuprov::cli {

/// A built-in name stays as it is; a file path becomes absolute, so the journal and the resume
/// unit still find it from another working directory.
[[nodiscard]] std::string canonical_profile_arg(const std::string& arg);
[[nodiscard]] bool is_builtin_profile(const std::string& name);

} // namespace gpuprov::cli
