#pragma once
// In-memory System for unit tests: files from a map or a fixture tree, scripted command and
// URL results, and a record of everything that ran or was written. An unscripted command fails
// the test and names its argv.
#include <functional>
#include <gpuprov/system.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpuprov::testing {

/// Absolute path of tests/fixtures/<rel>.
std::filesystem::path fixture_path(const std::string& rel);
/// Contents of tests/fixtures/<rel>; fails the test when missing.
std::string read_fixture(const std::string& rel);

class FakeSystem : public System {
public:
    FakeSystem();

    // ---- set-up ----
    void add_file(const std::string& path, std::string content);
    /// Copies every file under tests/fixtures/<rel> into the fake at the same relative paths
    /// (so fixtures/os/ubuntu-22.04/etc/os-release becomes /etc/os-release).
    void load_tree(const std::string& rel);
    void add_dir(const std::string& path);
    /// Files get the fake clock's time when written; this back- or post-dates one.
    void set_mtime(const std::string& path, std::chrono::system_clock::time_point when);
    void add_link(const std::string& path, const std::string& target);
    /// Owner and permission bits lstat() reports for a file, directory or link (no type bits).
    void set_owner(const std::string& path, unsigned uid, unsigned gid = 0);
    void set_mode(const std::string& path, unsigned mode);
    /// The result for an exact argv. Later calls replace earlier ones.
    void on_command(std::vector<std::string> argv, CommandResult result);
    /// A handler for every argv starting with `prefix`; exact matches win.
    void on_command_prefix(std::vector<std::string> prefix,
                           std::function<CommandResult(const Command&)> handler);
    void on_url(const std::string& url, FetchResult result);
    void set_env(const std::string& name, std::string value);
    void set_uid(unsigned uid) { m_uid = uid; }
    void set_machine(std::string m) { m_machine = std::move(m); }
    void set_interactive(bool v) { m_interactive = v; }
    void set_disk(DiskSpace d) { m_disk = d; }
    /// Space of the filesystem at `mount` (the longest registered mount holding a path wins;
    /// paths under none get set_disk's).
    void set_disk(const std::string& mount, DiskSpace d) { m_disks[mount] = d; }
    void hold_lock(const std::string& path) { m_held_locks.insert(path); }
    /// Makes lock_holder(path) report `pid` for the next `polls` calls, then free.
    void set_lock_holder(const std::string& path, int pid, int polls) {
        m_lock_holders[path] = {pid, polls};
    }

    // ---- what happened ----
    std::vector<std::vector<std::string>> commands_ran;    ///< run() calls, in order
    mutable std::vector<std::vector<std::string>> queries; ///< query() calls, in order
    /// Every query() and run() call in full (cwd, log_output, ...), in order.
    mutable std::vector<Command> commands_seen;
    std::vector<std::string> files_written;      ///< write_file_atomic paths, in order
    mutable std::vector<std::string> files_read; ///< read_file paths, as asked, in order
    std::vector<std::string> files_removed;
    mutable std::vector<std::string> urls_fetched;
    mutable std::chrono::milliseconds slept{0};
    /// Called by sleep() after the clock advanced (a signal that arrives while gpuprov waits).
    std::function<void()> on_sleep;
    [[nodiscard]] std::optional<std::string> file(const std::string& path) const;
    [[nodiscard]] unsigned mode_of(const std::string& path) const;

    // ---- System ----
    [[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path&) const override;
    [[nodiscard]] std::vector<std::string> list_dir(const std::filesystem::path&) const override;
    [[nodiscard]] bool exists(const std::filesystem::path&) const override;
    [[nodiscard]] bool is_dir(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<std::filesystem::path>
    read_link(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<DiskSpace> disk_space(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<FileStamp> stamp(const std::filesystem::path&) const override;
    /// Files, directories and links are root's (uid 0, gid 0) unless set_owner said otherwise;
    /// files have their written mode (0644 by default), directories 0755, links 0777.
    [[nodiscard]] std::optional<FileInfo> lstat(const std::filesystem::path&) const override;
    /// lstat() of what the links lead to, followed the way read_file() does.
    [[nodiscard]] std::optional<FileInfo> stat(const std::filesystem::path&) const override;
    /// read_file() of both compared; nullopt when either is missing.
    [[nodiscard]] std::optional<bool> same_content(const std::filesystem::path& a,
                                                   const std::filesystem::path& b) const override;
    /// Paths same_content() was asked about, in order (a plan must not compare when apply
    /// would not copy).
    mutable std::vector<std::string> compared;
    [[nodiscard]] CommandResult query(const Command&) const override;
    [[nodiscard]] FetchResult fetch(const FetchRequest&) const override;
    [[nodiscard]] std::optional<std::string> env(std::string_view name) const override;
    [[nodiscard]] std::chrono::system_clock::time_point now() const override;
    [[nodiscard]] unsigned effective_uid() const override { return m_uid; }
    [[nodiscard]] std::string machine() const override { return m_machine; }
    [[nodiscard]] bool interactive() const override { return m_interactive; }
    [[nodiscard]] std::optional<int> lock_holder(const std::filesystem::path&) const override;
    CommandResult run(const Command&) override;
    void write_file_atomic(const std::filesystem::path&, std::string_view content,
                           unsigned mode) override;
    void remove_file(const std::filesystem::path&) override;
    void make_dirs(const std::filesystem::path&) override;
    void make_symlink(const std::filesystem::path& target,
                      const std::filesystem::path& link) override;
    std::unique_ptr<FileLock> try_lock(const std::filesystem::path&) override;
    void sleep(std::chrono::milliseconds) const override;

private:
    [[nodiscard]] CommandResult answer(const Command&) const;
    /// The path with every link in its last component followed (at most 8 hops).
    [[nodiscard]] std::string follow(const std::filesystem::path&) const;
    std::map<std::string, std::string> m_files;
    std::map<std::string, unsigned> m_modes;
    std::map<std::string, std::pair<unsigned, unsigned>> m_owners; ///< uid, gid
    std::map<std::string, std::uint64_t> m_versions; ///< bumped on every write of a path
    std::map<std::string, std::int64_t> m_mtimes;    ///< ns since the epoch, by the fake clock
    std::set<std::string> m_dirs;
    std::map<std::string, std::string> m_links;
    std::map<std::vector<std::string>, CommandResult> m_commands;
    std::vector<std::pair<std::vector<std::string>, std::function<CommandResult(const Command&)>>>
        m_prefix_handlers;
    std::map<std::string, FetchResult> m_urls;
    std::map<std::string, std::string> m_env;
    std::set<std::string> m_held_locks;
    mutable std::map<std::string, std::pair<int, int>> m_lock_holders;
    unsigned m_uid = 0;
    std::string m_machine = "x86_64";
    bool m_interactive = false;
    std::optional<DiskSpace> m_disk;
    std::map<std::string, DiskSpace> m_disks;
    std::chrono::system_clock::time_point m_start;
};

} // namespace gpuprov::testing
