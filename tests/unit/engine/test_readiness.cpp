// The readiness step: gpuprov-ready.service holds kubelet and slurmd at boot until
// `gpuprov verify --quick` passes (docs/upgrade.md#readiness-gate).
#include "host_builder.hpp"

#include <gpuprov/error.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;

namespace {

constexpr const char* kUnit = "/etc/systemd/system/gpuprov-ready.service";

Profile gated(const std::string& readiness) {
    return load_profile_text(
        "name: gated-node\ndriver: {branch: \"580\"}\nreadiness: " + readiness + "\n", "gated.yaml",
        matrix());
}

TEST(Readiness, SkippedWithoutTheGate) {
    TestHost host;
    const auto off = gated("{gate: false}");
    EXPECT_FALSE(off.readiness);
    StepRunner run(host, off);
    EXPECT_EQ(run.check("readiness").status, StepStatus::skipped);
}

TEST(Readiness, WritesAGateOrderedBeforeKubeletAndSlurmd) {
    TestHost host;
    const auto p = gated("{gate: true, timeout_s: 300}");
    StepRunner run(host, p);
    auto& step = run.step("readiness");
    const auto planned = step.check(run.ctx(), host.sys);
    EXPECT_EQ(planned.status, StepStatus::pending);
    EXPECT_EQ(step.apply(run.ctx(), host.sys, planned, ApplyPhase::configure), StepStatus::done);
    const auto unit = host.sys.file(kUnit);
    ASSERT_TRUE(unit);
    for (const auto* line :
         {"Before=kubelet.service slurmd.service\n", "Type=oneshot\n", "RemainAfterExit=yes\n",
          "ExecStart=/usr/local/bin/gpuprov verify /etc/gpuprov/resume/gated-node.yaml --quick "
          "--wait 300\n",
          "TimeoutStartSec=360\n", "WantedBy=kubelet.service\n", "WantedBy=slurmd.service\n",
          "WantedBy=multi-user.target\n"}) {
        EXPECT_NE(unit->find(line), std::string::npos) << line << " in\n" << *unit;
    }
    EXPECT_EQ(step.check(run.ctx(), host.sys).status, StepStatus::satisfied);
    const auto checks = step.verify(run.ctx(), host.sys);
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
}

TEST(Readiness, ABuiltInProfileIsNamedNotCopied) {
    TestHost host;
    auto p = gated("{gate: true}");
    p.source = "builtin:gated-node.yaml";
    StepRunner run(host, p);
    auto& step = run.step("readiness");
    (void)step.apply(run.ctx(), host.sys, {}, ApplyPhase::configure);
    EXPECT_NE(host.sys.file(kUnit)->find("verify gated-node --quick --wait 600\n"),
              std::string::npos);
}

TEST(Readiness, RejectsATimeoutOutOfRange) {
    EXPECT_THROW((void)gated("{gate: true, timeout_s: 1}"), ProfileError);
    EXPECT_THROW((void)gated("{gates: true}"), ProfileError);
}

} // namespace
