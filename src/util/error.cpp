#include <fmt/format.h>
#include <gpuprov/error.hpp>

namespace gpuprov {

std::string Error::describe() const {
    std::string out = what();
    for (const auto& line : m_context) {
        out += "\n  ";
        out += line;
    }
    return out;
}

// Line 0 stands for the file as a whole (unreadable, no such built-in): "file: message".
ProfileError::ProfileError(std::string file, int line, int col, const std::string& message)
    // Line 0: the error is about the file as a whole (it cannot be read, no such built-in), so
    // no position is invented for it.
    : Error(line > 0 ? fmt::format("{}:{}:{}: {}", file, line, col, message)
                     : fmt::format("{}: {}", file, message)),
      m_file(std::move(file)), m_line(line), m_col(col), m_message(message) {}

} // namespace gpuprov
