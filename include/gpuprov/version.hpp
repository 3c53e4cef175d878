#pragma once
// Version arithmetic: dotted numeric versions (CUDA "12.4", driver "550.54.14") and Debian
// package versions ("1:2.3-1+cuda12.2"), compared the way dpkg does.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// A dotted numeric version. Missing components compare as 0 ("12.4" == "12.4.0").
struct DottedVersion {
    std::vector<int> parts;
    /// Digits each part was written with, so str() gives back NVIDIA's "580.65.06" rather than
    /// "580.65.6". Empty for versions built from numbers; never part of comparisons.
    std::vector<int> widths;

    /// nullopt unless `s` is one or more dot-separated decimal numbers.
    [[nodiscard]] static std::optional<DottedVersion> parse(std::string_view s);
    /// The version as written (leading zeros of a parsed part kept: "580.65.06").
    [[nodiscard]] std::string str() const;
    [[nodiscard]] int major() const { return parts.empty() ? 0 : parts[0]; }
    [[nodiscard]] int minor() const { return parts.size() < 2 ? 0 : parts[1]; }
    /// True when this version's leading components equal all of `prefix` ("12.4.1" has "12.4").
    [[nodiscard]] bool has_prefix(const DottedVersion& prefix) const;

    friend int compare(const DottedVersion& a, const DottedVersion& b);
    friend bool operator<(const DottedVersion& a, const DottedVersion& b) {
        return compare(a, b) < 0;
    }
    friend bool operator==(const DottedVersion& a, const DottedVersion& b) {
        return compare(a, b) == 0;
    }
    friend bool operator<=(const DottedVersion& a, const DottedVersion& b) {
        return compare(a, b) <= 0;
    }
};

/// Compares two Debian package versions with dpkg's algorithm (epoch, upstream, revision, '~').
/// Returns <0, 0 or >0.
[[nodiscard]] int compare_deb_versions(std::string_view a, std::string_view b);

} // namespace gpuprov
