#pragma once
// A new, empty directory for the running test, named after it: the tests that touch a real
// file system (LocalSystem, the log file) use one each, so they cannot see each other's files.
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace gpuprov::testing {

inline std::filesystem::path fresh_test_dir() {
    auto dir = std::filesystem::temp_directory_path() /
               ("gpuprov-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace gpuprov::testing
