#include "child_env.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuprov::detail {

namespace {

// Passed on because they change how a command talks, not what it does: the locale and terminal
// (messages, progress), the time zone (timestamps in logs), the proxies apt and curl need on
// networks that only reach a mirror through one (both spellings: apt reads the lower-case ones,
// other tools the upper-case), and SOURCE_DATE_EPOCH, which image builders set so that
// update-initramfs and friends produce reproducible files. Everything else is dropped on
// purpose: APT_CONFIG, DEBIAN_FRONTEND or DPKG_* would make apt do something the plan did not
// show, LD_* and BASH_ENV would run foreign code in root's children, TMPDIR could point root at
// a directory another user controls. Callers that need a variable set it in Command::env.
constexpr const char* kInherited[] = {
    "LANG",        "LANGUAGE",  "TERM",     "TZ",        "http_proxy",
    "https_proxy", "ftp_proxy", "no_proxy", "all_proxy", "HTTP_PROXY",
    "HTTPS_PROXY", "FTP_PROXY", "NO_PROXY", "ALL_PROXY", "SOURCE_DATE_EPOCH"};

std::string root_home() {
    // getpwuid is not thread-safe; getpwuid_r with a stack buffer is.
    struct passwd pw {};
    struct passwd* found = nullptr;
    char buf[4096];
    if (::getpwuid_r(0, &pw, buf, sizeof buf, &found) == 0 && found != nullptr &&
        found->pw_dir != nullptr && found->pw_dir[0] == '/') {
        return found->pw_dir;
    }
    return "/root";
}

std::string_view name_of(std::string_view entry) {
    return entry.substr(0, entry.find('='));
}

} // namespace

bool inherited_by_children(const std::string& name) {
    if (name.rfind("LC_", 0) == 0) {
        return true; // LC_ALL, LC_MESSAGES, ...
    }
    for (const char* allowed : kInherited) {
        if (name == allowed) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> child_environment(const Command& cmd,
                                           const std::vector<std::string>& parent, unsigned euid) {
    std::vector<std::string> env;
    const auto set_by_caller = [&](std::string_view name) {
        return cmd.env.count(std::string(name)) != 0;
    };
    if (!set_by_caller("PATH")) {
        env.push_back(std::string("PATH=") + kChildPath);
    }
    if (!set_by_caller("HOME")) {
        // Root's own home, as `sudo` gives it: a root child (gpg, debconf, dkms) must not write
        // root-owned files into the invoking user's home after `sudo -E` or `su`.
        if (euid == 0) {
            env.push_back("HOME=" + root_home());
        } else {
            for (const auto& entry : parent) {
                if (name_of(entry) == "HOME") {
                    env.push_back(entry);
                }
            }
        }
    }
    for (const auto& entry : parent) {
        const std::string name(name_of(entry));
        if (inherited_by_children(name) && !set_by_caller(name)) {
            env.push_back(entry);
        }
    }
    for (const auto& [k, v] : cmd.env) {
        env.push_back(k + "=" + v);
    }
    return env;
}

std::string find_executable(const std::string& name, const std::vector<std::string>& env) {
    if (name.empty()) {
        return {};
    }
    if (name.find('/') != std::string::npos) {
        return name;
    }
    std::string path;
    for (const auto& entry : env) {
        if (entry.rfind("PATH=", 0) == 0) {
            path = entry.substr(5);
        }
    }
    std::size_t start = 0;
    while (start <= path.size()) {
        auto end = path.find(':', start);
        if (end == std::string::npos) {
            end = path.size();
        }
        const auto dir = path.substr(start, end - start);
        start = end + 1;
        if (dir.empty() || dir[0] != '/') {
            continue; // "" and relative entries mean the current directory: never for gpuprov
        }
        auto candidate = dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::eaccess(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

} // namespace gpuprov::detail
