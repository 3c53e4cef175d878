#pragma once
// The built-in profiles' names, apart from gpuprov/profile.hpp so the few files that list them
// (the loader's messages, the shell completion) need nothing else.
#include <string>
#include <vector>

namespace gpuprov {

/// The built-in profiles' names, as a command line gives them ("cv-train"), in file order.
[[nodiscard]] std::vector<std::string> builtin_profile_names();

} // namespace gpuprov
