#pragma once
// A read-only view of a System that runs each probe once: `gpuprov verify` asks every step for
// its checks, and the final step's checks repeat the driver's, CUDA's, cuDNN's probes (and
// several steps query nvidia-smi alike). Within one verify the host does not change, so an
// identical query (argv, environment, stdin, working directory) has the same answer.
#include <gpuprov/system.hpp>
#include <map>
#include <mutex>

namespace gpuprov {

class ProbeCache final : public System {
public:
    explicit ProbeCache(const System& inner) : m_inner(inner) {}

    [[nodiscard]] CommandResult query(const Command& cmd) const override;

    // Reads are forwarded as they are: file reads are cheap and logged nowhere.
    [[nodiscard]] std::optional<std::string>
    read_file(const std::filesystem::path& p) const override {
        return m_inner.read_file(p);
    }
    [[nodiscard]] std::vector<std::string> list_dir(const std::filesystem::path& p) const override {
        return m_inner.list_dir(p);
    }
    [[nodiscard]] bool exists(const std::filesystem::path& p) const override {
        return m_inner.exists(p);
    }
    [[nodiscard]] bool is_dir(const std::filesystem::path& p) const override {
        return m_inner.is_dir(p);
    }
    [[nodiscard]] std::optional<std::filesystem::path>
    read_link(const std::filesystem::path& p) const override {
        return m_inner.read_link(p);
    }
    [[nodiscard]] std::optional<DiskSpace>
    disk_space(const std::filesystem::path& p) const override {
        return m_inner.disk_space(p);
    }
    [[nodiscard]] std::optional<FileStamp> stamp(const std::filesystem::path& p) const override {
        return m_inner.stamp(p);
    }
    [[nodiscard]] std::optional<FileInfo> lstat(const std::filesystem::path& p) const override {
        return m_inner.lstat(p);
    }
    [[nodiscard]] std::optional<FileInfo> stat(const std::filesystem::path& p) const override {
        return m_inner.stat(p);
    }
    [[nodiscard]] std::optional<bool> same_content(const std::filesystem::path& a,
                                                   const std::filesystem::path& b) const override {
        return m_inner.same_content(a, b);
    }
    [[nodiscard]] FetchResult fetch(const FetchRequest& r) const override {
        return m_inner.fetch(r);
    }
    [[nodiscard]] std::optional<std::string> env(std::string_view name) const override {
        return m_inner.env(name);
    }
    [[nodiscard]] std::chrono::system_clock::time_point now() const override {
        return m_inner.now();
    }
    [[nodiscard]] unsigned effective_uid() const override { return m_inner.effective_uid(); }
    [[nodiscard]] std::string machine() const override { return m_inner.machine(); }
    [[nodiscard]] bool interactive() const override { return m_inner.interactive(); }
    [[nodiscard]] std::optional<int> lock_holder(const std::filesystem::path& p) const override {
        return m_inner.lock_holder(p);
    }
    void sleep(std::chrono::milliseconds d) const override { m_inner.sleep(d); }

    // Changes: a verify changes nothing, so reaching one is a bug in gpuprov (BugError).
    CommandResult run(const Command& cmd) override;
    void write_file_atomic(const std::filesystem::path&, std::string_view, unsigned) override;
    void remove_file(const std::filesystem::path&) override;
    void make_dirs(const std::filesystem::path&) override;
    void make_symlink(const std::filesystem::path&, const std::filesystem::path&) override;
    std::unique_ptr<FileLock> try_lock(const std::filesystem::path&) override;

private:
    const System& m_inner;
    mutable std::mutex m_mutex;
    mutable std::map<std::string, CommandResult> m_answers;
};

} // namespace gpuprov
