// Each malformed fixture under tests/fixtures/profiles/bad/ must fail at an exact line:col with
// a message that says what was expected.
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

struct BadCase {
    const char* file;
    int line;
    int col;
    const char* phrase;
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) {
    return os << c.file;
}

class BadProfile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadProfile, FailsAtLineAndColumnWithMessage) {
    const auto& c = GetParam();
    const auto path = test::profile_fixture(std::string("bad/") + c.file);
    try {
        (void)load_profile(path, Matrix::builtin());
        FAIL() << c.file << " loaded without error";
    } catch (const ProfileError& e) {
        EXPECT_EQ(e.file(), path);
        EXPECT_EQ(e.line(), c.line) << e.what();
        EXPECT_EQ(e.col(), c.col) << e.what();
        EXPECT_TRUE(test::contains(e.message(), c.phrase)) << e.what();
        const auto prefix =
            path + ":" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": ";
        EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0U) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadProfile,
    ::testing::Values(
        BadCase{"syntax-error.yaml", 3, 1,
                "YAML syntax error: end of map flow not found; a '{' before this point has no"},
        BadCase{"tab-indent.yaml", 3, 1, "tab character in indentation"},
        BadCase{"wrong-type.yaml", 3, 7,
                "'cuda' must be a mapping (allowed keys: version); got the value '12.4'"},
        BadCase{"wrong-type-bool.yaml", 4, 7, "'nccl' must be true or false; got 'yes'"},
        BadCase{"unknown-key.yaml", 3, 8, "unknown key 'cuda.verison'; did you mean 'version'?"},
        BadCase{"unknown-top-key.yaml", 2, 1, "unknown key 'drivers'; did you mean 'driver'?"},
        BadCase{"bad-name.yaml", 1, 7, "must be 1-63 characters of [a-z0-9-]"},
        BadCase{"injection-name.yaml", 1, 7, "'name' contains ';'"},
        BadCase{"injection-flavor.yaml", 2, 33, "'driver.flavor' contains '$'"},
        BadCase{"newline-url.yaml", 4, 10, "'repositories.cuda.url' contains a newline"},
        BadCase{"http-url.yaml", 4, 10, "uses http://"},
        BadCase{"bad-fingerprint.yaml", 6, 22, "has 8 hex digits; expected the key's full"},
        BadCase{"cuda-99.yaml", 3, 17, "'99.9' is not one gpuprov knows. Known releases: 11.0"},
        BadCase{"branch-too-old.yaml", 2, 18,
                "driver branch 470 is too old for CUDA 12.4, which needs branch 550 or newer "
                "(toolkit driver 550.54.14), or branch 525 or newer under minor version "
                "compatibility. On data-center GPUs, NVIDIA's forward compatibility package "
                "cuda-compat-12-4"},
        BadCase{"cudnn8-cuda13.yaml", 4, 18, "cuDNN 8.9 has no build for CUDA 13.0"},
        BadCase{"cudnn9-cuda112.yaml", 4, 18,
                "cuDNN 9 has no build for CUDA 11.2 (cuDNN 9.0-9.4 builds for CUDA 11.4+, 12.0+"},
        BadCase{"open-r470.yaml", 4, 33,
                "driver branch 470 has no open kernel modules; NVIDIA ships them from branch 515"},
        BadCase{"a10-cuda110.yaml", 5, 17,
                "CUDA 11.0 cannot build code for A10 (ampere, compute capability 8.6); it needs "
                "CUDA 11.1 or newer"},
        BadCase{"b200-r550.yaml", 4, 18,
                "driver branch 550 does not support B200 (blackwell), which needs branch 570"},
        BadCase{"v100-r590.yaml", 4, 18,
                "driver branch 590 no longer supports V100 (volta); the last branch that does is "
                "580"},
        BadCase{"unknown-step.yaml", 3, 22, "'steps.skip[1]' must be one of preflight"},
        BadCase{"negative-count.yaml", 3, 17, "'host.gpus.count' must be a whole number from 1"},
        BadCase{"unknown-gpu.yaml", 3, 27, "(did you mean 'A100'?)"},
        BadCase{"open-volta.yaml", 4, 33, "open kernel modules do not support V100"},
        BadCase{"proprietary-blackwell.yaml", 4, 33,
                "proprietary kernel modules do not support B200"},
        BadCase{"duplicate-key.yaml", 3, 1, "duplicate key 'nccl'"},
        BadCase{"bad-branch.yaml", 2, 18, "3-digit driver branch"},
        BadCase{"bad-os.yaml", 3, 22, "'host.os[1]' must be one of ubuntu-20.04"},
        BadCase{"relative-textfile-dir.yaml", 3, 17, "must be an absolute path"},
        BadCase{"missing-name.yaml", 1, 1, "'name' is required at the top level"},
        BadCase{"unknown-repository.yaml", 3, 3,
                "unknown repository 'cuda-repo'; allowed: cuda, container-toolkit"}),
    [](const ::testing::TestParamInfo<BadCase>& fixture) {
        std::string name = fixture.param.file;
        name = name.substr(0, name.size() - 5);
        for (auto& ch : name) {
            if (ch == '-') {
                ch = '_';
            }
        }
        return name;
    });

} // namespace
} // namespace gpuprov
