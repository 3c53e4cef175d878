#pragma once
// Small string helpers shared by the parsers. All are pure functions.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

[[nodiscard]] std::string_view trim(std::string_view s);
[[nodiscard]] std::vector<std::string> split(std::string_view s, char sep);
/// Splits into lines; a trailing newline does not yield an empty last line.
[[nodiscard]] std::vector<std::string> lines(std::string_view s);
[[nodiscard]] bool starts_with(std::string_view s, std::string_view prefix);
[[nodiscard]] std::string to_lower(std::string_view s);
[[nodiscard]] std::string to_upper(std::string_view s);
[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view sep);
[[nodiscard]] std::optional<long long> parse_int(std::string_view s);
/// parse_int for a value that must fit an int (a GPU index, a link number, an error code): one
/// outside int's range is no value, never a wrapped one.
[[nodiscard]] std::optional<int> parse_int32(std::string_view s);
[[nodiscard]] std::optional<double> parse_double(std::string_view s);
/// Last `max_lines` lines of a command's output, for error messages.
[[nodiscard]] std::string tail_lines(std::string_view s, std::size_t max_lines);
/// Every line of `text` with `prefix` in front, each ending in a newline.
[[nodiscard]] std::string indent_lines(std::string_view text, std::string_view prefix);
/// Replaces every occurrence of `from` with `to`.
[[nodiscard]] std::string replace_all(std::string s, std::string_view from, std::string_view to);

/// Levenshtein distance: insertions, deletions and substitutions turning `a` into `b`.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);
/// The entry of `known` nearest to `word` (case-insensitive) when it is close enough to be a
/// typo of it (at most a third of the word, and at least 2, edits away); empty otherwise. For
/// "did you mean" hints.
[[nodiscard]] std::string nearest(std::string_view word, const std::vector<std::string>& known);

} // namespace gpuprov
