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

ProfileError::ProfileError(std::string file, int line, int col, const std::string& message)
    : Error(fmt::format("{}:{}:{}: {}", file, line, col, message)), m_file(std::move(file)),
      m_line(line), m_col(col), m_message(message) {}

} // namespace gpuprov
