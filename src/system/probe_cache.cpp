#include <gpuprov/error.hpp>
#include <gpuprov/probe_cache.hpp>

namespace gpuprov {

namespace {

/// What makes two queries the same question: argv, the environment set on top, stdin and the
/// working directory (the deadline does not change the answer). NUL separates the parts: no
/// argv word, variable or path holds one.
std::string key_of(const Command& cmd) {
    std::string key;
    for (const auto& a : cmd.argv) {
        key += a;
        key += '\0';
    }
    key += '\1';
    for (const auto& [k, v] : cmd.env) {
        key += k + "=" + v;
        key += '\0';
    }
    key += '\1';
    key += cmd.stdin_data ? "1" + *cmd.stdin_data : "0";
    key += '\1';
    key += cmd.cwd.string();
    return key;
}

[[noreturn]] void refuse(const char* what) {
    throw BugError(std::string("a read-only verify tried to ") + what);
}

} // namespace

CommandResult ProbeCache::query(const Command& cmd) const {
    if (cmd.on_stdout) {
        return m_inner.query(cmd); // someone watches it run: run it
    }
    const auto key = key_of(cmd);
    {
        const std::lock_guard lock(m_mutex);
        if (const auto it = m_answers.find(key); it != m_answers.end()) {
            return it->second;
        }
    }
    auto result = m_inner.query(cmd);
    const std::lock_guard lock(m_mutex);
    return m_answers.emplace(key, std::move(result)).first->second;
}

CommandResult ProbeCache::run(const Command&) {
    refuse("run a command");
}
void ProbeCache::write_file_atomic(const std::filesystem::path&, std::string_view, unsigned) {
    refuse("write a file");
}
void ProbeCache::remove_file(const std::filesystem::path&) {
    refuse("remove a file");
}
void ProbeCache::make_dirs(const std::filesystem::path&) {
    refuse("make a directory");
}
void ProbeCache::make_symlink(const std::filesystem::path&, const std::filesystem::path&) {
    refuse("make a link");
}
std::unique_ptr<FileLock> ProbeCache::try_lock(const std::filesystem::path&) {
    refuse("take a lock");
}

} // namespace gpuprov
