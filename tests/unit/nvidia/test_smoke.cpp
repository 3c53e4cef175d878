// verify --smoke against the fake System: the GPU gate, nvcc's and the program's failures,
// nccl-tests and PyTorch. Outputs come from tests/fixtures/cmd/smoke and cmd/nccl-tests.
#include "nvidia_test_util.hpp"

#include <gpuprov/smoke.hpp>

namespace gpuprov::testing {
namespace {

constexpr const char* kDir = "/tmp/gpuprov-smoke-Ab12Cd";
constexpr const char* kSmokeNvcc = "/usr/local/cuda-12.4/bin/nvcc";
const std::string kBinary = std::string(kDir) + "/gpuprov-smoke";
const std::string kSource = std::string(kDir) + "/gpuprov_smoke.cu";

PciGpu h200(std::string address) {
    PciGpu g;
    g.address = std::move(address);
    g.vendor_id = 0x10de;
    g.device_id = 0x2335;
    g.class_code = 0x030200;
    g.model = "H200";
    g.compute_capability = "9.0";
    return g;
}

// nvidia-smi listing two H200s: query-550-h200.csv's row and a second one on the next bus.
CommandResult two_h200s() {
    return answer_ok(read_fixture("cmd/nvidia-smi/query-550-h200.csv") +
                     "1, GPU-00000000-0000-0000-0000-000000000201, NVIDIA H200, 00000000:19:00.0, "
                     "550.54.14, 143771, 0, 0, 29, 75.00, 700.00, Disabled, Disabled\n");
}

struct Smoke : ::testing::Test {
    FakeSystem sys;
    Profile profile = driver_profile("550", "12.4");
    HostFacts facts = debian_facts();
    std::vector<std::string> path = {"/usr/local/bin", "/usr/bin"};

    Smoke() { facts.gpus = {h200("0000:18:00.0")}; }

    std::vector<SmokeOutcome> run() { return run_smoke({profile, facts, kDir, path}, sys); }
    SmokeOutcome one(std::string_view id) {
        for (auto& o : run()) {
            if (o.id == id) {
                return o;
            }
        }
        ADD_FAILURE() << "no outcome " << id;
        return {};
    }
    std::vector<std::string> compile_argv() const {
        return {kSmokeNvcc, "-O2", "-gencode=arch=compute_90,code=sm_90", "-o", kBinary, kSource};
    }
    // nvcc writes the program (as the real one does) and answers `result`.
    void nvcc_builds(CommandResult result = {}) {
        sys.on_command_prefix({kSmokeNvcc}, [this, result](const Command&) {
            if (result.ok()) {
                sys.add_file(kBinary, "\x7f"
                                      "ELF");
            }
            return result;
        });
    }
    void program_prints(const std::string& fixture, int exit_code = 0) {
        auto r = answer_ok(read_fixture("cmd/smoke/" + fixture));
        r.exit_code = exit_code;
        sys.on_command({kBinary}, r);
    }
    bool ran(const std::string& argv0) const {
        for (const auto& c : sys.commands_ran) {
            if (!c.empty() && c[0] == argv0) {
                return true;
            }
        }
        return false;
    }
};

// ---- the GPU gate ----

TEST_F(Smoke, WithoutAGpuOnPciEveryTestIsSkippedAndNothingRuns) {
    facts.gpus.clear();
    const auto all = run();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].id, "smoke.cuda");
    EXPECT_EQ(all[1].id, "smoke.nccl");
    EXPECT_EQ(all[2].id, "smoke.pytorch");
    for (const auto& o : all) {
        EXPECT_EQ(o.status, SmokeStatus::skipped) << o.id;
        EXPECT_TRUE(contains(o.reason, "no NVIDIA GPU on PCI")) << o.reason;
        EXPECT_FALSE(o.fix.empty());
    }
    EXPECT_TRUE(sys.commands_ran.empty());
    EXPECT_TRUE(sys.queries.empty());
    EXPECT_TRUE(sys.files_written.empty());
}

TEST_F(Smoke, WhenNvidiaSmiFailsEveryTestIsSkippedWithItsWords) {
    script_query_error(sys, "error-driver-not-loaded.txt");
    for (const auto& o : run()) {
        EXPECT_EQ(o.status, SmokeStatus::skipped) << o.id;
        EXPECT_TRUE(contains(o.reason, "nvidia-smi failed (exit status 9)")) << o.reason;
        EXPECT_TRUE(contains(o.excerpt, "couldn't communicate with the NVIDIA driver"))
            << o.excerpt;
        EXPECT_TRUE(contains(o.fix, "gpuprov verify test")) << o.fix;
    }
    EXPECT_TRUE(sys.commands_ran.empty());
    EXPECT_TRUE(sys.files_written.empty());
}

TEST_F(Smoke, NvidiaSmiMissingIsASkipToo) {
    sys.on_command(smi_query_argv(), answer_missing());
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::skipped);
    EXPECT_TRUE(contains(o.reason, "not installed")) << o.reason;
}

// ---- smoke.cuda ----

TEST_F(Smoke, CudaCompilesNativeCodeRunsAndChecksEveryGpu) {
    script_query(sys, "query-550-h200.csv");
    nvcc_builds();
    program_prints("cuda-1xh200-ok.txt");
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::passed) << o.reason;
    EXPECT_EQ(o.found, "1 GPU added 1048576 floats right: NVIDIA H200 (sm_90)");
    EXPECT_TRUE(o.reason.empty());
    EXPECT_TRUE(o.fix.empty());
    // The source went into the private directory only, readable by its owner only.
    EXPECT_EQ(sys.files_written, std::vector<std::string>{kSource});
    EXPECT_EQ(sys.file(kSource), std::string(cuda_smoke_source()));
    EXPECT_EQ(sys.mode_of(kSource) & 0777, 0600u);
    ASSERT_GE(sys.commands_ran.size(), 2u);
    EXPECT_EQ(sys.commands_ran[0], compile_argv());
    EXPECT_EQ(sys.commands_ran[1], std::vector<std::string>{kBinary});
    EXPECT_TRUE(contains(o.command, "-gencode=arch=compute_90,code=sm_90")) << o.command;
}

TEST_F(Smoke, EmbeddedCudaSourceIsTheProgramTheParserReads) {
    const auto src = cuda_smoke_source();
    EXPECT_TRUE(contains(std::string(src), "__global__ void vector_add")) << src.substr(0, 200);
    EXPECT_TRUE(contains(std::string(src), "gpuprov-smoke vector-add device=%d elements=%d"));
    EXPECT_TRUE(contains(std::string(torch_smoke_source()), "torch.cuda.is_available()"));
}

TEST_F(Smoke, MixedOrUnknownGpusLeaveTheArchitectureToNvcc) {
    script_query(sys, "query-550-h200.csv");
    auto unknown = h200("0000:19:00.0");
    unknown.compute_capability.clear();
    facts.gpus.push_back(unknown);
    nvcc_builds();
    program_prints("cuda-1xh200-ok.txt");
    (void)run();
    ASSERT_FALSE(sys.commands_ran.empty());
    EXPECT_EQ(sys.commands_ran[0],
              (std::vector<std::string>{kSmokeNvcc, "-O2", "-o", kBinary, kSource}));
}

TEST_F(Smoke, NvccWithoutAHostCompilerIsExplained) {
    script_query(sys, "query-550-h200.csv");
    nvcc_builds(answer_failed(1, read_fixture("cmd/smoke/nvcc-no-gcc-13.0.txt")));
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "nvcc found no host C++ compiler (exit status 1)");
    EXPECT_TRUE(contains(o.fix, "apt-get install g++")) << o.fix;
    EXPECT_TRUE(contains(o.excerpt, "Failed to preprocess host compiler properties"));
    EXPECT_FALSE(ran(kBinary));
}

TEST_F(Smoke, CompileErrorsShowTheCompilersLines) {
    script_query(sys, "query-550-h200.csv");
    nvcc_builds(answer_failed(2, read_fixture("cmd/smoke/nvcc-syntax-error-13.0.txt")));
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "nvcc could not compile gpuprov's CUDA program (exit status 2)");
    EXPECT_TRUE(contains(o.excerpt, "error: expected an expression")) << o.excerpt;
    EXPECT_FALSE(ran(kBinary));
}

TEST_F(Smoke, MissingNvccPointsAtTheToolkitStep) {
    script_query(sys, "query-550-h200.csv");
    nvcc_builds(answer_missing());
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "/usr/local/cuda-12.4/bin/nvcc is missing")) << o.reason;
    EXPECT_EQ(o.fix, "gpuprov apply test --only cuda-toolkit");
}

TEST_F(Smoke, AnNvccThatWritesNothingFails) {
    // The e2e stand-in nvcc prints its version whatever it is asked and exits 0.
    script_query(sys, "query-550-h200.csv");
    sys.on_command(compile_argv(), answer_ok(read_fixture("cmd/nvcc/cuda-12.4.txt")));
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "nvcc exited 0 but wrote no program at " + kBinary);
    EXPECT_FALSE(ran(kBinary));
}

TEST_F(Smoke, NoDriverForTheRuntimeIsTheProgramsOwnError) {
    // A real run of the program on a host with CUDA 13.0 and no NVIDIA driver.
    script_query(sys, "query-550-h200.csv");
    nvcc_builds();
    program_prints("cuda-no-driver-13.0.txt", 2);
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "cudaGetDeviceCount failed: CUDA driver version is insufficient for CUDA "
                        "runtime version (cudaError 35)");
    EXPECT_TRUE(contains(o.fix, "driver")) << o.fix;
}

TEST_F(Smoke, WrongSumsFailNamingTheGpu) {
    sys.on_command(smi_query_argv(), two_h200s());
    facts.gpus.push_back(h200("0000:19:00.0"));
    nvcc_builds();
    program_prints("cuda-2xh200-wrong.txt", 1);
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "wrong results: GPU 1 (NVIDIA H200): 12 of 1048576 sums wrong");
    EXPECT_TRUE(o.found.empty());
}

TEST_F(Smoke, AHangingProgramIsKilledAtTheDeadline) {
    script_query(sys, "query-550-h200.csv");
    nvcc_builds();
    CommandResult hung;
    hung.exit_code = 137;
    hung.timed_out = true;
    hung.out = "gpuprov-smoke versions runtime=12040 driver=12040\ngpuprov-smoke devices 1\n";
    sys.on_command({kBinary}, hung);
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "timed out after 60 s")) << o.reason;
}

TEST_F(Smoke, FewerCudaDevicesThanNvidiaSmiListsFails) {
    sys.on_command(smi_query_argv(), two_h200s());
    nvcc_builds();
    program_prints("cuda-1xh200-ok.txt");
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "CUDA reported 1 device with results for 1; nvidia-smi lists 2");
}

TEST_F(Smoke, ANoexecTemporaryDirectoryIsNamed) {
    script_query(sys, "query-550-h200.csv");
    nvcc_builds();
    sys.on_command({kBinary}, answer_missing());
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.fix, "noexec")) << o.fix;
}

TEST_F(Smoke, AProfileWithoutCudaSkipsTheCompile) {
    script_query(sys, "query-550-h200.csv");
    profile.cuda.reset();
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::skipped);
    EXPECT_TRUE(contains(o.reason, "no cuda: section")) << o.reason;
    EXPECT_TRUE(sys.files_written.empty());
}

// ---- smoke.nccl ----

struct SmokeNccl : Smoke {
    SmokeNccl() {
        // Two H200s: the capture below ran all_reduce_perf -g 2.
        sys.on_command(smi_query_argv(), two_h200s());
        facts.gpus.push_back(h200("0000:19:00.0"));
        profile.cuda.reset(); // only the NCCL test runs
        path = {"relative/bin", "/home/u/nccl-tests/build", "/usr/bin"};
    }
    std::vector<std::string> argv(const std::string& tool) const {
        return {tool, "-b", "8", "-e", "128M", "-f", "2", "-g", "2", "-c", "1"};
    }
};

TEST_F(SmokeNccl, AbsentNcclTestsIsSkippedWithWhereItLooked) {
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::skipped);
    EXPECT_TRUE(contains(o.reason, "all_reduce_perf (nccl-tests) is not on PATH")) << o.reason;
    EXPECT_TRUE(contains(o.fix, "github.com/NVIDIA/nccl-tests")) << o.fix;
    EXPECT_TRUE(sys.commands_ran.empty());
}

TEST_F(SmokeNccl, RunsOnEveryGpuAndReadsTheBusBandwidth) {
    const std::string tool = "/home/u/nccl-tests/build/all_reduce_perf";
    sys.add_file(tool, "");
    sys.add_file("/opt/nccl-tests/build/all_reduce_perf", ""); // PATH comes first
    sys.on_command(argv(tool),
                   answer_ok(read_fixture("cmd/nccl-tests/all_reduce_perf-g2-2080ti.txt")));
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::passed) << o.reason;
    EXPECT_EQ(o.found, "2 GPUs, data correct, avg bus bandwidth 2.05774 GB/s");
    EXPECT_EQ(sys.commands_ran, std::vector<std::vector<std::string>>{argv(tool)});
}

TEST_F(SmokeNccl, WrongValuesFail) {
    const std::string tool = "/opt/nccl-tests/build/all_reduce_perf";
    sys.add_file(tool, "");
    auto r = answer_ok(read_fixture("cmd/nccl-tests/all_reduce_perf-g2-wrong.txt"));
    r.exit_code = 1; // nccl-tests exits EXIT_FAILURE when values were wrong
    sys.on_command(argv(tool), r);
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "all_reduce_perf exit status 1");
    EXPECT_TRUE(contains(o.excerpt, "Out of bounds values : 3 FAILED")) << o.excerpt;
    // The same output with exit 0 is still judged by its numbers.
    r.exit_code = 0;
    sys.on_command(argv(tool), r);
    const auto again = one("smoke.nccl");
    EXPECT_EQ(again.status, SmokeStatus::failed);
    EXPECT_EQ(again.reason, "wrong results: 3 values out of bounds in 1 sizes");
}

TEST_F(SmokeNccl, MissingLibncclPointsAtTheNcclStep) {
    const std::string tool = "/usr/bin/all_reduce_perf";
    sys.add_file(tool, "");
    sys.on_command(argv(tool),
                   answer_failed(127, "/usr/bin/all_reduce_perf: error while loading shared "
                                      "libraries: libnccl.so.2: cannot open shared object file: "
                                      "No such file or directory"));
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.fix, "nccl: true")) << o.fix;
}

TEST_F(SmokeNccl, OutputWithoutTheSummaryIsNeverAPass) {
    const std::string tool = "/usr/bin/all_reduce_perf";
    sys.add_file(tool, "");
    sys.on_command(argv(tool), answer_ok("# nThread 1 nGpus 2 minBytes 8\n"));
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "no \"Out of bounds values\"")) << o.reason;
}

// ---- smoke.pytorch ----

struct SmokeTorch : Smoke {
    const std::string python = "/opt/venv/bin/python";
    SmokeTorch() {
        script_query(sys, "query-550-h200.csv");
        profile.cuda.reset();
        profile.framework = FrameworkSpec{.pytorch = "2.x", .venv = "/opt/venv"};
    }
    void torch_prints(const std::string& fixture, int exit_code) {
        sys.add_file(python, "");
        sys.on_command_prefix({python}, [this, fixture, exit_code](const Command& c) {
            // The probe arrives on stdin, never as a shell string; Python runs isolated (-I:
            // no cwd, PYTHON* or user site on sys.path), from /.
            EXPECT_EQ(c.argv, (std::vector<std::string>{python, "-I", "-"}));
            EXPECT_EQ(c.cwd, "/");
            EXPECT_EQ(c.stdin_data.value_or(""), std::string(torch_smoke_source()));
            auto r = answer_ok(read_fixture("cmd/smoke/" + fixture));
            r.exit_code = exit_code;
            return r;
        });
    }
};

TEST_F(SmokeTorch, AProfileWithoutAFrameworkSkipsIt) {
    profile.framework.reset();
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::skipped);
    EXPECT_TRUE(contains(o.reason, "names no framework")) << o.reason;
}

TEST_F(SmokeTorch, AMissingVenvIsSkippedWithHowToMakeIt) {
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::skipped);
    EXPECT_EQ(o.reason, "/opt/venv/bin/python does not exist, so torch cannot be imported (no "
                        "virtualenv at /opt/venv)");
    EXPECT_EQ(o.fix, "python3 -m venv /opt/venv && /opt/venv/bin/python -m pip install "
                     "'torch==2.*'");
    EXPECT_FALSE(ran(python));
}

TEST_F(SmokeTorch, NoVenvMeansTheSystemPython) {
    profile.framework->venv.clear();
    const auto o = one("smoke.pytorch");
    EXPECT_TRUE(contains(o.reason, "/usr/bin/python3 does not exist")) << o.reason;
}

TEST_F(SmokeTorch, TorchNotInstalledIsSkipped) {
    torch_prints("torch-missing.txt", 3);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::skipped);
    EXPECT_EQ(o.reason, "torch is not importable by /opt/venv/bin/python: "
                        "ModuleNotFoundError: No module named 'torch'");
    EXPECT_EQ(o.fix, "/opt/venv/bin/python -m pip install 'torch==2.*'");
}

TEST_F(SmokeTorch, MatmulOnTheGpuPasses) {
    torch_prints("torch-2.4.1-ok.txt", 0);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::passed) << o.reason;
    EXPECT_EQ(o.found,
              "torch 2.4.1+cu124 (CUDA 12.4) sees 1 GPU; matmul of 262144 elements correct");
}

TEST_F(SmokeTorch, AnotherMajorOrMinorFails) {
    profile.framework->pytorch = "2.5";
    torch_prints("torch-2.4.1-ok.txt", 0);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "torch 2.4.1+cu124 is installed; the profile wants 2.5");
    profile.framework->pytorch = "2.4";
    EXPECT_EQ(one("smoke.pytorch").status, SmokeStatus::passed);
}

TEST_F(SmokeTorch, ACpuOnlyBuildFailsSayingSo) {
    torch_prints("torch-cpu-only.txt", 2);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason,
              "torch.cuda.is_available() is False (torch 2.4.1+cpu built for CUDA none: a "
              "CPU-only build)");
}

TEST_F(SmokeTorch, WrongMatmulFails) {
    sys.add_file(python, "");
    auto r = answer_ok("gpuprov-smoke torch version=2.4.1+cu124 cuda=12.4\n"
                       "gpuprov-smoke cuda-available True devices=1\n"
                       "gpuprov-smoke matmul elements=262144 wrong=7\n");
    r.exit_code = 1;
    sys.on_command({python, "-I", "-"}, r);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "wrong results: 7 of 262144 matmul elements differ from the CPU's");
}

TEST_F(SmokeTorch, AnErrorOnTheGpuFails) {
    sys.add_file(python, "");
    sys.on_command({python, "-I", "-"},
                   answer_failed(1, "",
                                 "gpuprov-smoke torch version=2.4.1+cu124 cuda=12.4\n"
                                 "gpuprov-smoke cuda-available True devices=1\n"
                                 "gpuprov-smoke error RuntimeError: CUDA error: "
                                 "no kernel image is available for execution\n"));
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_EQ(o.reason, "the matmul on the GPU raised RuntimeError: CUDA error: no kernel image "
                        "is available for execution");
}

// ---- as root, only what root alone can change runs (issue 26 item 1) ----

TEST_F(SmokeTorch, AsRootAVenvSomeoneElseOwnsIsRefusedAndNotRun) {
    torch_prints("torch-2.4.1-ok.txt", 0);
    sys.set_owner("/opt/venv", 1000, 1000);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "refusing to run /opt/venv/bin/python as root")) << o.reason;
    EXPECT_TRUE(contains(o.reason, "directory /opt/venv (owner uid 1000, group gid 1000, mode "
                                   "0755)"))
        << o.reason;
    EXPECT_TRUE(contains(o.fix, "chown root:root")) << o.fix;
    EXPECT_TRUE(contains(o.fix, "run verify --smoke as the user who owns it")) << o.fix;
    EXPECT_FALSE(ran(python));
}

TEST_F(SmokeTorch, AsRootAPythonLinkedToAnotherUsersFileIsRefused) {
    torch_prints("torch-2.4.1-ok.txt", 0);
    sys.add_file("/home/u/bin/python3", "");
    sys.set_owner("/home/u/bin/python3", 1000);
    sys.add_link(python, "/home/u/bin/python3");
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "file /home/u/bin/python3 (owner uid 1000")) << o.reason;
    EXPECT_FALSE(ran(python));
}

TEST_F(SmokeTorch, AsRootAVenvWhoseSitePackagesOthersCanWriteIsRefused) {
    // A .pth file dropped there runs at Python's start, before any import.
    torch_prints("torch-2.4.1-ok.txt", 0);
    sys.add_file("/opt/venv/pyvenv.cfg", "home = /usr/bin\n");
    sys.add_dir("/opt/venv/lib/python3.11/site-packages");
    sys.set_mode("/opt/venv/lib/python3.11/site-packages", 01777);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "Python with code from /opt/venv/lib/python3.11/site-packages"))
        << o.reason;
    EXPECT_TRUE(contains(o.reason, "mode 1777) is writable by group or others")) << o.reason;
    EXPECT_FALSE(ran(python));
    // Root's, 0755: it runs.
    sys.set_mode("/opt/venv/lib/python3.11/site-packages", 0755);
    EXPECT_EQ(one("smoke.pytorch").status, SmokeStatus::passed);
}

TEST_F(SmokeTorch, AsRootAVenvWhosePyvenvCfgOthersCanWriteIsRefused) {
    // Its `home` picks the installation whose standard library Python loads.
    torch_prints("torch-2.4.1-ok.txt", 0);
    sys.add_file("/opt/venv/pyvenv.cfg", "home = /usr/bin\n");
    sys.set_mode("/opt/venv/pyvenv.cfg", 0666);
    const auto o = one("smoke.pytorch");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "file /opt/venv/pyvenv.cfg (owner uid 0, group gid 0, mode "
                                   "0666) is writable by group or others"))
        << o.reason;
    EXPECT_FALSE(ran(python));
}

TEST_F(SmokeTorch, AUserRunsTheirOwnVenv) {
    // Not root: nobody gains anything from the user's own files.
    torch_prints("torch-2.4.1-ok.txt", 0);
    sys.set_uid(1000);
    sys.set_owner("/opt/venv", 1000, 1000);
    EXPECT_EQ(one("smoke.pytorch").status, SmokeStatus::passed);
}

TEST_F(SmokeNccl, AsRootABuildInAUsersDirectoryIsRefusedAndNotRun) {
    const std::string tool = "/home/u/nccl-tests/build/all_reduce_perf";
    sys.add_file(tool, "");
    sys.set_owner("/home/u", 1000, 1000);
    sys.on_command(argv(tool),
                   answer_ok(read_fixture("cmd/nccl-tests/all_reduce_perf-g2-2080ti.txt")));
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "refusing to run " + tool + " as root")) << o.reason;
    EXPECT_TRUE(contains(o.reason, "directory /home/u (owner uid 1000")) << o.reason;
    EXPECT_TRUE(contains(o.fix, "chown root:root")) << o.fix;
    EXPECT_TRUE(sys.commands_ran.empty());
}

TEST_F(SmokeNccl, AGroupWritableToolIsRefusedAsRoot) {
    const std::string tool = "/usr/local/bin/all_reduce_perf";
    path = {};
    sys.add_file(tool, "");
    sys.set_mode(tool, 0775);
    const auto o = one("smoke.nccl");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "mode 0775) is writable by group or others")) << o.reason;
    EXPECT_TRUE(sys.commands_ran.empty());
}

TEST_F(SmokeNccl, TheToolStartsInRootsDirectory) {
    const std::string tool = "/usr/bin/all_reduce_perf";
    sys.add_file(tool, "");
    std::string cwd = "unset";
    sys.on_command_prefix({tool}, [&cwd](const Command& c) {
        cwd = c.cwd.string();
        return answer_ok(read_fixture("cmd/nccl-tests/all_reduce_perf-g2-2080ti.txt"));
    });
    EXPECT_EQ(one("smoke.nccl").status, SmokeStatus::passed);
    EXPECT_EQ(cwd, "/");
}

TEST_F(Smoke, AsRootAnNvccOthersCanChangeIsRefusedBeforeAnythingIsWritten) {
    sys.add_file(kSmokeNvcc, "");
    sys.set_mode("/usr/local/cuda-12.4/bin", 0777);
    script_query(sys, "query-550-h200.csv");
    const auto o = one("smoke.cuda");
    EXPECT_EQ(o.status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o.reason, "directory /usr/local/cuda-12.4/bin (owner uid 0, group gid "
                                   "0, mode 0777) on the way to /usr/local/cuda-12.4/bin/nvcc is "
                                   "writable by group or others"))
        << o.reason;
    EXPECT_FALSE(ran(kSmokeNvcc));
    EXPECT_TRUE(sys.files_written.empty());
}

// ---- parsers on the captures ----

TEST(SmokeParse, AllReducePerfCapture) {
    const auto r =
        parse_all_reduce_perf(read_fixture("cmd/nccl-tests/all_reduce_perf-g2-2080ti.txt"));
    EXPECT_EQ(r.gpus, 2);
    EXPECT_EQ(r.out_of_bounds, 0);
    ASSERT_TRUE(r.avg_bus_bandwidth);
    EXPECT_DOUBLE_EQ(*r.avg_bus_bandwidth, 2.05774);
    EXPECT_EQ(r.wrong_rows, 0);
    // Older nccl-tests print the summary without "#" (common.cu's PRINT(" Out of bounds ...")).
    const auto old = parse_all_reduce_perf(" Out of bounds values : 4 FAILED\n"
                                           " Avg bus bandwidth    : 41.6967 \n");
    EXPECT_EQ(old.out_of_bounds, 4);
    EXPECT_DOUBLE_EQ(old.avg_bus_bandwidth.value_or(0), 41.6967);
    EXPECT_FALSE(old.wrong_rows);
    EXPECT_FALSE(parse_all_reduce_perf("").avg_bus_bandwidth);
}

TEST(SmokeParse, CudaProgramOnAHostWithoutDriver) {
    const auto r = parse_cuda_smoke(read_fixture("cmd/smoke/cuda-no-driver-13.0.txt"));
    EXPECT_EQ(r.runtime_version, 13000);
    EXPECT_EQ(r.driver_version, 0);
    EXPECT_FALSE(r.device_count);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].device, -1);
    EXPECT_EQ(r.errors[0].call, "cudaGetDeviceCount");
    EXPECT_EQ(r.errors[0].code, 35);
    EXPECT_EQ(r.errors[0].text, "CUDA driver version is insufficient for CUDA runtime version");
}

TEST(SmokeParse, CudaProgramDevicesAndSums) {
    const auto r = parse_cuda_smoke("noise\n" + read_fixture("cmd/smoke/cuda-2xh200-wrong.txt"));
    EXPECT_EQ(r.device_count, 2);
    ASSERT_EQ(r.devices.size(), 2u);
    EXPECT_EQ(r.devices[1].name, "NVIDIA H200");
    EXPECT_EQ(r.devices[1].compute_capability, "9.0");
    EXPECT_EQ(r.devices[1].memory_mib, 143771);
    EXPECT_EQ(r.devices[0].wrong, 0);
    EXPECT_EQ(r.devices[1].wrong, 12);
    EXPECT_EQ(r.devices[1].elements, 1048576);
}

TEST(SmokeParse, NumbersBeyondIntAreNoReading) {
    // fuzz_smoke_parse's property (found writing it): "devices 4294967295" passed the ">= 0" check
    // as a long long and was cast to int -1 (and 4294967298 to 2 devices); numbers that do not fit
    // are no reading now.
    const auto r = parse_cuda_smoke("gpuprov-smoke versions runtime=4294979336 driver=12040\n"
                                    "gpuprov-smoke devices 4294967295\n"
                                    "gpuprov-smoke device 4294967296 cc=9.0 name=X\n");
    EXPECT_FALSE(r.runtime_version);
    EXPECT_EQ(r.driver_version, 12040);
    EXPECT_FALSE(r.device_count);
    EXPECT_TRUE(r.devices.empty());
    EXPECT_FALSE(parse_cuda_smoke("gpuprov-smoke devices 4294967298\n").device_count);
    EXPECT_FALSE(
        parse_torch_smoke("gpuprov-smoke cuda-available True devices=4294967297\n").device_count);
    EXPECT_FALSE(parse_all_reduce_perf("# nThread 1 nGpus 4294967298 minBytes 8\n").gpus);
}

TEST(SmokeParse, BandwidthThatIsNoNumberIsAbsent) {
    // fuzz_smoke_parse's property (found writing it): strtod reads "nan" and "inf".
    EXPECT_FALSE(parse_all_reduce_perf("# Avg bus bandwidth    : nan\n").avg_bus_bandwidth);
    EXPECT_FALSE(parse_all_reduce_perf("# Avg bus bandwidth    : inf\n").avg_bus_bandwidth);
}

} // namespace
} // namespace gpuprov::testing
