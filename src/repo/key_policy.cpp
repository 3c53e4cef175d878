// sqv's key policy (Sequoia's StandardPolicy as apt 3 configures it), applied to a key gpuprov's
// reader already accepted: which self-signatures still bind, and whether the key survives.
#include "internal.hpp"

#include <cctype>
#include <chrono>
#include <fmt/format.h>
#include <gpuprov/key_policy.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/system.hpp>
#include <optional>
#include <vector>

namespace gpuprov {

namespace {

using repo_detail::byte_at;

/// The packets of a key parse_openpgp_key accepted (so well-formed).
std::vector<repo_detail::OpenPgpPacket> packets_of(std::string_view data) {
    std::vector<repo_detail::OpenPgpPacket> out;
    std::size_t pos = 0;
    while (pos < data.size()) {
        auto read = repo_detail::read_openpgp_packet(data, pos);
        if (!read.packet) {
            break;
        }
        out.push_back(*read.packet);
    }
    return out;
}

/// What the policy needs of one signature packet.
struct Sig {
    unsigned version = 0;
    unsigned sig_class = 0;
    unsigned hash = 0;
    std::uint32_t created = 0;
    std::string issuer;         ///< 16 upper-case hex digits, from the issuer or issuer fingerprint
    unsigned key_flags = 0x100; ///< 0x100: no key flags subpacket
    std::optional<std::string> back_sig; ///< embedded primary key binding (subpacket 32)
};

std::string hex(std::string_view bytes) {
    std::string out;
    for (const char c : bytes) {
        out += fmt::format("{:02X}", static_cast<unsigned char>(c));
    }
    return out;
}

void read_subpackets(std::string_view area, Sig& sig, bool hashed) {
    std::size_t pos = 0;
    while (pos < area.size()) {
        std::size_t length = byte_at(area, pos++);
        if (length >= 192 && length < 255) {
            if (pos >= area.size()) {
                return;
            }
            length = ((length - 192) << 8) + byte_at(area, pos++) + 192;
        } else if (length == 255) {
            if (area.size() - pos < 4) {
                return;
            }
            length = 0;
            for (int i = 0; i < 4; ++i) {
                length = (length << 8) | byte_at(area, pos++);
            }
        }
        if (length == 0 || area.size() - pos < length) {
            return;
        }
        const auto type = byte_at(area, pos) & 0x7Fu;
        const auto data = area.substr(pos + 1, length - 1);
        pos += length;
        if (type == 2 && hashed && data.size() == 4) {
            sig.created = (std::uint32_t{byte_at(data, 0)} << 24) | (byte_at(data, 1) << 16) |
                          (byte_at(data, 2) << 8) | byte_at(data, 3);
        } else if (type == 16 && data.size() == 8 && sig.issuer.empty()) {
            sig.issuer = hex(data);
        } else if (type == 33 && data.size() == 21 && byte_at(data, 0) == 4) {
            sig.issuer = hex(data.substr(13)); // the key id is the v4 fingerprint's last 8 bytes
        } else if (type == 27 && hashed && !data.empty()) {
            sig.key_flags = byte_at(data, 0);
        } else if (type == 32) {
            sig.back_sig = std::string(data);
        }
    }
}

std::optional<Sig> read_sig(std::string_view body) {
    if (body.size() < 6) {
        return std::nullopt;
    }
    Sig sig;
    sig.version = byte_at(body, 0);
    if (sig.version == 4) {
        sig.sig_class = byte_at(body, 1);
        sig.hash = byte_at(body, 3);
        std::size_t pos = 4;
        for (const bool hashed : {true, false}) {
            if (body.size() - pos < 2) {
                return sig;
            }
            const std::size_t length = (byte_at(body, pos) << 8) | byte_at(body, pos + 1);
            pos += 2;
            if (body.size() - pos < length) {
                return sig;
            }
            read_subpackets(body.substr(pos, length), sig, hashed);
            pos += length;
        }
        return sig;
    }
    if ((sig.version == 2 || sig.version == 3) && body.size() >= 19) {
        sig.sig_class = byte_at(body, 2);
        sig.created = (std::uint32_t{byte_at(body, 3)} << 24) | (byte_at(body, 4) << 16) |
                      (byte_at(body, 5) << 8) | byte_at(body, 6);
        sig.issuer = hex(body.substr(7, 8));
        sig.hash = byte_at(body, 16);
        return sig;
    }
    return std::nullopt;
}

/// Sequoia's names for OpenPGP hash algorithm ids (RFC 4880 9.4, RFC 9580 9.5).
std::string hash_name(unsigned id) {
    switch (id) {
    case 1:
        return "md5";
    case 2:
        return "sha1";
    case 3:
        return "ripemd160";
    case 8:
        return "sha256";
    case 9:
        return "sha384";
    case 10:
        return "sha512";
    case 11:
        return "sha224";
    case 12:
        return "sha3-256";
    case 14:
        return "sha3-512";
    default:
        return fmt::format("hash{}", id);
    }
}

std::string display_hash(const std::string& name) {
    if (name.rfind("sha3-", 0) == 0) {
        return "SHA3-" + name.substr(5);
    }
    if (name.rfind("sha", 0) == 0) {
        return name == "sha1" ? "SHA-1" : "SHA-" + name.substr(3);
    }
    if (name == "md5") {
        return "MD5";
    }
    if (name == "ripemd160") {
        return "RIPEMD-160";
    }
    return name;
}

std::string date_of(std::chrono::system_clock::time_point when) {
    const auto days = std::chrono::floor<std::chrono::days>(when);
    const std::chrono::year_month_day ymd(days);
    return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()),
                       static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
}

/// Why the policy ignores this self-signature on `today`, or empty when it counts.
std::string sig_rejected(const Sig& sig, const KeyPolicy& policy, std::string_view today) {
    if (sig.version < 4 && !policy.v3_signature_cutoff.empty() &&
        today >= policy.v3_signature_cutoff) {
        return fmt::format("it is a v{} signature, which sqv's policy rejects from {}", sig.version,
                           policy.v3_signature_cutoff);
    }
    const auto name = hash_name(sig.hash);
    const auto cutoff = policy.hash_cutoffs.find(name);
    if (cutoff != policy.hash_cutoffs.end() && today >= cutoff->second) {
        return fmt::format("it uses {}, which sqv's policy rejects in binding signatures from {}",
                           display_hash(name), cutoff->second);
    }
    return {};
}

/// Sequoia's bucket for a key (RSA and DSA by modulus size; others are not judged here).
std::string key_bucket(std::string_view body) {
    if (body.size() < 8 || byte_at(body, 0) != 4) {
        return {};
    }
    const auto algo = byte_at(body, 5);
    const unsigned bits = (byte_at(body, 6) << 8) | byte_at(body, 7);
    const auto size = bits < 2048 ? 1024 : bits < 3072 ? 2048 : bits < 4096 ? 3072 : 4096;
    if (algo == 1 || algo == 2 || algo == 3) {
        return fmt::format("rsa{}", size);
    }
    if (algo == 17) {
        return fmt::format("dsa{}", size);
    }
    return {};
}

/// A component (the primary key with its user IDs, or a subkey) and its binding signatures.
struct Component {
    std::string what; ///< "the primary key" or "subkey ABCD..."
    std::string bucket;
    std::vector<std::pair<std::string, Sig>> bindings; ///< (what it binds, signature)
    bool subkey = false;
};

std::string describe_binding(const std::string& bound, const Sig& sig) {
    return fmt::format("its {} (made {})", bound,
                       sig.created == 0 ? "?"
                                        : date_of(std::chrono::system_clock::time_point(
                                              std::chrono::seconds(sig.created))));
}

} // namespace

std::string policy_date(std::chrono::system_clock::time_point now) {
    return date_of(now);
}

KeyPolicy sqv_default_policy() {
    KeyPolicy p;
    p.verifier = "sqv";
    p.source = "sqv's built-in defaults with apt 3.0's /usr/share/apt/default-sequoia.config";
    // Sequoia's StandardPolicy (sequoia-openpgp src/policy.rs, second pre-image resistance):
    // MD5 from 2004-02-01, SHA-1 from 2023-02-01, RIPEMD-160 from 2013-02-01; apt moves SHA-1 and
    // SHA-224 to 2026-02-01. Asymmetric: RSA under 2048 bits from 2014-02-01 (Sequoia), DSA from
    // 2024-02-01 and RSA 2048 from 2030-02-01 (apt).
    p.hash_cutoffs = {{"md5", "2004-02-01"},
                      {"ripemd160", "2013-02-01"},
                      {"sha1", "2026-02-01"},
                      {"sha224", "2026-02-01"}};
    p.key_cutoffs = {{"rsa1024", "2014-02-01"}, {"dsa1024", "2014-02-01"},
                     {"dsa2048", "2024-02-01"}, {"dsa3072", "2024-02-01"},
                     {"dsa4096", "2024-02-01"}, {"rsa2048", "2030-02-01"}};
    p.v3_signature_cutoff = "2026-02-01";
    return p;
}

KeyPolicy apply_sequoia_config(KeyPolicy base, std::string_view config, std::string source) {
    std::string section;
    for (const auto& raw : split(config, '\n')) {
        std::string_view line = raw;
        if (const auto hash = line.find('#'); hash != std::string_view::npos) {
            line = line.substr(0, hash);
        }
        line = trim(line);
        if (line.empty()) {
            continue;
        }
        if (line.front() == '[' && line.back() == ']') {
            section = std::string(line.substr(1, line.size() - 2));
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            continue;
        }
        auto name = std::string(trim(line.substr(0, eq)));
        auto value = std::string(trim(line.substr(eq + 1)));
        if (!value.empty() && value.front() == '"' && value.back() == '"' && value.size() >= 2) {
            value = value.substr(1, value.size() - 2);
        }
        // "never" and "always" as Sequoia's config reads them; a date is YYYY-MM-DD.
        const auto cutoff = value == "never"    ? std::string()
                            : value == "always" ? "0000-00-00"
                                                : value;
        if (section == "hash_algorithms") {
            // The plain name sets both resistances; only second pre-image matters for bindings.
            const auto dot = name.find('.');
            const auto algo = name.substr(0, dot);
            if (dot != std::string::npos && name.substr(dot + 1) != "second_preimage_resistance") {
                continue;
            }
            if (cutoff.empty()) {
                base.hash_cutoffs.erase(algo);
            } else {
                base.hash_cutoffs[algo] = cutoff;
            }
        } else if (section == "asymmetric_algorithms") {
            if (cutoff.empty()) {
                base.key_cutoffs.erase(name);
            } else {
                base.key_cutoffs[name] = cutoff;
            }
        } else if (section == "packets" && name == "signature.v3") {
            base.v3_signature_cutoff = cutoff;
        }
    }
    base.source = std::move(source);
    return base;
}

namespace {

/// The Version of an installed package in dpkg's status file, or empty.
std::string installed_version(std::string_view status, std::string_view package) {
    bool match = false;
    bool installed = false;
    std::string version;
    const auto package_line = fmt::format("Package: {}", package);
    for (const auto& raw : split(status, '\n')) {
        const std::string_view line = raw;
        if (trim(line).empty()) {
            if (match && installed) {
                return version;
            }
            match = installed = false;
            version.clear();
        } else if (line == package_line) {
            match = true;
        } else if (line.rfind("Status: ", 0) == 0) {
            installed = line.find(" installed") != std::string_view::npos;
        } else if (line.rfind("Version: ", 0) == 0) {
            version = std::string(trim(line.substr(9)));
        }
    }
    return match && installed ? version : std::string();
}

} // namespace

KeyPolicy detect_key_policy(const System& sys) {
    KeyPolicy gpgv;
    const auto status = sys.read_file("/var/lib/dpkg/status");
    gpgv.apt_version = status ? installed_version(*status, "apt") : std::string();
    const auto epochless = gpgv.apt_version.substr(gpgv.apt_version.find(':') + 1);
    int major = 0;
    for (std::size_t i = 0; i < epochless.size() && i < 4 &&
                            std::isdigit(static_cast<unsigned char>(epochless[i])) != 0;
         ++i) {
        major = major * 10 + (epochless[i] - '0');
    }
    const bool apt3 = major >= 3;
    if (!apt3 || !sys.exists("/usr/bin/sqv")) {
        return gpgv;
    }
    auto policy = sqv_default_policy();
    policy.apt_version = gpgv.apt_version;
    // apt 3 hands sqv the administrator's file when there is one, else its own default.
    for (const char* path : {"/etc/crypto-policies/back-ends/apt-sequoia.config",
                             "/usr/share/apt/default-sequoia.config"}) {
        if (const auto config = sys.read_file(path)) {
            return apply_sequoia_config(std::move(policy), *config, path);
        }
    }
    return policy;
}

std::string key_policy_problem(const OpenPgpKey& key, const KeyPolicy& policy,
                               std::string_view today, std::string_view repo_name) {
    if (policy.verifier != "sqv") {
        return {};
    }
    const auto primary_id = key.fingerprint.substr(key.fingerprint.size() - 16);
    std::vector<Component> components;
    std::string bound; // what the next self-signature binds
    for (const auto& p : packets_of(key.binary)) {
        switch (p.tag) {
        case 6:
            components.push_back({"the primary key", key_bucket(p.body), {}, false});
            bound = "direct-key self-signature";
            break;
        case 14: {
            components.push_back({"a subkey", key_bucket(p.body), {}, true});
            bound = "subkey binding signature";
            break;
        }
        case 13:
            bound = fmt::format("self-signature on user ID \"{}\"", p.body);
            break;
        case 17:
            bound = "self-signature on a user attribute";
            break;
        case 2: {
            const auto sig = read_sig(p.body);
            if (!sig || components.empty() || sig->issuer != primary_id) {
                break; // third-party certifications bind nothing for apt
            }
            const auto c = sig->sig_class;
            const bool binds =
                components.back().subkey ? c == 0x18 : (c >= 0x10 && c <= 0x13) || c == 0x1F;
            if (binds) {
                components.back().bindings.emplace_back(
                    c == 0x1F ? "direct-key self-signature" : bound, *sig);
            }
            break;
        }
        default:
            break;
        }
    }
    // NVIDIA gave only its newest apt repositories keys of their own (debian13, ubuntu2604); the
    // others stay signed with 3bf863cc, whose SHA-1 binding sqv refuses
    // (NVIDIA/cuda-repo-management #30, #34, #39; version matrix comments).
    const auto pin =
        fmt::format("repositories.{0}.key_url and repositories.{0}.key_fingerprint", repo_name);
    const auto fix =
        repo_name == "cuda"
            ? fmt::format("NVIDIA's current key for the repository (NVIDIA re-keyed only its "
                          "newest repositories: debian13 with 8793F200.pub, ubuntu2604 with "
                          "60DF8A40.pub), or a mirror re-signed with a key bound with SHA-256 or "
                          "stronger, named in {}",
                          pin)
            : fmt::format("a key bound with SHA-256 or stronger from the repository's publisher, "
                          "named in {}",
                          pin);
    const auto header = fmt::format(
        "key {} would be refused by this host's apt (apt {} verifies with sqv; policy: {}): ",
        key.fingerprint, policy.apt_version.empty() ? "3" : policy.apt_version, policy.source);
    for (const auto& comp : components) {
        if (!comp.bucket.empty()) {
            const auto cutoff = policy.key_cutoffs.find(comp.bucket);
            if (cutoff != policy.key_cutoffs.end() && today >= cutoff->second) {
                return header + fmt::format("{} is {}, which sqv's policy rejects from {}. Fix: {}",
                                            comp.what, comp.bucket, cutoff->second, fix);
            }
        }
        std::vector<std::string> reasons;
        bool any_ok = false;
        bool signs = !comp.subkey; // a subkey matters when it may sign the InRelease
        for (const auto& [what, sig] : comp.bindings) {
            auto why = sig_rejected(sig, policy, today);
            if (why.empty() && sig.back_sig) {
                if (const auto back = read_sig(*sig.back_sig)) {
                    if (auto back_why = sig_rejected(*back, policy, today); !back_why.empty()) {
                        why = "its embedded back-signature: " + back_why;
                    }
                }
            }
            if (comp.subkey && (sig.key_flags == 0x100 || (sig.key_flags & 0x02u) != 0)) {
                signs = true;
            }
            if (why.empty()) {
                any_ok = true;
            } else {
                reasons.push_back(describe_binding(what, sig) + ": " + why);
            }
        }
        if (!any_ok && signs) {
            if (comp.bindings.empty()) {
                return header +
                       fmt::format("{} has no self-signature binding it. Fix: {}", comp.what, fix);
            }
            return header + fmt::format("{} is bound only by signatures sqv rejects; {}. Fix: {}",
                                        comp.what, join(reasons, "; "), fix);
        }
    }
    return {};
}

} // namespace gpuprov
