// Which package family, NVIDIA repo directory and profile spelling an os-release means.
// The supported set is deliberately closed: a host outside it gets an empty repo_slug, and the
// planner refuses it with a message instead of guessing at a repo that may not exist.
#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <gpuprov/facts.hpp>
#include <gpuprov/version.hpp>
#include <string_view>

namespace gpuprov {

namespace {

bool any_of_ids(const OsInfo& os, std::initializer_list<std::string_view> ids) {
    const auto listed = [&](std::string_view id) {
        return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    return listed(os.id) || std::any_of(os.id_like.begin(), os.id_like.end(),
                                        [&](const std::string& like) { return listed(like); });
}

std::string family_of(const OsInfo& os) {
    // ID first: Ubuntu says ID_LIKE=debian, but a distro's own ID is the stronger signal.
    if (os.id == "ubuntu" || os.id == "debian") {
        return "debian";
    }
    if (any_of_ids(os, {"rhel", "rocky", "almalinux", "centos", "ol", "fedora"})) {
        return "rhel";
    }
    if (any_of_ids(os, {"debian", "ubuntu"})) {
        return "debian";
    }
    return {};
}

// NVIDIA publishes one rhelN repo that Rocky, Alma and Oracle Linux use as well (rhel8, rhel9,
// rhel10).
bool is_el_rebuild(const std::string& id) {
    return id == "rhel" || id == "rocky" || id == "almalinux" || id == "ol";
}

// CentOS Linux 8 and CentOS Stream 8/9 build from the RHEL 8/9 sources, so NVIDIA's rhel8 and
// rhel9 repositories fit them; the container toolkit's supported platforms list "CentOS 8"
// (reference §3.7). Their end-of-life dates are the CentOS project's:
// https://www.centos.org/centos-linux-eol/ (CentOS Linux 8: 2021-12-31) and
// https://www.centos.org/centos-stream/ (Stream 8: 2024-05-31, Stream 9: "end of RHEL 9's full
// support phase", 2027-05-31).
std::string centos_end_of_life(const OsInfo& os, int major) {
    const bool stream = os.pretty_name.find("Stream") != std::string::npos;
    if (major == 8) {
        return stream ? "2024-05-31" : "2021-12-31";
    }
    if (major == 9 && stream) {
        return "2027-05-31";
    }
    return {};
}

} // namespace

std::string supported_os_list() {
    return "Ubuntu 20.04/22.04/24.04/26.04, Debian 12/13, RHEL/Rocky Linux/AlmaLinux/Oracle "
           "Linux 8/9/10, "
           "CentOS Stream 8/9, CentOS Linux 8";
}

std::string end_of_life_warning(const OsInfo& os, std::string_view today) {
    if (os.end_of_life.empty() || today <= os.end_of_life) {
        return {};
    }
    return fmt::format("{} reached its end of life on {} and gets no security updates; NVIDIA's "
                       "{} repository is used as for RHEL {}, but plan a move to a maintained "
                       "release (RHEL, Rocky Linux, AlmaLinux, Oracle Linux)",
                       os.pretty_name.empty() ? os.id + " " + os.version_id : os.pretty_name,
                       os.end_of_life, os.repo_slug, os.repo_slug.substr(4));
}

void classify_os(OsInfo& os) {
    os.family = family_of(os);
    os.repo_slug.clear();
    os.profile_os.clear();
    os.end_of_life.clear();
    if (os.id.empty() || os.version_id.empty()) {
        return;
    }
    const auto version = DottedVersion::parse(os.version_id);
    const int major = version ? version->major() : 0;

    if (os.id == "ubuntu") {
        os.profile_os = "ubuntu-" + os.version_id;
        static constexpr std::array supported{"20.04", "22.04", "24.04", "26.04"};
        if (std::find(supported.begin(), supported.end(), os.version_id) != supported.end()) {
            std::string slug = "ubuntu" + os.version_id;
            slug.erase(std::remove(slug.begin(), slug.end(), '.'), slug.end());
            os.repo_slug = slug;
        }
    } else if (os.id == "debian" && version) {
        os.profile_os = "debian-" + std::to_string(major);
        // NVIDIA's debian12 and debian13 repositories (debian13 signed with its own key).
        if (major == 12 || major == 13) {
            os.repo_slug = "debian" + std::to_string(major);
        }
    } else if (is_el_rebuild(os.id) && version) {
        // Profiles name the EL major only: a Rocky 9.3 host satisfies `os: [rhel-9]`.
        os.profile_os = "rhel-" + std::to_string(major);
        // NVIDIA's rhel8, rhel9 and rhel10 repositories (rhel10 without module streams).
        if (major >= 8 && major <= 10) {
            os.repo_slug = "rhel" + std::to_string(major);
        }
    } else if (os.id == "centos" && version && !centos_end_of_life(os, major).empty()) {
        os.profile_os = "rhel-" + std::to_string(major);
        os.repo_slug = "rhel" + std::to_string(major);
        os.end_of_life = centos_end_of_life(os, major);
    } else {
        // Unsupported, but still named, so messages and `host.os` checks can say what it is.
        os.profile_os = os.id + "-" + os.version_id;
    }
}

} // namespace gpuprov
