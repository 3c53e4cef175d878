#pragma once
// A plan saved for review (`gpuprov plan PROFILE --out FILE`) and carried out as it was
// reviewed (`gpuprov apply --plan FILE`), as terraform does with a saved plan: apply refuses,
// naming each difference, when the profile, the host or a repository's signed index changed
// since, or the transaction the package manager now resolves is another one.
#include <gpuprov/engine.hpp>
#include <gpuprov/facts.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace gpuprov {

inline constexpr int kSavedPlanFormat = 1;

/// What makes a plan the plan it is: the promise (every step status, change and package
/// action) and what it was computed from.
struct PlanSeal {
    std::vector<std::string> promise; ///< plan_promise()
    std::string profile_digest;       ///< "sha256:..." of the profile as loaded (resolved YAML)
    /// The host as facts saw it, less what moves by itself (free disk space).
    nlohmann::json host = nlohmann::json::object();
    /// Repository name → "sha256:..." of the signed index (InRelease, repomd.xml) planned from.
    std::map<std::string, std::string> indexes;
};

/// The seal of `plan`: `profile_yaml` is the profile as loaded (resolved, `extends:` merged).
[[nodiscard]] PlanSeal seal_plan(const Plan& plan, const HostFacts& facts,
                                 const std::string& profile_yaml, const RepoProvider& repos);

struct SavedPlan {
    int format_version = kSavedPlanFormat;
    std::string gpuprov_version;
    std::string created_at;  ///< ISO 8601, UTC
    std::string profile_arg; ///< as apply records it (built-in name or absolute path)
    std::set<std::string> only;
    std::set<std::string> skip;
    bool allow_remove = false;
    PlanSeal seal;
    nlohmann::json plan = nullptr; ///< the plan as `plan --json` printed it, for the reviewer
};

[[nodiscard]] nlohmann::json saved_plan_to_json(const SavedPlan& saved);
/// Throws UsageError naming `path` and what is wrong (not JSON, another format_version, a
/// missing field).
[[nodiscard]] SavedPlan saved_plan_from_json(std::string_view text, const std::string& path);

/// Why `saved` cannot be carried out now that `now` is the seal of a fresh plan, one line per
/// difference ("the profile changed", "host: kernel: 6.1.0-25-amd64 → 6.1.0-26-amd64",
/// "repository cuda: signed index changed", "- install nvidia-open-580 580.95.05-1 (saved)",
/// "+ install nvidia-open-580 580.105.08-1 (now)"); empty when it can.
[[nodiscard]] std::vector<std::string> saved_plan_differences(const PlanSeal& saved,
                                                              const PlanSeal& now);

} // namespace gpuprov
