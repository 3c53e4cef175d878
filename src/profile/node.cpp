// YAML text -> Node. The only file in src/profile that sees yaml-cpp.
#include "internal.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <sstream>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace gpuprov::profile_detail {
namespace {

// yaml-cpp's parser messages name the grammar rule; add what usually causes them.
std::string syntax_hint(const std::string& msg) {
    if (msg == "end of map flow not found") {
        return "; a '{' before this point has no matching '}'";
    }
    if (msg == "end of sequence flow not found") {
        return "; a '[' before this point has no matching ']'";
    }
    if (msg == "illegal map value") {
        return "; quote values that contain ': '";
    }
    if (msg == "end of map not found" || msg == "end of sequence not found") {
        return "; check the indentation of this line against the lines above";
    }
    return {};
}

SourcePos at(const YAML::Mark& mark, const std::string& source) {
    if (mark.is_null()) {
        return {source, 1, 1};
    }
    return {source, mark.line + 1, mark.column + 1};
}

// yaml-cpp reads a tab in indentation as content or as an opaque error; say what it is.
void refuse_tab_indentation(std::string_view text, const std::string& source) {
    int line = 1;
    bool leading = true;
    int col = 1;
    for (const char c : text) {
        if (c == '\n') {
            ++line;
            col = 1;
            leading = true;
            continue;
        }
        if (leading && c == '\t') {
            fail({source, line, col},
                 "tab character in indentation; YAML indents with spaces only (replace the tab "
                 "with spaces)");
        }
        if (c != ' ' && c != '-') {
            leading = false;
        }
        ++col;
    }
}

Node convert(const YAML::Node& y, const std::string& source, const SourcePos& key_pos) {
    Node n;
    n.pos = at(y.Mark(), source);
    n.key_pos = key_pos;
    switch (y.Type()) {
    case YAML::NodeType::Scalar:
        n.kind = Node::Kind::scalar;
        n.scalar = y.Scalar();
        break;
    case YAML::NodeType::Sequence:
        n.kind = Node::Kind::seq;
        for (const auto& item : y) {
            n.seq.push_back(convert(item, source, at(item.Mark(), source)));
        }
        break;
    case YAML::NodeType::Map:
        n.kind = Node::Kind::map;
        for (const auto& kv : y) {
            const auto kpos = at(kv.first.Mark(), source);
            if (!kv.first.IsScalar()) {
                fail(kpos, "a key must be a plain word");
            }
            const auto& key = kv.first.Scalar();
            if (n.find(key) != nullptr) {
                fail(kpos, "duplicate key '" + key + "'; each key may appear once per mapping");
            }
            auto value = convert(kv.second, source, kpos);
            if (value.kind == Node::Kind::null) {
                // An empty value has no position of its own; its key is the useful place.
                value.pos = kpos;
            }
            n.map.emplace_back(key, std::move(value));
        }
        break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        n.kind = Node::Kind::null;
        break;
    }
    return n;
}

} // namespace

Node::Node() = default;
Node::~Node() = default;
Node::Node(const Node&) = default;
Node::Node(Node&&) noexcept = default;
Node& Node::operator=(const Node&) = default;
Node& Node::operator=(Node&&) noexcept = default;

const Node* Node::find(std::string_view key) const {
    const auto it =
        std::find_if(map.begin(), map.end(), [&](const auto& kv) { return kv.first == key; });
    return it == map.end() ? nullptr : &it->second;
}

Node* Node::find(std::string_view key) {
    const auto it =
        std::find_if(map.begin(), map.end(), [&](const auto& kv) { return kv.first == key; });
    return it == map.end() ? nullptr : &it->second;
}

namespace {

/// Profiles are plain trees: a first pass over yaml-cpp's events, before any node is built,
/// refuses anchors and aliases (a nine-line alias bomb expands to gigabytes when the tree is
/// copied) and nesting deeper than any schema key needs. Linear in the text.
class PlainTreeCheck final : public YAML::EventHandler {
public:
    explicit PlainTreeCheck(const std::string& source) : m_source(source) {}
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { no_anchor(mark, anchor); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
        fail(at(mark, m_source), "YAML aliases (*name) are not allowed in a profile; write the "
                                 "value out, or share it with extends:");
    }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  const std::string&) override {
        no_anchor(mark, anchor);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(mark, anchor);
    }
    void OnSequenceEnd() override { --m_depth; }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(mark, anchor);
    }
    void OnMapEnd() override { --m_depth; }

private:
    void no_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) const {
        if (anchor != YAML::NullAnchor) {
            fail(at(mark, m_source), "YAML anchors (&name) are not allowed in a profile; write "
                                     "the value out, or share it with extends:");
        }
    }
    void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
        no_anchor(mark, anchor);
        if (++m_depth > kMaxProfileDepth) {
            fail(at(mark, m_source),
                 fmt::format("nested deeper than {} levels; no profile key needs that",
                             kMaxProfileDepth));
        }
    }
    const std::string& m_source;
    int m_depth = 0;
};

} // namespace

Node parse_yaml(std::string_view text, const std::string& source) {
    refuse_tab_indentation(text, source);
    try {
        std::istringstream in{std::string(text)};
        YAML::Parser parser(in);
        PlainTreeCheck check(source);
        // The first document only, as YAML::Load below reads only that one. (Not a loop until
        // false: yaml-cpp 0.7 reports a new document forever, consuming nothing, for a lone
        // ',' at the top level; found by fuzz/fuzz_profile.)
        (void)parser.HandleNextDocument(check);
    } catch (const YAML::ParserException& e) {
        fail(at(e.mark, source), "YAML syntax error: " + e.msg + syntax_hint(e.msg));
    }
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
        fail(at(e.mark, source), "YAML syntax error: " + e.msg + syntax_hint(e.msg));
    }
    if (!root.IsMap()) {
        fail(at(root.Mark(), source), "a profile must be a YAML mapping starting with 'name:'");
    }
    return convert(root, source, at(root.Mark(), source));
}

namespace {

void emit(YAML::Emitter& out, const Node& n) {
    switch (n.kind) {
    case Node::Kind::null:
        out << YAML::Null;
        break;
    case Node::Kind::scalar:
        // Quoted, so "550", "true" or "~" come back as the strings they were.
        out << YAML::DoubleQuoted << n.scalar;
        break;
    case Node::Kind::seq:
        out << YAML::BeginSeq;
        for (const auto& item : n.seq) {
            emit(out, item);
        }
        out << YAML::EndSeq;
        break;
    case Node::Kind::map:
        out << YAML::BeginMap;
        for (const auto& [key, value] : n.map) {
            out << YAML::Key << key << YAML::Value;
            emit(out, value);
        }
        out << YAML::EndMap;
        break;
    }
}

} // namespace

std::string emit_yaml(const Node& node) {
    YAML::Emitter out;
    emit(out, node);
    return std::string(out.c_str()) + "\n";
}

void fail(const SourcePos& at_pos, const std::string& message) {
    throw ProfileError(at_pos.file, at_pos.line, at_pos.col, message);
}

} // namespace gpuprov::profile_detail
