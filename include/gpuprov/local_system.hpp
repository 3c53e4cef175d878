#pragma once
#include <gpuprov/system.hpp>

namespace gpuprov {

/// The real host. Every path is resolved under `root` (default "/"), so `--root DIR` reads a
/// fixture tree or a mounted image. Commands run on the real host either way.
class LocalSystem final : public System {
public:
    explicit LocalSystem(std::filesystem::path root = "/");

    [[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path&) const override;
    [[nodiscard]] std::vector<std::string> list_dir(const std::filesystem::path&) const override;
    [[nodiscard]] bool exists(const std::filesystem::path&) const override;
    [[nodiscard]] bool is_dir(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<std::filesystem::path>
    read_link(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<DiskSpace> disk_space(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<FileStamp> stamp(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<FileInfo> lstat(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<FileInfo> stat(const std::filesystem::path&) const override;
    [[nodiscard]] std::optional<bool> same_content(const std::filesystem::path& a,
                                                   const std::filesystem::path& b) const override;
    [[nodiscard]] CommandResult query(const Command&) const override;
    [[nodiscard]] FetchResult fetch(const FetchRequest&) const override;
    [[nodiscard]] std::optional<std::string> env(std::string_view name) const override;
    [[nodiscard]] std::chrono::system_clock::time_point now() const override;
    [[nodiscard]] unsigned effective_uid() const override;
    [[nodiscard]] std::string machine() const override;
    [[nodiscard]] bool interactive() const override;
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
    [[nodiscard]] std::filesystem::path resolve(const std::filesystem::path&) const;
    std::filesystem::path m_root;
};

} // namespace gpuprov
