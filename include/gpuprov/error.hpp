#pragma once
// One exception hierarchy for "cannot continue" conditions. Anticipated outcomes (a step that is
// blocked, satisfied or needs a reboot) are values, never exceptions.
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprov {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
    /// Adds a line of context ("while applying step 'driver'") as the error travels up.
    void add_context(std::string line) { m_context.push_back(std::move(line)); }
    [[nodiscard]] const std::vector<std::string>& context() const { return m_context; }
    /// what() followed by the context lines, innermost first.
    [[nodiscard]] std::string describe() const;

private:
    std::vector<std::string> m_context;
};

/// A profile that does not parse or validate. what() is "file:line:col: message".
class ProfileError : public Error {
public:
    ProfileError(std::string file, int line, int col, const std::string& message);
    [[nodiscard]] const std::string& file() const { return m_file; }
    [[nodiscard]] int line() const { return m_line; }
    [[nodiscard]] int col() const { return m_col; }
    [[nodiscard]] const std::string& message() const { return m_message; }

private:
    std::string m_file;
    int m_line;
    int m_col;
    std::string m_message;
};

/// The host is not in a state gpuprov can work with (not root, lock held, unreadable file).
class HostError : public Error {
public:
    using Error::Error;
};

/// A command that had to succeed did not. what() names the argv, exit code and stderr tail.
class CommandError : public Error {
public:
    using Error::Error;
};

/// A download failed after its retries. what() names the URL and the HTTP status or curl error.
class NetworkError : public Error {
public:
    using Error::Error;
};

/// Bad command-line usage (unknown step id in --only, and so on).
class UsageError : public Error {
public:
    using Error::Error;
};

/// A programming error: a broken invariant inside gpuprov, never the user's fault.
class BugError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

} // namespace gpuprov
