#pragma once
// The signing-key policy of the host's apt: which keys its verifier would refuse. apt 3 verifies
// with Sequoia's sqv, whose policy rejects keys bound with SHA-1 from 2026-02-01; gpgv (apt 2
// and older) does not. gpuprov refuses at plan exactly what the host's apt would refuse, so the
// plan never promises a repository apt-get update then rejects (docs/security.md "Key policy").
#include <chrono>
#include <map>
#include <string>
#include <string_view>

namespace gpuprov {

class System;
struct OpenPgpKey;

struct KeyPolicy {
    /// "sqv" (apt >= 3 with /usr/bin/sqv) or "gpgv" (every other host: gpgv's own rules, which
    /// gpuprov's reader and its gpgv check already apply).
    std::string verifier = "gpgv";
    std::string apt_version; ///< the installed apt, from dpkg's status; empty if none
    std::string source;      ///< the policy file read, or "sqv's built-in defaults"
    /// Cut-off dates ("YYYY-MM-DD") from which a hash may no longer bind a key (Sequoia's
    /// second pre-image resistance), by Sequoia's name: "sha1", "sha224", "md5", "ripemd160".
    std::map<std::string, std::string> hash_cutoffs;
    /// Cut-off dates of public-key algorithms by Sequoia's name: "rsa1024", "rsa2048", "dsa2048".
    std::map<std::string, std::string> key_cutoffs;
    std::string v3_signature_cutoff; ///< from when v3 signatures count for nothing; empty: never
};

/// sqv's policy as apt 3 on Debian 13 runs it: Sequoia's defaults with apt's
/// /usr/share/apt/default-sequoia.config (apt 3.0.3) laid over them.
[[nodiscard]] KeyPolicy sqv_default_policy();

/// Lays a Sequoia policy file (`[hash_algorithms]`, `[asymmetric_algorithms]`, `[packets]`,
/// `name = YYYY-MM-DD` or `never`, `#` comments) over `base`. Lines it does not know are kept out.
[[nodiscard]] KeyPolicy apply_sequoia_config(KeyPolicy base, std::string_view config,
                                             std::string source);

/// The policy of this host's apt: sqv when apt >= 3 is installed (dpkg's status) and /usr/bin/sqv
/// exists, reading the file apt hands sqv (/etc/crypto-policies/back-ends/apt-sequoia.config, else
/// /usr/share/apt/default-sequoia.config); gpgv otherwise.
[[nodiscard]] KeyPolicy detect_key_policy(const System& sys);

/// Why `policy`'s verifier refuses `key` on `today` ("YYYY-MM-DD"), naming the key, the
/// signature, its hash, the cut-off date and the fix for the profile's repository `repo_name`
/// (for "cuda": NVIDIA's new key or a re-signed mirror); empty when it accepts it (always,
/// under gpgv).
[[nodiscard]] std::string key_policy_problem(const OpenPgpKey& key, const KeyPolicy& policy,
                                             std::string_view today, std::string_view repo_name);

/// "YYYY-MM-DD" (UTC) of a point in time: the `today` key_policy_problem compares cut-offs with.
[[nodiscard]] std::string policy_date(std::chrono::system_clock::time_point now);

} // namespace gpuprov
