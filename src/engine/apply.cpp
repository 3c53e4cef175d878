#include "resume.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/leftovers.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/rollback.hpp>
#include <gpuprov/strings.hpp>
#include <set>

namespace gpuprov {

namespace {

class Run {
public:
    Run(System& sys, const Profile& profile, const Matrix& matrix, const ApplyOptions& opt,
        Reporter& rep)
        : m_sys(sys), m_profile(profile), m_matrix(matrix), m_opt(opt), m_rep(rep),
          m_facts(detect_facts(sys, matrix)), m_pm(make_package_manager(m_facts)),
          m_repos(sys, profile, m_facts, matrix, default_repo_cache_dir(sys)),
          m_ctx{profile, m_facts, matrix, m_repos, units_gpuprov_path(sys)}, m_steps(make_steps()) {
        // The reporter writes to the terminal only (the log file is spdlog's, the journal
        // record()'s), which is what tell_operator promises.
        m_ctx.tell_operator = [this](std::string_view line) { m_rep.info(line); };
        m_repos.pins = m_opt.pins;
    }

    ApplyResult go() {
        clean_leftovers();
        start_journal();
        try {
            return go_journaled();
        } catch (const Interrupted&) {
            stopped();
        } catch (const Error& e) {
            fail(e.describe());
        } catch (const std::exception& e) {
            // Whatever escaped a step (a parser, the filesystem, memory) still ends the run
            // with a final journal entry instead of leaving it "running".
            fail(fmt::format("internal error: {}", e.what()));
        } catch (...) {
            fail("internal error: unknown exception");
        }
        finish_safely();
        return m_result;
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
        stop_point();
        auto plan = build_plan(m_ctx, m_sys, m_steps, m_opt.filter);
        for (const auto& ps : plan.steps) {
            if (ps.check.status == StepStatus::skipped) {
                m_ctx.skipped_steps.insert(ps.id);
            }
        }
        reverify_if_unproven(plan);
        // The simulation must see the very indexes the steps pinned from.
        const auto& cache_dir = m_repos.cache_dir();
        resolve_transactions(m_sys, m_ctx, plan,
                             {.allow_remove = m_opt.allow_remove,
                              .scratch_dir = cache_dir + "/apt-view",
                              .cache_dir = cache_dir});
        // The repair above already ran: this plan has it as the operator's plan showed it.
        plan.repair = m_repaired;
        if (refuse_unavailable_pins(plan)) {
            finish();
            return m_result;
        }
        m_planned = plan.transactions;
        if (refuse_unconfirmed(plan)) {
            finish();
            return m_result;
        }
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
        // A blocked step is refused before anything changes too, as the plan said (exit 1): a
        // host half provisioned (nouveau blacklisted and its initramfs rebuilt, no driver) is
        // worse than an untouched one. Steps that can go alone are chosen with --only.
        if (refuse_blocked_steps(plan)) {
            finish();
            return m_result;
        }
        if (plan.changes_pending()) {
            install_binary();
        }
        std::size_t i = 0;
        while (i < plan.steps.size() && m_result.status == StepStatus::done) {
            stop_point();
            const auto& ps = plan.steps[i];
            if (!apply_runs(ps.check.status)) {
                record(ps.id, ps.check.status, ps.check.reason, {});
                ++i;
                continue;
            }
            // Preflight (kernel headers) and verify run alone; everything between shares one
            // package transaction, since no step's packages depend on another's configure part.
            std::size_t end = i + 1;
            if (ps.id != "preflight" && ps.id != "verify") {
                while (end < plan.steps.size() && plan.steps[end].id != "verify") {
                    ++end;
                }
            }
            run_group(plan, i, end);
            i = end;
        }
        if (m_result.status == StepStatus::done && !m_reboot_message.empty()) {
            m_result.status = StepStatus::reboot_required;
            m_result.message = m_reboot_message;
        }
        finish();
        return m_result;
    }

private:
    /// Records every blocked step and fails the run naming them, when there is one.
    bool refuse_blocked_steps(const Plan& plan) {
        std::vector<std::string> blocked;
        for (const auto& ps : plan.steps) {
            if (ps.check.status == StepStatus::blocked) {
                record(ps.id, StepStatus::blocked, ps.check.reason, {});
                blocked.push_back(fmt::format("step '{}' is blocked: {}", ps.id, ps.check.reason));
            }
        }
        if (blocked.empty()) {
            return false;
        }
        fail(fmt::format("{}; {} (plan shows the same)", join(blocked, "; "), nothing_changed()));
        return true;
    }

    /// A rollback reinstalls the verified closure exactly or not at all: a version gone from
    /// the repositories is refused by name, and a transaction that would take another build of
    /// a closure package is blocked (the loop over blocked transactions then refuses it).
    bool refuse_unavailable_pins(Plan& plan) {
        if (m_opt.pins.empty()) {
            return false;
        }
        if (const auto missing = m_repos.missing_pins(); !missing.empty()) {
            fail(fmt::format("the verified closure's versions are no longer in the repositories: "
                             "{}; {}",
                             join(missing, ", "), nothing_changed()));
            return true;
        }
        auto pins = m_opt.pins;
        for (const auto& name : m_repos.foreign_pins()) {
            pins.erase(name);
        }
        (void)block_unpinned_versions(plan, pins);
        return false;
    }

    /// The closure the final verify just passed on, as the journal's newest verified entry
    /// when it differs from the one before (gpuprov/rollback.hpp). Only a run whose verify
    /// ran, or found the host as the last verified run left it, and that ended done.
    void record_verified() {
        const auto* v = m_journal.step("verify");
        if (!m_pm || m_recorded.count("verify") == 0 || v == nullptr ||
            (v->status != "done" && v->status != "satisfied")) {
            return;
        }
        // A rollback's closure is the one it restored, name for name: packages of the undone
        // change that stay installed beside it (another toolkit's cuda-toolkit-X-Y) are not
        // part of it, so the next rollback finds it current.
        std::set<std::string> names;
        for (const auto& [name, version] : m_opt.pins) {
            names.insert(name);
        }
        for (const auto& id : closure_steps()) {
            const auto* st = m_journal.step(id);
            if (st == nullptr || m_opt.rollback) {
                continue;
            }
            for (const auto& [name, version] : st->versions) {
                names.insert(name);
            }
        }
        VerifiedClosure c{.verified_at = rfc3339(m_sys.now()),
                          .via = m_opt.rollback ? "rollback" : "apply",
                          .profile = m_opt.profile_arg,
                          .profile_name = m_profile.name,
                          .profile_text = m_opt.profile_text,
                          .driver_branch = m_profile.driver ? m_profile.driver->branch : "",
                          .cuda = m_profile.cuda ? m_profile.cuda->version : "",
                          .packages = {}};
        for (const auto& name : names) {
            if (const auto version = m_pm->installed(m_sys, name)) {
                c.packages[name] = *version;
            }
        }
        record_verified_closure(m_journal, std::move(c));
    }

    /// "nothing was changed", or what was: the repair of an interrupted transaction runs
    /// before the plan, so a refusal after it must not claim an untouched host.
    [[nodiscard]] std::string nothing_changed() const {
        return m_repaired.empty()
                   ? std::string("nothing was changed")
                   : fmt::format("nothing was changed except finishing the interrupted package "
                                 "transaction ({})",
                                 m_repaired);
    }

    /// Interactive apply: the plan about to run must promise what the operator confirmed;
    /// anything else (the repository published a new build, another tool changed the host
    /// while the prompt waited) is refused before any change, with the differences.
    bool refuse_unconfirmed(const Plan& plan) {
        if (!m_opt.confirmed_plan) {
            return false;
        }
        const auto now = plan_promise(plan);
        const auto& confirmed = *m_opt.confirmed_plan;
        if (now == confirmed) {
            return false;
        }
        const std::set<std::string> now_set(now.begin(), now.end());
        const std::set<std::string> confirmed_set(confirmed.begin(), confirmed.end());
        std::vector<std::string> diff;
        for (const auto& line : confirmed) {
            if (now_set.count(line) == 0) {
                diff.push_back("- " + line);
            }
        }
        for (const auto& line : now) {
            if (confirmed_set.count(line) == 0) {
                diff.push_back("+ " + line);
            }
        }
        if (diff.empty()) {
            diff.emplace_back("(the same lines in another order)");
        }
        fail(fmt::format("the host changed since the plan you confirmed; {}. Differences (+ now, "
                         "- confirmed):\n  {}\nRun `gpuprov apply` again and review the new plan.",
                         nothing_changed(), join(diff, "\n  ")));
        return true;
    }

    /// Thrown at a stop point once a stop signal has arrived.
    struct Interrupted {};

    /// Between steps and after each phase that ran commands: a stop request (Ctrl-C, SIGTERM)
    /// ends the run here, before anything else starts; the journal is saved by the catch.
    static void stop_point() {
        if (stop_requested()) {
            throw Interrupted{};
        }
    }

    [[nodiscard]] static std::string interrupted_message() {
        return fmt::format("interrupted by signal {}; the remaining steps were not run (run "
                           "apply again to finish)",
                           stop_signal_name().empty() ? "" : std::string(stop_signal_name()));
    }

    void stopped() {
        m_result.interrupted = true;
        fail(interrupted_message());
    }

    /// The final verify has no state of its own to check, so on a host whose steps are all
    /// satisfied it would be "satisfied" without running. The journal says whether it passed
    /// last time; when it did not (it waited for a reboot, or failed), or when the last run
    /// never finished (killed: its result is still "running") or never reached it, it runs. A
    /// hint to run more checks, never a reason to skip one.
    void reverify_if_unproven(Plan& plan) {
        const auto* last = m_journal.step("verify");
        std::string why;
        if (m_last_result == "running") {
            why = "the last run was killed before it finished";
        } else if (last == nullptr && !m_journal.steps.empty()) {
            why = "the last run did not reach the final verify";
        } else if (last != nullptr && (last->status == "pending" || last->status == "failed" ||
                                       last->status == "reboot-required")) {
            why = "the last run did not verify the host (" + last->status + ")";
        }
        if (why.empty()) {
            return;
        }
        for (auto& ps : plan.steps) {
            if (ps.id == "verify" && ps.check.status == StepStatus::satisfied) {
                ps.check.status = StepStatus::pending;
                ps.check.reason = why;
            }
        }
    }

    /// Units run units_gpuprov_path(); when that is gpuprov's own copy, it must be this binary
    /// before any unit that runs it is written.
    void install_binary() {
        if (const auto change = gpuprov_binary_change(m_sys, m_opt.self_path, true)) {
            m_rep.info("installing " + change->detail);
            install_gpuprov_binary(m_sys, m_opt.self_path);
        }
    }

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
        // A damaged journal is history, not state: it must not stop the run that repairs the
        // host. It is kept beside, for a human.
        auto loaded = load_journal_or_move_aside(m_sys);
        if (!loaded.moved_to.empty()) {
            m_rep.info(fmt::format("warning: {} did not parse; moved it to {} and started a "
                                   "new journal",
                                   kJournalPath, loaded.moved_to));
        }
        m_journal = std::move(loaded.journal).value_or(Journal{});
        m_last_result = m_journal.result;
        m_journal.archive_last_run();
        m_boot_id = current_boot_id(m_sys);
        m_journal.boot_id = m_boot_id;
        m_journal.profile = m_opt.profile_arg;
        m_journal.profile_source = m_profile.source;
        m_journal.run_started_at = rfc3339(m_sys.now());
        m_journal.run_finished_at.clear();
        m_journal.result = "running";
        m_journal.message.clear();
        m_journal.runs += 1;
        save_journal(m_sys, m_journal);
    }

    void repair_interrupted() {
        if (!m_pm || !m_pm->interrupted(m_sys)) {
            return;
        }
        m_rep.info("an earlier package transaction was interrupted; finishing it first");
        wait_lock();
        const auto repair = m_pm->repair();
        run_checked(m_sys, repair);
        m_repaired = join(repair.argv, " ");
        m_facts = detect_facts(m_sys, m_matrix);
    }

    void wait_lock() {
        if (!wait_for_package_lock(m_sys, *m_pm, m_opt.lock_wait)) {
            stop_point(); // the wait ended for a stop request, not the deadline
            throw HostError(fmt::format(
                "another package manager still holds the dpkg lock after {} s; try again when "
                "it has finished",
                m_opt.lock_wait.count()));
        }
    }

    void run_group(const Plan& plan, std::size_t begin, std::size_t end) {
        std::vector<std::size_t> active;
        for (std::size_t k = begin; k < end; ++k) {
            if (apply_runs(plan.steps[k].check.status)) {
                active.push_back(k);
            } else {
                record(plan.steps[k].id, plan.steps[k].check.status, plan.steps[k].check.reason,
                       {});
            }
        }
        if (active.size() == 1 && plan.steps[active.front()].id == "verify" &&
            !m_reboot_message.empty()) {
            // The final checks need the module the reboot loads; they run when the resume unit
            // brings apply back, not now, where they could only fail.
            record("verify", StepStatus::pending, "runs after the reboot", {});
            return;
        }
        std::size_t current = active.front();
        bool installing = false;
        try {
            // Repositories and keys first: the package manager resolves against them.
            for (const auto k : active) {
                current = k;
                m_rep.step_started(plan.steps[k].id, plan.steps[k].summary);
                step(k).apply(m_ctx, m_sys, plan.steps[k].check, ApplyPhase::sources);
                m_refreshes += count_refreshes(plan.steps[k].check);
                stop_point();
            }
            // The guard, before anything that takes the old driver away (a runfile's
            // uninstall, the old branch's holds, nouveau's blacklist): the package manager
            // must resolve exactly what the plan showed, and nobody else may be installing.
            const auto txns = planned_for(plan, active);
            current = active.front();
            guard(txns);
            stop_point();
            for (const auto k : active) {
                current = k;
                step(k).apply(m_ctx, m_sys, plan.steps[k].check, ApplyPhase::prepare);
                stop_point();
            }
            installing = true;
            current = active.front();
            install(txns);
            installing = false;
            stop_point();
            for (const auto k : active) {
                current = k;
                configure(plan.steps[k], k);
                stop_point();
            }
        } catch (const Interrupted&) {
            m_result.interrupted = true;
            fail_group(plan, active, current, interrupted_message(), installing);
        } catch (Error& e) {
            if (stop_requested()) {
                // The command was stopped by the signal; that, not its exit status, is the news.
                m_result.interrupted = true;
                fail_group(plan, active, current,
                           fmt::format("{}: {}", interrupted_message(), e.describe()), installing);
                return;
            }
            e.add_context(installing
                              ? std::string("while installing the packages of this batch")
                              : fmt::format("while applying step '{}'", plan.steps[current].id));
            fail_group(plan, active, current, e.describe(), installing);
        } catch (const std::exception& e) {
            fail_group(plan, active, current,
                       fmt::format("internal error while applying step '{}': {}",
                                   plan.steps[current].id, e.what()),
                       installing);
        }
    }

    /// The configure half of one step, then the step's own checks. A step that waits for a
    /// reboot does not stop the others: their configuration (container runtime, tuning,
    /// monitoring) does not need the module, and the reboot then finds them done.
    void configure(const PlannedStep& ps, std::size_t k) {
        if (ps.id == "verify") {
            m_facts = detect_facts(m_sys, m_matrix);
        }
        const auto status = step(k).apply(m_ctx, m_sys, ps.check, ApplyPhase::configure);
        if (status == StepStatus::reboot_required) {
            reboot_requested(ps, k);
            return;
        }
        if (ps.id == "verify") {
            record(ps.id, StepStatus::done, "", {});
            return;
        }
        // What configure did (a module loaded, a service started) shows in the facts the
        // checks read.
        m_facts = detect_facts(m_sys, m_matrix);
        std::vector<std::string> failed;
        for (const auto& c : step(k).verify(m_ctx, m_sys)) {
            if (gpuprov::failed(c) && m_ctx.skipped_steps.count(c.step) == 0) {
                failed.push_back(fmt::format("{}: expected {}, found {}{}", c.id, c.expected,
                                             c.found,
                                             c.fix.empty() ? "" : " (fix: " + c.fix + ")"));
            }
        }
        if (failed.empty()) {
            recheck(ps, k);
            record(ps.id, StepStatus::done, "", versions(ps.check));
            return;
        }
        const auto list = join(failed, "; ");
        if (!m_reboot_message.empty()) {
            // Applied, but not provable before the reboot an earlier step waits for (the
            // checks talk to the driver): pending, and the resumed run verifies it.
            record(ps.id, StepStatus::pending,
                   fmt::format("applied; verified after the reboot ({})", list),
                   versions(ps.check));
            return;
        }
        throw HostError(fmt::format("applied, but {} of its check{} failed: {}", failed.size(),
                                    failed.size() == 1 ? "" : "s", list));
    }

    /// "Done" means the next plan finds the step satisfied: its own check, run again on the
    /// host as apply left it, must agree. A step whose effects did not take (a wants-link to a
    /// unit its packages never shipped) fails here with the check's reason, instead of saying
    /// done and being pending again on every run. While a reboot is awaited the checks that
    /// need the module cannot agree yet: the resumed run judges them.
    void recheck(const PlannedStep& ps, std::size_t k) {
        if (ps.id == "verify" || !m_reboot_message.empty()) {
            return;
        }
        const auto now = step(k).check(m_ctx, m_sys);
        if (now.status == StepStatus::satisfied || now.status == StepStatus::skipped) {
            return;
        }
        std::vector<std::string> left;
        for (const auto& c : now.changes) {
            if (c.kind != Change::Kind::note) {
                left.push_back(fmt::format("{} {}", to_string(c.kind), c.target));
            }
        }
        throw HostError(fmt::format(
            "applied, but its check is still {} afterwards{}{}: the next plan would show it "
            "again, so it did not converge",
            to_string(now.status), now.reason.empty() ? "" : " (" + now.reason + ")",
            left.empty() ? "" : "; still to do: " + join(left, ", ")));
    }

    /// The reboot budget: one reboot per step. The first request in a boot is recorded with
    /// that boot's id; a request in a later boot means the reboot happened and did not help,
    /// and the step fails with its evidence instead of rebooting the host again (and again).
    void reboot_requested(const PlannedStep& ps, std::size_t k) {
        auto evidence = step(k).reboot_evidence(m_ctx, m_sys);
        if (evidence.empty()) {
            evidence = reboot_reason();
        }
        const auto* last = m_journal.step(ps.id);
        const std::string first_boot = last != nullptr ? last->reboot_boot_id : "";
        const std::string first_at = last != nullptr ? last->reboot_requested_at : "";
        if (!first_boot.empty() && !m_boot_id.empty() && first_boot != m_boot_id) {
            throw HostError(fmt::format(
                "still needs a reboot after the reboot it asked for{} (boot {}, now boot {}): "
                "a reboot did not help, and gpuprov does not reboot twice for one step. "
                "Evidence: {}. Fix the cause (see `gpuprov doctor`), reboot by hand if the fix "
                "needs it, then run apply again",
                first_at.empty() ? "" : " at " + first_at, first_boot, m_boot_id, evidence));
        }
        auto& entry = m_journal.upsert(ps.id);
        if (entry.reboot_boot_id.empty()) {
            entry.reboot_boot_id = m_boot_id;
            entry.reboot_requested_at = rfc3339(m_sys.now());
        }
        record(ps.id, StepStatus::reboot_required, evidence, versions(ps.check));
        if (m_reboot_message.empty()) {
            m_reboot_message = fmt::format("step '{}' needs a reboot: {}", ps.id, evidence);
        }
    }

    // A failure inside a batch: every step of it that has no entry from this run yet gets its
    // own. When the package transaction failed, the error is each package step's own (their
    // packages were in it); otherwise the failed step has it and the later ones were not run.
    void fail_group(const Plan& plan, const std::vector<std::size_t>& active, std::size_t current,
                    const std::string& message, bool in_install) {
        for (const auto k : active) {
            const auto& ps = plan.steps[k];
            if (m_recorded.count(ps.id) != 0) {
                continue;
            }
            std::string why = message;
            if (m_result.interrupted) {
                // Every step left says the same: the run was stopped before it.
            } else if (in_install) {
                why = ps.check.installs.empty()
                          ? "not run: the package transaction of its batch failed: " + message
                          : message;
            } else if (k != current) {
                why = fmt::format("not run: step '{}' of the same batch failed: {}",
                                  plan.steps[current].id, message);
            }
            record(ps.id, StepStatus::failed, why, {});
        }
        fail(message);
    }

    /// The batch's planned transactions: the one that runs first (NVIDIA's pinning package)
    /// when there is one, and the batch's own.
    struct GroupTransactions {
        const PlannedTransaction* first = nullptr;
        const PlannedTransaction* main = nullptr;
    };

    [[nodiscard]] GroupTransactions planned_for(const Plan& plan,
                                                const std::vector<std::size_t>& active) const {
        GroupTransactions out;
        for (const auto& pt : m_planned) {
            for (const auto k : active) {
                if (std::find(pt.steps.begin(), pt.steps.end(), plan.steps[k].id) !=
                    pt.steps.end()) {
                    (pt.first ? out.first : out.main) = &pt;
                }
            }
        }
        bool packages = false;
        for (const auto k : active) {
            const auto& c = plan.steps[k].check;
            packages = packages || !c.installs.empty() || !c.removals.empty() ||
                       !c.modules.empty() || !c.pre_installs.empty() || !c.pre_removals.empty();
        }
        if (packages && out.main == nullptr) {
            throw Error("internal: no planned package transaction for this group");
        }
        return out;
    }

    /// What was asked of the package manager for `pt`; with `view`, in a private view whose
    /// preferences.d holds the files the first transaction will install (its pin).
    [[nodiscard]] SimulationRequest request_of(const PlannedTransaction& pt, bool view) const {
        SimulationRequest r{.installs = pt.transaction.requested,
                            .removals = pt.transaction.removals,
                            .modules = pt.transaction.modules};
        if (view && !pt.view_preferences.empty()) {
            r.scratch_dir = m_repos.cache_dir() + "/apt-view-apply";
            r.preferences = pt.view_preferences;
        }
        return r;
    }

    [[nodiscard]] static bool has_work(const PlannedTransaction& pt) {
        return !pt.transaction.requested.empty() || !pt.transaction.removals.empty() ||
               !pt.transaction.modules.empty();
    }

    /// The package manager, asked now, resolves `pt` as the plan showed it.
    void same_as_planned(const PlannedTransaction& pt, const SimulationRequest& req,
                         std::string_view changed_so_far) {
        const auto now = m_pm->simulate(m_sys, req);
        if (!now.error.empty()) {
            throw HostError(fmt::format("{}; {}", now.error, changed_so_far));
        }
        const auto diff = transaction_diff(pt.transaction.actions, now.actions);
        if (!diff.empty()) {
            throw HostError(fmt::format(
                "the package manager would now do something else than the plan showed; {}. "
                "Differences (+ now, - planned):\n  {}\nRun `gpuprov plan` again and review.",
                changed_so_far, join(diff, "\n  ")));
        }
    }

    /// Before any destructive work: each planned transaction resolves as shown (the batch's
    /// with the first one's pin in its view), and no other package manager holds the lock.
    void guard(const GroupTransactions& txns) {
        constexpr std::string_view nothing = "nothing was installed and no driver was touched";
        if (txns.first != nullptr && has_work(*txns.first)) {
            same_as_planned(*txns.first, request_of(*txns.first, false), nothing);
        }
        if (txns.main != nullptr && has_work(*txns.main)) {
            same_as_planned(*txns.main, request_of(*txns.main, txns.first != nullptr), nothing);
        }
        if ((txns.first != nullptr && has_work(*txns.first)) ||
            (txns.main != nullptr && has_work(*txns.main))) {
            wait_lock();
        }
    }

    void install(const GroupTransactions& txns) {
        bool first_ran = false;
        if (txns.first != nullptr && has_work(*txns.first)) {
            m_rep.info("installing NVIDIA's pinning package first, in its own transaction");
            run_transaction(*txns.first);
            first_ran = true;
        }
        if (txns.main == nullptr || !has_work(*txns.main)) {
            return;
        }
        if (first_ran) {
            // The pin is real now: apt must resolve the batch as the plan did with its copy.
            same_as_planned(*txns.main, request_of(*txns.main, false),
                            "only the pinning package was installed (its transaction above)");
        }
        run_transaction(*txns.main);
    }

    /// Carries out a planned transaction with every version and removal spelled out, so the
    /// package manager has no choice left.
    void run_transaction(const PlannedTransaction& planned) {
        const auto exact = planned.transaction.exact_installs();
        std::vector<std::string> specs;
        for (const auto& p : exact) {
            specs.push_back(p.spec());
        }
        m_rep.info(fmt::format("installing in one transaction: {}", join(specs, " ")));
        wait_lock();
        auto cmd =
            m_pm->install(exact, planned.transaction.exact_removals(), planned.transaction.modules);
        cmd.on_stdout = m_pm->progress_reader(
            [this](double percent, std::string_view what) { m_rep.progress(percent, what); });
        try {
            m_pm->check_install(cmd, run_checked(m_sys, cmd));
        } catch (...) {
            m_rep.progress_done();
            throw;
        }
        // apt's own last update stops short of 100% ("Installed X" at 98%).
        m_rep.progress(100, "done");
        m_rep.progress_done();
        m_installed.insert(m_installed.end(), exact.begin(), exact.end());
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
        if (const auto held = competing_driver_holding(m_facts, m_sys); !held.empty()) {
            return held + " holds the GPUs until the blacklist takes effect at boot";
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
        if (status == StepStatus::done || status == StepStatus::satisfied) {
            // The reboot worked (or was never needed): a later need, say after a branch
            // change, gets its own reboot.
            s.reboot_boot_id.clear();
            s.reboot_requested_at.clear();
        }
        s.message = message;
        if (!versions.empty()) {
            s.versions = std::move(versions);
        }
        m_result.steps.emplace_back(id, status);
        m_recorded.insert(id);
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
                detail::install_resume_unit(m_sys, resume_command());
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
            if (m_profile.readiness && !step_filtered_out("readiness", m_opt.filter, m_profile)) {
                // gpuprov-ready.service reads this copy at every boot (src/steps/readiness.cpp).
                (void)resume_profile();
            }
            m_journal.reboot_pending = false;
            m_journal.result = "done";
            record_verified();
        } else {
            // Pending only if a step of this run still waits for one; a step whose reboot did
            // not help has failed, and no reboot is pending for it.
            m_journal.reboot_pending = !m_reboot_message.empty();
            m_journal.result = "failed";
            // A failed or blocked run must not repeat at every boot; one stopped by a signal
            // (a shutdown) has not failed, and its unit finishes it at the next boot.
            if (!m_result.interrupted) {
                if (const auto note = detail::retire_resume_unit(m_sys); !note.empty()) {
                    m_result.message += "; " + note;
                }
            }
        }
        m_journal.message = m_result.message;
        m_journal.run_finished_at = rfc3339(m_sys.now());
        save_journal(m_sys, m_journal);
        if (m_result.status == StepStatus::reboot_required &&
            m_opt.reboot == RebootPolicy::if_needed && !stop_requested()) {
            // Only steps within their budget get here: one that already had its reboot failed.
            m_rep.info("rebooting now; gpuprov-resume.service finishes the run at boot");
            const auto r = m_sys.run({.argv = {"systemctl", "reboot"}, .timeout = 60s});
            if (!r.ok()) {
                // The run's result stands (a reboot is needed, the unit is in place); only the
                // automatic part did not happen.
                m_rep.info(fmt::format("systemctl reboot failed (exit {}): {}; reboot by hand",
                                       r.exit_code, std::string(trim(r.err))));
            }
        }
    }

    /// finish() for the catch-alls: whatever fails in it, the journal still gets a final
    /// result, however little else can be written.
    void finish_safely() {
        try {
            finish();
            return;
        } catch (const std::exception& e) {
            fail(m_result.message + (m_result.message.empty() ? "" : "; ") +
                 "while saving the journal: " + e.what());
        } catch (...) {
            fail(m_result.message + "; while saving the journal: unknown exception");
        }
        try {
            m_journal.result = "failed";
            m_journal.message = m_result.message;
            m_journal.run_finished_at = rfc3339(m_sys.now());
            save_journal(m_sys, m_journal);
        } catch (...) {
            // Nothing is left to write it with; the result still reaches the caller.
        }
    }

    /// The same run again, from stable places: the installed binary path, the profile under
    /// /etc/gpuprov/resume/ (or the built-in name), the same filters and reboot policy.
    [[nodiscard]] detail::ResumeCommand resume_command() {
        return {.gpuprov_path = m_ctx.gpuprov_path,
                .profile = resume_profile(),
                .only = m_opt.filter.only,
                .skip = m_opt.filter.skip,
                .reboot_if_needed = m_opt.reboot == RebootPolicy::if_needed,
                .allow_remove = m_opt.allow_remove,
                .upgrade = m_opt.upgrade,
                .rollback = m_opt.rollback,
                .bundle_dir = m_opt.bundle_dir,
                .bundle_key = m_opt.bundle_key};
    }

    /// Installs the profile where the resume unit reads it, so /tmp/p.yaml may vanish with the
    /// reboot. The built-in profiles are in the binary: their name is enough.
    [[nodiscard]] std::string resume_profile() {
        if (m_opt.rollback) {
            return {}; // `gpuprov rollback` reads its profile from the journal
        }
        if (m_opt.profile_text.empty()) {
            return m_opt.profile_arg;
        }
        return detail::install_resume_profile(m_sys, m_profile.name, m_opt.profile_text,
                                              m_opt.profile_arg);
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
    std::set<std::string> m_recorded; ///< steps with an entry from this run
    std::string m_boot_id;            ///< this boot's id (empty: unknown, no budget check)
    std::string m_last_result;        ///< the journal's result before this run ("running": killed)
    std::string m_reboot_message;     ///< the first step's reboot need in this run; empty: none
    std::string m_repaired; ///< the repair of an interrupted transaction this run ran; or empty
};

} // namespace

ApplyResult apply_profile(System& sys, const Profile& profile, const Matrix& matrix,
                          const ApplyOptions& options, Reporter& reporter) {
    if (sys.effective_uid() != 0) {
        throw HostError("apply changes the system and must run as root (try: sudo gpuprov apply "
                        "...); `gpuprov plan` shows the changes without root");
    }
    if (!options.bundle_dir.empty() || !options.bundle_key.empty()) {
        // The resume unit must be able to name the bundle after a reboot: refused now, not
        // once the driver is installed and the unit is written.
        detail::check_resume_bundle(options.bundle_dir, options.bundle_key);
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
