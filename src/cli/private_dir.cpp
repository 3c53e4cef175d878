// Private temporary directories, made like mkdtemp(3): mode 0700 and a name nobody can guess,
// never a fixed shared path under /tmp.
#include "cli_common.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace gpuprov::cli {

PrivateTempDir::PrivateTempDir(const GlobalOptions& opts, const System& sys,
                               std::string_view prefix) {
    base = sys.env("TMPDIR").value_or("");
    if (base.empty() || base.front() != '/') {
        base = "/tmp";
    }
    const auto templ = std::filesystem::path(base) / (std::string(prefix) + "-XXXXXX");
    // Under --root the directory is made inside the root, and `path` names it as the System
    // (which resolves paths under the root) sees it.
    auto host = opts.root.empty() || opts.root == "/"
                    ? templ.string()
                    : (std::filesystem::path(opts.root) / templ.relative_path()).string();
    if (::mkdtemp(host.data()) == nullptr) {
        error = std::strerror(errno);
        return;
    }
    m_made = host;
    path = (std::filesystem::path(base) / std::filesystem::path(host).filename()).string();
}

PrivateTempDir::~PrivateTempDir() {
    if (!m_made.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(m_made, ec);
    }
}

} // namespace gpuprov::cli
