// framework: {pytorch, venv}: what verify --smoke runs PyTorch with.
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;

TEST(Framework, PytorchMajorOrMinorWithAnOptionalVenv) {
    const auto p = load("name: x\nframework: {pytorch: \"2.x\", venv: /opt/venv}\n");
    ASSERT_TRUE(p.framework);
    EXPECT_EQ(p.framework->pytorch, "2.x");
    EXPECT_EQ(p.framework->venv, "/opt/venv");
    const auto q = load("name: x\nframework: {pytorch: 2.4}\n");
    EXPECT_EQ(q.framework->pytorch, "2.4");
    EXPECT_EQ(q.framework->venv, "");
    EXPECT_FALSE(load("name: x\n").framework);
    // The training built-in names the PyTorch its users run.
    const auto cv = load_profile("cv-train", Matrix::builtin());
    ASSERT_TRUE(cv.framework);
    EXPECT_EQ(cv.framework->pytorch, "2.x");
}

TEST(Framework, BadVersionsAndPathsAreRefusedAtTheKey) {
    auto e = load_error("name: x\nframework:\n  pytorch: latest\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.col(), 12);
    EXPECT_TRUE(contains(e.message(), "'framework.pytorch' must be a PyTorch major")) << e.what();
    EXPECT_TRUE(contains(e.message(), "got 'latest'")) << e.what();
    e = load_error("name: x\nframework: {pytorch: \"2.x.1\"}\n");
    EXPECT_TRUE(contains(e.message(), "framework.pytorch")) << e.what();
    e = load_error("name: x\nframework: {pytorch: \"2\", venv: venv}\n");
    EXPECT_TRUE(contains(e.message(), "framework.venv")) << e.what();
    e = load_error("name: x\nframework: {venv: /opt/venv}\n");
    EXPECT_TRUE(contains(e.message(), "pytorch")) << e.what();
    e = load_error("name: x\nframework: {pytorch: \"2\", tensorflow: \"2\"}\n");
    EXPECT_TRUE(contains(e.message(), "tensorflow")) << e.what();
}

} // namespace
} // namespace gpuprov
