#include "sources.hpp"

#include <algorithm>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>
#include <vector>

namespace gpuprov::pkg {

namespace {

constexpr const char* kSourcesList = "/etc/apt/sources.list";
constexpr const char* kSourcePartsDir = "/etc/apt/sources.list.d/";

std::string with_slash(std::string_view url) {
    std::string s(trim(url));
    if (!s.empty() && s.back() != '/') {
        s += '/';
    }
    return s;
}

/// sources.list(5) options that switch a check off: signatures (trusted, allow-insecure,
/// allow-weak, allow-downgrade-to-insecure) or the Release's expiry (check-valid-until=no).
/// `value` is the option's value, any case.
bool weakens(std::string_view option, std::string_view value) {
    const auto o = to_lower(trim(option));
    const auto v = to_lower(trim(value));
    if (o == "check-valid-until") {
        return v == "no" || v == "false" || v == "without-nc";
    }
    return (o == "trusted" || o == "allow-insecure" || o == "allow-weak" ||
            o == "allow-downgrade-to-insecure") &&
           (v == "yes" || v == "true" || v == "with");
}

/// One-line format: `deb [opt=value ...] URI suite [component...]`.
std::optional<ForeignSource> from_list(const std::string& file, std::string_view text,
                                       const std::string& url) {
    int n = 0;
    for (const auto& raw : lines(text)) {
        ++n;
        auto line = std::string(raw.substr(0, raw.find('#')));
        auto w = split_words(line);
        if (w.empty() || w[0] != "deb") {
            continue;
        }
        std::string signed_by;
        std::vector<std::string> weakening;
        std::size_t i = 1;
        if (i < w.size() && starts_with(w[i], "[")) {
            // Options run to the word that ends with ']' ("[arch=amd64 signed-by=/k.gpg]").
            for (; i < w.size(); ++i) {
                auto opt = w[i];
                const bool last = !opt.empty() && opt.back() == ']';
                opt = std::string(trim(std::string_view(opt).substr(opt.front() == '[' ? 1 : 0)));
                if (!opt.empty() && opt.back() == ']') {
                    opt.pop_back();
                }
                if (starts_with(to_lower(opt), "signed-by=")) {
                    signed_by = opt.substr(10);
                }
                if (const auto eq = opt.find('=');
                    eq != std::string::npos && weakens(opt.substr(0, eq), opt.substr(eq + 1))) {
                    weakening.push_back(opt);
                }
                if (last) {
                    ++i;
                    break;
                }
            }
        }
        if (i < w.size() && with_slash(w[i]) == url) {
            return ForeignSource{file, n, signed_by, weakening};
        }
    }
    return std::nullopt;
}

/// deb822: paragraphs of Types, URIs, Suites, Signed-By (a path, or an inline key block).
std::optional<ForeignSource> from_sources(const std::string& file, std::string_view text,
                                          const std::string& url) {
    const auto all = lines(text);
    std::size_t i = 0;
    while (i < all.size()) {
        while (i < all.size() && trim(all[i]).empty()) {
            ++i;
        }
        const int start = static_cast<int>(i) + 1;
        std::string types;
        std::string uris;
        std::string signed_by;
        std::string enabled = "yes";
        std::vector<std::string> weakening;
        std::string* field = nullptr;
        for (; i < all.size() && !trim(all[i]).empty(); ++i) {
            const auto& line = all[i];
            if (line.front() == '#') {
                continue;
            }
            if (line.front() == ' ' || line.front() == '\t') {
                if (field == &signed_by && signed_by.empty()) {
                    signed_by = "(an inline key)"; // a key block starts on the next line
                }
                continue;
            }
            const auto colon = line.find(':');
            if (colon == std::string::npos) {
                continue;
            }
            const auto name = to_lower(trim(line.substr(0, colon)));
            const auto value = std::string(trim(line.substr(colon + 1)));
            if (weakens(name, value)) {
                weakening.push_back(std::string(trim(line)));
            }
            field = name == "types"       ? &types
                    : name == "uris"      ? &uris
                    : name == "signed-by" ? &signed_by
                    : name == "enabled"   ? &enabled
                                          : nullptr;
            if (field != nullptr) {
                *field = value;
            }
        }
        const auto type_words = split_words(types);
        const bool deb = std::find(type_words.begin(), type_words.end(), "deb") != type_words.end();
        if (!deb || to_lower(enabled) == "no") {
            continue;
        }
        for (const auto& u : split_words(uris)) {
            if (with_slash(u) == url) {
                return ForeignSource{file, start, signed_by, weakening};
            }
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<ForeignSource> foreign_apt_source(const System& sys, const std::string& url,
                                                const std::string& own_file) {
    const auto want = with_slash(url);
    std::vector<std::string> files{kSourcesList};
    for (const auto& name : sys.list_dir(kSourcePartsDir)) {
        files.push_back(kSourcePartsDir + name);
    }
    for (const auto& file : files) {
        if (file == own_file) {
            continue;
        }
        const bool list = file.size() > 5 && file.compare(file.size() - 5, 5, ".list") == 0;
        const bool sources = file.size() > 8 && file.compare(file.size() - 8, 8, ".sources") == 0;
        if (!list && !sources && file != kSourcesList) {
            continue; // apt reads only these names (and ignores *.save, *.dpkg-old, ...)
        }
        const auto text = sys.read_file(file);
        if (!text) {
            continue;
        }
        auto found = sources ? from_sources(file, *text, want) : from_list(file, *text, want);
        if (found) {
            return found;
        }
    }
    return std::nullopt;
}

} // namespace gpuprov::pkg
