#include <cctype>
#include <gpuprov/strings.hpp>
#include <gpuprov/version.hpp>

namespace gpuprov {

std::optional<DottedVersion> DottedVersion::parse(std::string_view s) {
    s = trim(s);
    if (s.empty()) {
        return std::nullopt;
    }
    DottedVersion v;
    for (const auto& part : split(s, '.')) {
        if (part.empty() || part.size() > 9) {
            return std::nullopt;
        }
        for (char c : part) {
            if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
                return std::nullopt;
            }
        }
        v.parts.push_back(std::stoi(part));
        v.widths.push_back(static_cast<int>(part.size()));
    }
    return v;
}

std::string DottedVersion::str() const {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i != 0) {
            out += '.';
        }
        auto digits = std::to_string(parts[i]);
        if (i < widths.size() && digits.size() < static_cast<std::size_t>(widths[i])) {
            digits.insert(0, static_cast<std::size_t>(widths[i]) - digits.size(), '0');
        }
        out += digits;
    }
    return out;
}

bool DottedVersion::has_prefix(const DottedVersion& prefix) const {
    if (prefix.parts.size() > parts.size()) {
        return false;
    }
    for (std::size_t i = 0; i < prefix.parts.size(); ++i) {
        if (parts[i] != prefix.parts[i]) {
            return false;
        }
    }
    return true;
}

int compare(const DottedVersion& a, const DottedVersion& b) {
    const auto n = std::max(a.parts.size(), b.parts.size());
    for (std::size_t i = 0; i < n; ++i) {
        const int x = i < a.parts.size() ? a.parts[i] : 0;
        const int y = i < b.parts.size() ? b.parts[i] : 0;
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return 0;
}

namespace {

// dpkg's ordering: '~' sorts before everything, even the end of the string; letters sort
// before non-letters.
int char_order(char c) {
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
        return 0;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) != 0) {
        return c;
    }
    if (c == '~') {
        return -1;
    }
    if (c != 0) {
        return c + 256;
    }
    return 0;
}

int compare_fragment(std::string_view a, std::string_view b) {
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.size() || j < b.size()) {
        int first_diff = 0;
        while ((i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) == 0) ||
               (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j])) == 0)) {
            const int ac = i < a.size() ? char_order(a[i]) : 0;
            const int bc = j < b.size() ? char_order(b[j]) : 0;
            if (ac != bc) {
                return ac - bc;
            }
            ++i;
            ++j;
        }
        while (i < a.size() && a[i] == '0') {
            ++i;
        }
        while (j < b.size() && b[j] == '0') {
            ++j;
        }
        while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) != 0 &&
               j < b.size() && std::isdigit(static_cast<unsigned char>(b[j])) != 0) {
            if (first_diff == 0) {
                first_diff = a[i] - b[j];
            }
            ++i;
            ++j;
        }
        if (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) != 0) {
            return 1;
        }
        if (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j])) != 0) {
            return -1;
        }
        if (first_diff != 0) {
            return first_diff;
        }
    }
    return 0;
}

struct DebVersion {
    long epoch = 0;
    std::string_view upstream;
    std::string_view revision;
};

DebVersion split_deb(std::string_view v) {
    DebVersion out;
    if (const auto colon = v.find(':'); colon != std::string_view::npos) {
        out.epoch = parse_int(v.substr(0, colon)).value_or(0);
        v.remove_prefix(colon + 1);
    }
    if (const auto dash = v.rfind('-'); dash != std::string_view::npos) {
        out.revision = v.substr(dash + 1);
        v = v.substr(0, dash);
    }
    out.upstream = v;
    return out;
}

} // namespace

int compare_deb_versions(std::string_view a, std::string_view b) {
    const auto x = split_deb(trim(a));
    const auto y = split_deb(trim(b));
    if (x.epoch != y.epoch) {
        return x.epoch < y.epoch ? -1 : 1;
    }
    if (const int c = compare_fragment(x.upstream, y.upstream); c != 0) {
        return c < 0 ? -1 : 1;
    }
    const int c = compare_fragment(x.revision, y.revision);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

} // namespace gpuprov
