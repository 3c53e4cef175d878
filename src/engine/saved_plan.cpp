#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/digest.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/saved_plan.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

/// "key.sub[2]: value" lines of a JSON document, sorted by key, for naming what differs.
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            flatten(v, prefix.empty() ? k : prefix + "." + k, out);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            flatten(j[i], fmt::format("{}[{}]", prefix, i), out);
        }
    } else {
        out[prefix] = j.dump();
    }
}

/// At most this many host and promise differences are listed; the count says how many more.
constexpr std::size_t kShown = 20;

void add_capped(std::vector<std::string>& out, std::vector<std::string> lines) {
    const auto total = lines.size();
    if (total > kShown) {
        lines.resize(kShown);
        lines.push_back(fmt::format("... and {} more", total - kShown));
    }
    out.insert(out.end(), lines.begin(), lines.end());
}

} // namespace

PlanSeal seal_plan(const Plan& plan, const HostFacts& facts, const std::string& profile_yaml,
                   const RepoProvider& repos) {
    PlanSeal seal;
    seal.promise = plan_promise(plan);
    seal.profile_digest = content_digest(profile_yaml);
    seal.host = facts_to_json(facts);
    // Free space moves by itself between a review and the apply; preflight judges it anew.
    if (seal.host.contains("root_disk") && seal.host["root_disk"].is_object()) {
        seal.host["root_disk"].erase("free_bytes");
    }
    for (const auto& r : plan.repositories) {
        if (const auto index = repos.known_inrelease(r.name)) {
            seal.indexes[r.name] = content_digest(*index);
        }
    }
    return seal;
}

nlohmann::json saved_plan_to_json(const SavedPlan& s) {
    return {{"format_version", s.format_version},
            {"kind", "gpuprov-saved-plan"},
            {"gpuprov_version", s.gpuprov_version},
            {"created_at", s.created_at},
            {"profile", s.profile_arg},
            {"only", s.only},
            {"skip", s.skip},
            {"allow_remove", s.allow_remove},
            {"profile_digest", s.seal.profile_digest},
            {"indexes", s.seal.indexes},
            {"host", s.seal.host},
            {"promise", s.seal.promise},
            {"plan", s.plan}};
}

SavedPlan saved_plan_from_json(std::string_view text, const std::string& path) {
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || doc.value("kind", "") != "gpuprov-saved-plan") {
        throw UsageError(path + ": not a plan saved by `gpuprov plan --out`");
    }
    const int format = doc.value("format_version", 0);
    if (format != kSavedPlanFormat) {
        throw UsageError(fmt::format("{}: format_version {} is not {}, the one this gpuprov "
                                     "reads; save the plan again with this gpuprov",
                                     path, format, kSavedPlanFormat));
    }
    try {
        SavedPlan s;
        s.gpuprov_version = doc.at("gpuprov_version").get<std::string>();
        s.created_at = doc.at("created_at").get<std::string>();
        s.profile_arg = doc.at("profile").get<std::string>();
        s.only = doc.at("only").get<std::set<std::string>>();
        s.skip = doc.at("skip").get<std::set<std::string>>();
        s.allow_remove = doc.at("allow_remove").get<bool>();
        s.seal.profile_digest = doc.at("profile_digest").get<std::string>();
        s.seal.indexes = doc.at("indexes").get<std::map<std::string, std::string>>();
        s.seal.host = doc.at("host");
        s.seal.promise = doc.at("promise").get<std::vector<std::string>>();
        s.plan = doc.value("plan", nlohmann::json());
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw UsageError(
            fmt::format("{}: a saved plan without a usable field: {}", path, e.what()));
    }
}

std::vector<std::string> saved_plan_differences(const PlanSeal& saved, const PlanSeal& now) {
    std::vector<std::string> out;
    if (saved.profile_digest != now.profile_digest) {
        out.push_back(fmt::format("the profile changed ({} saved, {} now)", saved.profile_digest,
                                  now.profile_digest));
    }
    std::map<std::string, std::string> was;
    std::map<std::string, std::string> is;
    flatten(saved.host, "", was);
    flatten(now.host, "", is);
    std::vector<std::string> host;
    for (const auto& [key, value] : was) {
        const auto it = is.find(key);
        if (it == is.end()) {
            host.push_back(fmt::format("host: {}: {} saved, absent now", key, value));
        } else if (it->second != value) {
            host.push_back(fmt::format("host: {}: {} saved, {} now", key, value, it->second));
        }
    }
    for (const auto& [key, value] : is) {
        if (was.count(key) == 0) {
            host.push_back(fmt::format("host: {}: absent when saved, {} now", key, value));
        }
    }
    add_capped(out, std::move(host));
    for (const auto& [name, digest] : saved.indexes) {
        const auto it = now.indexes.find(name);
        if (it == now.indexes.end()) {
            out.push_back(fmt::format("repository {}: no signed index now", name));
        } else if (it->second != digest) {
            out.push_back(fmt::format("repository {}: its signed index changed ({} saved, {} now)",
                                      name, digest, it->second));
        }
    }
    for (const auto& [name, digest] : now.indexes) {
        if (saved.indexes.count(name) == 0) {
            out.push_back(fmt::format("repository {}: not in the saved plan", name));
        }
    }
    // The promise, line by line, as `diff` shows it: what the saved plan would do and no
    // longer does (-), what the plan would do now and the saved one did not (+).
    const std::set<std::string> before(saved.promise.begin(), saved.promise.end());
    const std::set<std::string> after(now.promise.begin(), now.promise.end());
    std::vector<std::string> promise;
    for (const auto& line : saved.promise) {
        if (after.count(line) == 0) {
            promise.push_back("- " + std::string(trim(line)) + " (saved)");
        }
    }
    for (const auto& line : now.promise) {
        if (before.count(line) == 0) {
            promise.push_back("+ " + std::string(trim(line)) + " (now)");
        }
    }
    if (promise.empty() && saved.promise != now.promise) {
        promise.emplace_back("the same actions in another order");
    }
    add_capped(out, std::move(promise));
    return out;
}

} // namespace gpuprov
