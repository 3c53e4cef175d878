#pragma once
#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gtest/gtest.h>
#include <string>

namespace gpuprov::test {

inline std::string profile_fixture(const std::string& relative) {
    return std::string(GPUPROV_FIXTURES_DIR) + "/profiles/" + relative;
}

/// `yaml` loaded as a profile file against the built-in matrix.
inline Profile load(const std::string& yaml, const std::string& source = "t.yaml") {
    return load_profile_text(yaml, source, Matrix::builtin());
}

/// The ProfileError that loading `yaml` raises; a test failure when it loads.
inline ProfileError load_error(const std::string& yaml, const std::string& source = "t.yaml") {
    try {
        (void)load_profile_text(yaml, source, Matrix::builtin());
    } catch (const ProfileError& e) {
        return e;
    }
    ADD_FAILURE() << "loaded without error:\n" << yaml;
    return ProfileError(source, 0, 0, "");
}

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

} // namespace gpuprov::test
