// A 10-30 minute driver + CUDA install shows progress: apt's status channel is read as it comes
// and reaches the reporter, whatever the pipe does to its lines.
#include "host_builder.hpp"

#include <gpuprov/package_manager.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;

namespace {

// Lines in the format of apt-pkg's install-progress.cc ("pmstatus:%s:%.4f:%s") and
// acquire-progress (dlstatus), including the shapes other projects' tests pin down: a
// multi-arch package name, colons in the text, a text that starts with a number.
TEST(AptStatus, ParsesPackageManagerAndDownloadLines) {
    auto st = parse_apt_status_line("pmstatus:dpkg-exec:0.0000:Running dpkg");
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->download);
    EXPECT_EQ(st->package, "dpkg-exec");
    EXPECT_DOUBLE_EQ(st->percent, 0);
    EXPECT_EQ(st->text, "Running dpkg");

    st = parse_apt_status_line(
        "pmstatus:libssl3t64:amd64:62.5:Setting up libssl3t64:amd64 (3.0.13): done: 1:2");
    ASSERT_TRUE(st);
    EXPECT_EQ(st->package, "libssl3t64:amd64");
    EXPECT_DOUBLE_EQ(st->percent, 62.5);
    EXPECT_EQ(st->text, "Setting up libssl3t64:amd64 (3.0.13): done: 1:2");

    st = parse_apt_status_line("pmstatus:tor:90:3 triggers to process");
    ASSERT_TRUE(st);
    EXPECT_DOUBLE_EQ(st->percent, 90);
    EXPECT_EQ(st->text, "3 triggers to process");

    st = parse_apt_status_line("dlstatus:2:27.1686:Retrieving file 2 of 3");
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->download);
    EXPECT_DOUBLE_EQ(st->percent, 27.1686);
}

TEST(AptStatus, OtherLinesAreNotProgress) {
    for (const auto* line : {"Setting up nvidia-driver-550 (550.90.07-1) ...",
                             "Get:2 https://127.0.0.1/cuda  cuda-drivers-550 550.90.07-1 [1 kB]",
                             "pmstatus:bad:notanumber:Description", "pmstatus:", "",
                             "pmconffile:/etc/x:/etc/x.dpkg-new:1:1"}) {
        EXPECT_FALSE(parse_apt_status_line(line)) << line;
    }
}

TEST(AptStatus, TheReaderJoinsLinesSplitAcrossReads) {
    HostFacts facts;
    facts.os.id = "debian";
    facts.os.family = "debian";
    const auto pm = make_package_manager(facts);
    ASSERT_NE(pm, nullptr);
    std::vector<std::pair<double, std::string>> seen;
    auto reader = pm->progress_reader(
        [&](double p, std::string_view what) { seen.emplace_back(p, std::string(what)); });
    ASSERT_TRUE(reader);
    reader("Reading package lists...\npmstatus:cuda-drivers-5");
    EXPECT_TRUE(seen.empty()); // half a line is not an update
    reader("50:25.0000:Unpacking cuda-drivers-550 (amd64)\npmstat");
    reader("us:nvidia-driver-550:50.0000:Configuring nvidia-driver-550 (amd64)\n");
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0], std::make_pair(25.0, std::string("Unpacking cuda-drivers-550 (amd64)")));
    EXPECT_EQ(seen[1].second, "Configuring nvidia-driver-550 (amd64)");
}

using Progress = ApplyTest;

TEST_F(Progress, TheInstallTransactionReportsEachPackageThenEnds) {
    TestHost host;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    ASSERT_FALSE(reporter.progressed.empty());
    EXPECT_EQ(reporter.progressed.front(), std::make_pair(0.0, std::string("Running dpkg")));
    ASSERT_GE(reporter.progressed.size(), 2u);
    const auto& last_apt = reporter.progressed[reporter.progressed.size() - 2];
    EXPECT_EQ(last_apt.second, "Unpacking libnvidia-container1 (amd64)");
    // apt stops short of 100%; the engine says when the transaction is over.
    EXPECT_EQ(reporter.progressed.back(), std::make_pair(100.0, std::string("done")));
    for (std::size_t i = 1; i < reporter.progressed.size(); ++i) {
        EXPECT_GE(reporter.progressed[i].first, reporter.progressed[i - 1].first);
    }
    EXPECT_EQ(reporter.progress_ends, 1);
}

} // namespace
