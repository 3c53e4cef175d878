// `extends:` semantics: maps merge, everything else replaces. Positions travel with the values,
// so an error in an inherited value still names the parent file and line.
#include "internal.hpp"

namespace gpuprov::profile_detail {

Node merge(Node parent, const Node& child) {
    if (parent.kind != Node::Kind::map || child.kind != Node::Kind::map) {
        return child;
    }
    for (const auto& [key, value] : child.map) {
        if (auto* existing = parent.find(key)) {
            *existing = merge(std::move(*existing), value);
        } else {
            parent.map.emplace_back(key, value);
        }
    }
    parent.pos = child.pos;
    parent.key_pos = child.key_pos;
    return parent;
}

} // namespace gpuprov::profile_detail
