// The saved plan (`plan --out`, `apply --plan`): what it keeps, and every way it goes stale
// being named (issue 20 item 1).
#include <gpuprov/error.hpp>
#include <gpuprov/saved_plan.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;

namespace {

PlanSeal seal() {
    PlanSeal s;
    s.promise = {"step driver pending", "transaction for driver",
                 "  install nvidia-open-580 580.95.05-1"};
    s.profile_digest = "sha256:aa";
    s.host = {{"kernel", "6.1.0-25-amd64"},
              {"gpus", {{{"address", "0000:17:00.0"}, {"model", "A100"}}}}};
    s.indexes = {{"cuda", "sha256:11"}};
    return s;
}

bool has(const std::vector<std::string>& lines, std::string_view needle) {
    for (const auto& l : lines) {
        if (l.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST(SavedPlan, UnchangedHasNoDifferences) {
    EXPECT_TRUE(saved_plan_differences(seal(), seal()).empty());
}

TEST(SavedPlan, ANewerBuildOnTheMirrorIsNamedByPackage) {
    auto now = seal();
    now.indexes["cuda"] = "sha256:22";
    now.promise[2] = "  install nvidia-open-580 580.105.08-1";
    const auto d = saved_plan_differences(seal(), now);
    EXPECT_TRUE(
        has(d, "repository cuda: its signed index changed (sha256:11 saved, sha256:22 now)"));
    EXPECT_TRUE(has(d, "- install nvidia-open-580 580.95.05-1 (saved)"));
    EXPECT_TRUE(has(d, "+ install nvidia-open-580 580.105.08-1 (now)"));
    EXPECT_EQ(d.size(), 3u);
}

TEST(SavedPlan, ProfileAndHostChangesAreNamed) {
    auto now = seal();
    now.profile_digest = "sha256:bb";
    now.host["kernel"] = "6.1.0-26-amd64";
    now.host["gpus"][0]["model"] = "H100";
    now.host["nouveau_loaded"] = true;
    const auto d = saved_plan_differences(seal(), now);
    EXPECT_TRUE(has(d, "the profile changed"));
    EXPECT_TRUE(has(d, R"(host: kernel: "6.1.0-25-amd64" saved, "6.1.0-26-amd64" now)"));
    EXPECT_TRUE(has(d, R"(host: gpus[0].model: "A100" saved, "H100" now)"));
    EXPECT_TRUE(has(d, "host: nouveau_loaded: absent when saved, true now"));
}

TEST(SavedPlan, AnotherOrderIsADifference) {
    auto now = seal();
    std::swap(now.promise[0], now.promise[1]);
    EXPECT_EQ(saved_plan_differences(seal(), now),
              std::vector<std::string>{"the same actions in another order"});
}

TEST(SavedPlan, RoundTripsThroughJson) {
    SavedPlan s;
    s.gpuprov_version = "0.1.0";
    s.created_at = "2026-12-04T19:00:00Z";
    s.profile_arg = "/etc/gpuprov/site.yaml";
    s.only = {"driver"};
    s.allow_remove = true;
    s.seal = seal();
    const auto doc = saved_plan_to_json(s);
    EXPECT_EQ(doc["format_version"], 1);
    const auto back = saved_plan_from_json(doc.dump(), "plan.json");
    EXPECT_EQ(back.profile_arg, s.profile_arg);
    EXPECT_EQ(back.only, s.only);
    EXPECT_TRUE(back.allow_remove);
    EXPECT_TRUE(saved_plan_differences(back.seal, s.seal).empty());
}

TEST(SavedPlan, RefusesWhatItCannotRead) {
    EXPECT_THROW((void)saved_plan_from_json("{}", "x.json"), UsageError);
    EXPECT_THROW((void)saved_plan_from_json("not json", "x.json"), UsageError);
    auto doc = saved_plan_to_json(SavedPlan{});
    doc["format_version"] = 2;
    try {
        (void)saved_plan_from_json(doc.dump(), "x.json");
        FAIL() << "format_version 2 accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("format_version 2 is not 1"), std::string::npos);
    }
    doc = saved_plan_to_json(SavedPlan{});
    doc.erase("promise");
    EXPECT_THROW((void)saved_plan_from_json(doc.dump(), "x.json"), UsageError);
}
