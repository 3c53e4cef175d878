#pragma once
// Scripted tool answers and small profiles shared by the nvidia tests.
#include "find_check.hpp"

#include <algorithm>
#include <fake_system.hpp>
#include <gpuprov/checks.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>
#include <optional>

namespace gpuprov::testing {

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

inline CommandResult answer_ok(std::string out) {
    CommandResult r;
    r.out = std::move(out);
    return r;
}

inline CommandResult answer_failed(int code, std::string err, std::string out = {}) {
    CommandResult r;
    r.exit_code = code;
    r.err = std::move(err);
    r.out = std::move(out);
    return r;
}

inline CommandResult answer_missing() {
    CommandResult r;
    r.exit_code = 127;
    r.not_found = true;
    return r;
}

/// nvidia-smi --query-gpu answering with a fixture under cmd/nvidia-smi/.
inline void script_query(FakeSystem& sys, const std::string& fixture) {
    sys.on_command(smi_query_argv(), answer_ok(read_fixture("cmd/nvidia-smi/" + fixture)));
}

inline void script_query_error(FakeSystem& sys, const std::string& fixture) {
    // nvidia-smi prints these messages on stdout; its exit status for them is UNCONFIRMED
    // (commonly 9), and the classification does not depend on it.
    sys.on_command(smi_query_argv(),
                   answer_failed(9, "", read_fixture("cmd/nvidia-smi/" + fixture)));
}

inline Profile driver_profile(std::string branch, std::string cuda = {}) {
    Profile p;
    p.name = "test";
    p.driver = DriverSpec{.branch = std::move(branch)};
    if (!cuda.empty()) {
        p.cuda = CudaSpec{.version = std::move(cuda)};
    }
    return p;
}

inline HostFacts debian_facts(std::string kernel = "5.15.0-91-generic") {
    HostFacts f;
    f.os.id = "ubuntu";
    f.os.family = "debian";
    f.kernel = std::move(kernel);
    return f;
}

using gpuprov::testing::find_check;

inline std::vector<std::string> ids_of(const std::vector<CheckOutcome>& all) {
    std::vector<std::string> ids;
    for (const auto& c : all) {
        ids.push_back(c.id);
    }
    return ids;
}

} // namespace gpuprov::testing
