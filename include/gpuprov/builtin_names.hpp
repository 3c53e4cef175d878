#pragma once
// The built-in profiles' names and texts, apart from gpuprov/profile.hpp so the few files that
// list or show them (the loader's messages, the shell completion, `profiles show`, the plan's
// profile digest) need nothing else.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// The built-in profiles' names, as a command line gives them ("cv-train"), in file order.
[[nodiscard]] std::vector<std::string> builtin_profile_names();

/// The text of the built-in profile a command line names ("cv-train"), as shipped; nullopt when
/// NAME is no built-in (then it is a file).
[[nodiscard]] std::optional<std::string_view> builtin_profile_text(std::string_view name);

} // namespace gpuprov
