#pragma once
// apt sources other than gpuprov's own that name one of its repositories' URLs. NVIDIA's
// cuda-keyring package installs /usr/share/keyrings/cuda-archive-keyring.gpg and
// /etc/apt/sources.list.d/cuda-<distro>-<arch>.list with
// `deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] <url> /` (nvidia-facts.md §2.3);
// apt refuses every update ("Conflicting values set for option Signed-By") while two entries
// for one URL name different Signed-By values.
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov::pkg {

struct ForeignSource {
    std::string file;      ///< the .list or .sources file (or /etc/apt/sources.list)
    int line = 0;          ///< where the entry starts, 1-based
    std::string signed_by; ///< its Signed-By / signed-by= value; empty when it has none
    /// Options that weaken apt's checks of this source, as written ("trusted=yes",
    /// "Allow-Insecure: yes", "check-valid-until=no"; sources.list(5)): with any of them a
    /// pinned key checks nothing.
    std::vector<std::string> weakening;
};

/// The first enabled `deb` entry for `url` (compared with a trailing '/') in
/// /etc/apt/sources.list and /etc/apt/sources.list.d/*.list|*.sources, skipping `own_file`.
[[nodiscard]] std::optional<ForeignSource>
foreign_apt_source(const System& sys, const std::string& url, const std::string& own_file);

} // namespace gpuprov::pkg
