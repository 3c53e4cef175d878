// The `forecast --json` document (docs/schemas/forecast.schema.json).
#include <gpuprov/forecast.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

namespace {

nlohmann::json optional_bool(const std::optional<bool>& b) {
    return b ? nlohmann::json(*b) : nlohmann::json(nullptr);
}

} // namespace

nlohmann::json forecast_to_json(const Forecast& f) {
    auto kernels = nlohmann::json::array();
    for (const auto& k : f.kernels) {
        nlohmann::json module = nullptr;
        if (k.module) {
            module = {{"path", k.module->path},
                      {"version", k.module->version},
                      {"origin", k.module->origin},
                      {"signer", k.signature_trusted ? nlohmann::json(k.signer) : nullptr}};
        }
        kernels.push_back({{"kernel", k.kernel},
                           {"running", k.running},
                           {"next_boot", k.next_boot},
                           {"headers", k.headers},
                           {"module", module},
                           {"version_matches", k.version_matches},
                           {"initramfs_blacklisted", optional_bool(k.initramfs_blacklisted)},
                           {"signature_trusted", optional_bool(k.signature_trusted)},
                           {"ready", k.ready}});
    }
    auto findings = nlohmann::json::array();
    int errors = 0;
    for (const auto& x : f.findings) {
        errors += x.severity == "error" ? 1 : 0;
        findings.push_back({{"id", x.id},
                            {"severity", x.severity},
                            {"kernel", x.kernel},
                            {"summary", x.summary},
                            {"fix", x.fix}});
    }
    auto actions = nlohmann::json::array();
    for (const auto& a : f.upgrade.actions) {
        actions.push_back({{"action", std::string(to_string(a.kind))},
                           {"name", a.name},
                           {"from", a.from},
                           {"to", a.to}});
    }
    return {{"ready", f.ready},
            {"next_boot",
             {{"kernel", f.next_boot.kernel},
              {"source", f.next_boot.source},
              {"fallback", f.next_boot.fallback}}},
            {"driver_version", f.driver_version},
            {"fabric_manager_version", f.fabric_manager_version},
            {"secure_boot", optional_bool(f.secure_boot)},
            {"kernels", kernels},
            {"upgrade",
             {{"asked", f.upgrade.asked},
              {"command", f.upgrade.command},
              {"skipped", f.upgrade.skipped},
              {"actions", actions}}},
            {"findings", findings},
            {"summary",
             {{"errors", errors}, {"warnings", static_cast<int>(f.findings.size()) - errors}}}};
}

} // namespace gpuprov
