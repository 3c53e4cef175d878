#pragma once
// Internals of the profile loader. yaml-cpp stays behind node.cpp: everything else works on
// Node, a plain tree that remembers which file and line each key and value came from, so that
// errors stay precise after `extends:` has merged several files.
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuprov::profile_detail {

struct Node {
    enum class Kind { null, scalar, map, seq };
    Kind kind = Kind::null;
    std::string scalar;
    std::vector<std::pair<std::string, Node>> map; ///< in file order; keys are unique
    std::vector<Node> seq;
    SourcePos pos;     ///< where the value starts
    SourcePos key_pos; ///< where its key starts (the value's own position at the root)

    // Defined in node.cpp, where Node is complete: clang with libstdc++ rejects implicit ones
    // (std::pair<std::string, Node> would be instantiated while Node is still incomplete).
    Node();
    ~Node();
    Node(const Node&);
    Node(Node&&) noexcept;
    Node& operator=(const Node&);
    Node& operator=(Node&&) noexcept;

    [[nodiscard]] const Node* find(std::string_view key) const;
    [[nodiscard]] Node* find(std::string_view key);
    [[nodiscard]] bool is_map() const { return kind == Kind::map; }
};

/// Parses one YAML document. Throws ProfileError for syntax errors, tabs in indentation and
/// duplicate keys.
[[nodiscard]] Node parse_yaml(std::string_view text, const std::string& source);

/// `node` as YAML text (block style, scalars double-quoted), which parse_yaml reads back as
/// the same tree.
[[nodiscard]] std::string emit_yaml(const Node& node);

/// `child` over `parent`: maps merge key by key, anything else (lists, scalars, null) in the
/// child replaces the parent's value.
[[nodiscard]] Node merge(Node parent, const Node& child);

/// Checks the merged tree against schema v1 and the matrix and builds the Profile.
[[nodiscard]] Profile build_profile(const Node& root, const Matrix& matrix);

/// Cross-field checks (CUDA vs driver branch, cuDNN build exists, module flavor vs GPU).
void check_combinations(const Profile& profile, const Matrix& matrix);

[[noreturn]] void fail(const SourcePos& at, const std::string& message);

/// Bounds on profile input (hostile files are refused before they cost memory or time).
inline constexpr std::size_t kMaxProfileBytes = 1u << 20; ///< 1 MiB
inline constexpr int kMaxProfileDepth = 16;

} // namespace gpuprov::profile_detail
