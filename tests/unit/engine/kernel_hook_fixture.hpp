#pragma once
// The driver step's kernel hook (issue 23 item 3) as a converged driver leaves it, for tests that
// build a converged host by hand.
#include "fake_system.hpp"
#include "kernel_hooks.hpp"

namespace gpuprov::enginetest {

inline void install_kernel_hook(gpuprov::testing::FakeSystem& sys,
                                std::string_view family = "debian") {
    const auto hook = steps::kernel_hook_file(family, "/usr/local/bin/gpuprov", false);
    sys.add_file(hook.path, hook.content);
    sys.set_mode(hook.path, 0755);
}

} // namespace gpuprov::enginetest
