#include "resume.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/leftovers.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>
#include <set>

namespace gpuprov {

namespace {

bool runs(StepStatus s) {
    return s == StepStatus::pending || s == StepStatus::reboot_required;
}

class Run {
public:
    Run(System& sys, const Profile& profile, const Matrix& matrix, const ApplyOptions& opt,
        Reporter& rep)
        : m_sys(sys), m_profile(profile), m_matrix(matrix), m_opt(opt), m_rep(rep),
          m_facts(detect_facts(sys, matrix)), m_pm(make_package_manager(m_facts)),
          m_repos(sys, profile, m_facts, default_repo_cache_dir(sys)), m_ctx{profile, m_facts,
                                                                             matrix, m_repos,
                                                                             opt.gpuprov_path},
          m_steps(make_steps()) {}

    ApplyResult go() {
        clean_leftovers();
        start_journal();
        try {
            return go_journaled();
        } catch (const std::exception& e) {
            // Whatever escaped a step (a parser, the filesystem, memory) still ends the run
            // with a final journal entry instead of leaving it "running".
            fail(fmt::format("internal error: {}", e.what()));
            finish();
            return m_result;
        }
    }

    ApplyResult go_journaled() {
        try {
            repair_interrupted();
        } catch (Error& e) {
            e.add_context("while finishing an interrupted package transaction");
            fail(e.describe());
            finish();
            return m_result;
        }
        auto plan = build_plan(m_ctx, m_sys, m_steps, m_opt.filter);
        for (const auto& ps : plan.steps) {
            if (ps.check.status == StepStatus::skipped) {
                m_ctx.skipped_steps.insert(ps.id);
            }
        }
        const auto cache_dir = default_repo_cache_dir(m_sys);
        resolve_transactions(m_sys, m_ctx, plan,
                             {.allow_remove = m_opt.allow_remove,
                              .scratch_dir = cache_dir + "/apt-view",
                              .cache_dir = cache_dir});
        m_planned = plan.transactions;
        for (const auto& pt : plan.transactions) {
            if (!pt.blocked.empty()) {
                // Refused before anything changes: the reviewed transaction cannot be run.
                for (const auto& id : pt.steps) {
                    record(id, StepStatus::blocked, pt.blocked, {});
                }
                fail(pt.blocked);
                finish();
                return m_result;
            }
        }
        std::size_t i = 0;
        while (i < plan.steps.size() && m_result.status == StepStatus::done) {
            const auto& ps = plan.steps[i];
            if (ps.check.status == StepStatus::blocked) {
                record(ps.id, StepStatus::blocked, ps.check.reason, {});
                fail(fmt::format("step '{}' is blocked: {}", ps.id, ps.check.reason));
                break;
            }
            if (!runs(ps.check.status)) {
                record(ps.id, ps.check.status, ps.check.reason, {});
                ++i;
                continue;
            }
            // Preflight (kernel headers) and verify run alone; everything between shares one
            // package transaction, since no step's packages depend on another's configure part.
            std::size_t end = i + 1;
            if (ps.id != "preflight" && ps.id != "verify") {
                while (end < plan.steps.size() && plan.steps[end].id != "verify" &&
                       plan.steps[end].check.status != StepStatus::blocked) {
                    ++end;
                }
            }
            run_group(plan, i, end);
            i = end;
        }
        finish();
        return m_result;
    }

private:
    /// A run killed inside write_file_atomic left "*.gpuprov-tmp-*" files; nothing else removes
    /// them. Failing to is worth a line, not the run.
    void clean_leftovers() {
        try {
            std::vector<std::string> extra;
            if (m_profile.monitoring) {
                extra.push_back(m_profile.monitoring->textfile_dir);
            }
            for (const auto& path : clean_leftover_temp_files(m_sys, extra)) {
                m_rep.info("removed a half-written file left by an interrupted run: " + path);
            }
        } catch (const Error& e) {
            m_rep.info(std::string("could not remove leftover temp files: ") + e.what());
        }
    }

    void start_journal() {
        m_journal = load_journal(m_sys).value_or(Journal{});
        m_journal.profile = m_opt.profile_arg;
        m_journal.profile_source = m_profile.source;
        m_journal.run_started_at = rfc3339(m_sys.now());
        m_journal.run_finished_at.clear();
        m_journal.result = "running";
        m_journal.runs += 1;
        save_journal(m_sys, m_journal);
    }

    void repair_interrupted() {
        if (!m_pm || !m_pm->interrupted(m_sys)) {
            return;
        }
        m_rep.info("an earlier package transaction was interrupted; finishing it first");
        wait_lock();
        run_checked(m_sys, m_pm->repair());
        m_facts = detect_facts(m_sys, m_matrix);
    }

    void wait_lock() {
        if (!wait_for_package_lock(m_sys, *m_pm, m_opt.lock_wait)) {
            throw HostError(fmt::format(
                "another package manager still holds the dpkg lock after {} s; try again when "
                "it has finished",
                m_opt.lock_wait.count()));
        }
    }

    void run_group(const Plan& plan, std::size_t begin, std::size_t end) {
        std::vector<std::size_t> active;
        for (std::size_t k = begin; k < end; ++k) {
            if (runs(plan.steps[k].check.status)) {
                active.push_back(k);
            } else {
                record(plan.steps[k].id, plan.steps[k].check.status, plan.steps[k].check.reason,
                       {});
            }
        }
        std::size_t current = active.front();
        try {
            for (const auto k : active) {
                current = k;
                m_rep.step_started(plan.steps[k].id, plan.steps[k].summary);
                step(k).apply(m_ctx, m_sys, plan.steps[k].check, ApplyPhase::prepare);
                m_refreshes += count_refreshes(plan.steps[k].check);
            }
            install(plan, active, current);
            for (const auto k : active) {
                current = k;
                if (plan.steps[k].id == "verify") {
                    m_facts = detect_facts(m_sys, m_matrix);
                }
                const auto status =
                    step(k).apply(m_ctx, m_sys, plan.steps[k].check, ApplyPhase::configure);
                record(plan.steps[k].id, status,
                       status == StepStatus::reboot_required ? reboot_reason() : "",
                       versions(plan.steps[k].check));
                if (status == StepStatus::reboot_required) {
                    m_result.status = StepStatus::reboot_required;
                    m_result.message = fmt::format("step '{}' needs a reboot: {}", plan.steps[k].id,
                                                   reboot_reason());
                    return;
                }
            }
        } catch (Error& e) {
            e.add_context(fmt::format("while applying step '{}'", plan.steps[current].id));
            fail_group(plan, active, current, e.describe());
        } catch (const std::exception& e) {
            fail_group(plan, active, current,
                       fmt::format("internal error while applying step '{}': {}",
                                   plan.steps[current].id, e.what()));
        }
    }

    // A failure inside a batch: the step that failed and every later step of the batch (its
    // packages were in the same transaction, or it never ran) get their own entry.
    void fail_group(const Plan& plan, const std::vector<std::size_t>& active, std::size_t current,
                    const std::string& message) {
        bool reached = false;
        for (const auto k : active) {
            reached = reached || k == current;
            if (reached) {
                record(plan.steps[k].id, StepStatus::failed,
                       k == current ? message
                                    : fmt::format("not run: step '{}' of the same batch failed: {}",
                                                  plan.steps[current].id, message),
                       {});
            }
        }
        fail(message);
    }

    void install(const Plan& plan, const std::vector<std::size_t>& active, std::size_t& current) {
        std::vector<PackagePin> pins;
        std::set<std::string> seen;
        for (const auto k : active) {
            for (const auto& pin : plan.steps[k].check.installs) {
                if (seen.insert(pin.name).second) {
                    pins.push_back(pin);
                }
            }
        }
        if (pins.empty()) {
            return;
        }
        current = active.front();
        // apt, now that the sources are in place, must resolve what the plan showed; then the
        // transaction runs with every version and removal spelled out, so apt has no choice.
        const PlannedTransaction* planned = nullptr;
        for (const auto& pt : m_planned) {
            for (const auto k : active) {
                if (std::find(pt.steps.begin(), pt.steps.end(), plan.steps[k].id) !=
                    pt.steps.end()) {
                    planned = &pt;
                }
            }
        }
        if (planned == nullptr) {
            throw Error("internal: no planned package transaction for this group");
        }
        std::vector<std::string> removals;
        for (const auto k : active) {
            const auto& r = plan.steps[k].check.removals;
            removals.insert(removals.end(), r.begin(), r.end());
        }
        const auto now = m_pm->simulate(m_sys, {.installs = pins, .removals = removals});
        if (!now.error.empty()) {
            throw HostError(now.error);
        }
        const auto diff = transaction_diff(planned->transaction.actions, now.actions);
        if (!diff.empty()) {
            throw HostError(fmt::format(
                "apt would now do something else than the plan showed; nothing was installed. "
                "Differences (+ now, - planned):\n  {}\nRun `gpuprov plan` again and review.",
                join(diff, "\n  ")));
        }
        const auto exact = planned->transaction.exact_installs();
        std::vector<std::string> specs;
        for (const auto& p : exact) {
            specs.push_back(p.spec());
        }
        m_rep.info(fmt::format("installing in one transaction: {}", join(specs, " ")));
        wait_lock();
        run_checked(m_sys, m_pm->install(exact, planned->transaction.exact_removals()));
        m_installed = exact;
        ++m_result.apt_transactions;
        m_facts = detect_facts(m_sys, m_matrix);
    }

    static int count_refreshes(const CheckResult& check) {
        int n = 0;
        for (const auto& c : check.changes) {
            n += c.kind == Change::Kind::command && starts_with(c.target, "apt-get update") ? 1 : 0;
        }
        return n;
    }

    // A step's packages and everything the transaction installed for them (their dependency
    // closure among the installed packages): what a later branch change may remove as its own.
    [[nodiscard]] std::map<std::string, std::string> versions(const CheckResult& check) const {
        std::map<std::string, std::string> installed;
        for (const auto& p : m_installed) {
            installed[p.name] = p.version;
        }
        std::vector<std::string> roots;
        std::map<std::string, std::string> out;
        for (const auto& p : check.installs) {
            out[p.name] = p.version;
            roots.push_back(p.name);
        }
        if (!m_pm || installed.empty()) {
            return out;
        }
        const auto closure = dependency_closure(
            roots, [&](const std::string& n) { return m_pm->installed_depends(m_sys, n); },
            [&](std::string_view n) { return installed.count(std::string(n)) != 0; });
        for (const auto& name : closure) {
            if (const auto it = installed.find(name); it != installed.end()) {
                out[name] = it->second;
            }
        }
        return out;
    }

    [[nodiscard]] std::string reboot_reason() const {
        if (m_facts.nouveau_loaded || m_sys.exists("/sys/module/nouveau")) {
            return "nouveau holds the GPUs until the blacklist takes effect at boot";
        }
        return "the NVIDIA kernel module could not be loaded without a reboot";
    }

    Step& step(std::size_t k) { return *m_steps[k]; }

    void record(const std::string& id, StepStatus status, const std::string& message,
                std::map<std::string, std::string> versions) {
        auto& s = m_journal.upsert(id);
        const auto now = rfc3339(m_sys.now());
        if (runs_now(status)) {
            s.started_at = s.started_at.empty() ? now : s.started_at;
        }
        s.status = std::string(to_string(status));
        s.finished_at = now;
        s.message = message;
        if (!versions.empty()) {
            s.versions = std::move(versions);
        }
        m_result.steps.emplace_back(id, status);
        m_rep.step_finished(id, status, message);
        // Each save is an fsync; a step that changed nothing is written with the run's end.
        if (runs_now(status)) {
            save_journal(m_sys, m_journal);
        }
    }

    static bool runs_now(StepStatus s) {
        return s == StepStatus::done || s == StepStatus::failed || s == StepStatus::reboot_required;
    }

    void fail(const std::string& message) {
        m_result.status = StepStatus::failed;
        m_result.message = message;
    }

    void finish() {
        m_result.index_refreshes = m_refreshes;
        if (m_result.status == StepStatus::reboot_required) {
            try {
                detail::install_resume_unit(m_sys, m_opt.gpuprov_path, m_opt.profile_arg);
                m_journal.reboot_pending = true;
                m_journal.result = "reboot-required";
            } catch (const Error& e) {
                // Without the unit nothing resumes after the reboot: that is a failure, and the
                // journal must say so rather than stay "running".
                fail(e.describe());
                m_journal.result = "failed";
            }
        } else if (m_result.status == StepStatus::done) {
            detail::remove_resume_unit(m_sys);
            m_journal.reboot_pending = false;
            m_journal.result = "done";
        } else {
            m_journal.result = "failed";
        }
        m_journal.run_finished_at = rfc3339(m_sys.now());
        save_journal(m_sys, m_journal);
        if (m_result.status == StepStatus::reboot_required &&
            m_opt.reboot == RebootPolicy::if_needed) {
            m_rep.info("rebooting now; gpuprov-resume.service finishes the run at boot");
            run_checked(m_sys, {.argv = {"systemctl", "reboot"}, .timeout = 60s});
        }
    }

    System& m_sys;
    const Profile& m_profile;
    const Matrix& m_matrix;
    const ApplyOptions& m_opt;
    Reporter& m_rep;
    HostFacts m_facts;
    std::unique_ptr<PackageManager> m_pm;
    LiveRepoProvider m_repos;
    StepContext m_ctx;
    std::vector<std::unique_ptr<Step>> m_steps;
    Journal m_journal;
    ApplyResult m_result;
    std::vector<PlannedTransaction> m_planned;
    std::vector<PackagePin> m_installed; ///< every package the transaction installed
    int m_refreshes = 0;
};

} // namespace

ApplyResult apply_profile(System& sys, const Profile& profile, const Matrix& matrix,
                          const ApplyOptions& options, Reporter& reporter) {
    if (sys.effective_uid() != 0) {
        throw HostError("apply changes the system and must run as root (try: sudo gpuprov apply "
                        "...); `gpuprov plan` shows the changes without root");
    }
    const auto lock = sys.try_lock(kRunLockPath);
    if (!lock) {
        throw HostError(
            fmt::format("another gpuprov run holds {}; wait for it to finish", kRunLockPath));
    }
    Run run(sys, profile, matrix, options, reporter);
    return run.go();
}

} // namespace gpuprov
