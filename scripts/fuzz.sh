#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, in scripts/sanitize.sh's build-san: ASan+UBSan) and runs
# each for a bounded time on a corpus seeded from tests/fixtures. Any crash, leak, timeout or
# out-of-memory fails the script; the input that did it is left in build-san/fuzz/artifacts/.
#   scripts/fuzz.sh [--time SECONDS] [--no-build] [target...]
# Defaults: 60 s per target, every target (fuzz_<name>; "profile" is short for fuzz_profile).
# The working corpus (build-san/fuzz/corpus/<target>) is kept between runs, so repeated runs
# start from what earlier ones found; the seeds are copied afresh from the fixtures each run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=60
build=1
targets=()
while (($#)); do
    case "$1" in
    --time) seconds="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (--time S, --no-build)" >&2; exit 2 ;;
    *) targets+=("fuzz_${1#fuzz_}"); shift ;;
    esac
done
all=$(sed -n 's/^ *gpuprov_add_fuzzer(\(fuzz_[a-z0-9_]*\).*/\1/p' fuzz/CMakeLists.txt)
((${#targets[@]})) || mapfile -t targets <<<"$all"
for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$all" || { echo "fuzz.sh: no target $t; targets: $(echo $all)" >&2; exit 2; }
done
if ((build)); then
    scripts/sanitize.sh --build-only --target "${targets[@]}"
fi

fx=tests/fixtures
shopt -s nullglob globstar
# The fixtures each target starts from (one parser's real samples).
seeds_of() {
    case "$1" in
    fuzz_profile) echo $fx/profiles/**/*.yaml profiles/*.yaml $fx/engine/profile.yaml ;;
    fuzz_os_release) echo $fx/os/*/etc/os-release $fx/os/*/usr/lib/os-release \
        $fx/hosts/*/etc/os-release $fx/hosts/*/usr/lib/os-release ;;
    fuzz_proc_files) echo $fx/hosts/*/proc/driver/nvidia/version $fx/hosts/*/proc/meminfo \
        $fx/hosts/*/proc/modules $fx/hosts/*/sys/firmware/efi/efivars/* \
        $fx/cmd/files/proc-driver-version-* $fx/engine/cmd/proc-driver-version-* ;;
    fuzz_cuda_version) echo $fx/hosts/*/usr/local/cuda-*/version.* $fx/hosts/*/usr/local/cuda-*/include/cuda.h \
        $fx/cmd/files/*version.json $fx/engine/cmd/*version.json ;;
    fuzz_cudnn_header) echo $fx/hosts/*/usr/include/**/cudnn*.h $fx/cmd/files/cudnn*.h $fx/engine/cmd/cudnn*.h ;;
    fuzz_dpkg_status) echo $fx/hosts/*/var/lib/dpkg/status ;;
    fuzz_rpm_query) echo $fx/cmd/rpm/qa-* ;;
    fuzz_smi_query) echo $fx/cmd/nvidia-smi/*.csv $fx/engine/cmd/*.csv ;;
    fuzz_smi_banner) echo $fx/cmd/nvidia-smi/*.txt ;;
    fuzz_topo) echo $fx/cmd/topo/* $fx/engine/cmd/topo-* ;;
    fuzz_nvcc) echo $fx/cmd/nvcc/* ;;
    fuzz_smi_health) echo $fx/cmd/nvidia-smi/health-*.csv $fx/cmd/nvidia-smi/query-all-*.csv ;;
    fuzz_xid) echo $fx/cmd/xid/* ;;
    fuzz_nvlink_errors) echo $fx/cmd/nvlink/* ;;
    fuzz_smoke_parse) echo $fx/cmd/smoke/* $fx/cmd/nccl-tests/* ;;
    fuzz_apt_packages) echo $fx/repo/Packages $fx/engine/*/Packages ;;
    fuzz_apt_release) echo $fx/repo/InRelease* $fx/engine/*/InRelease ;;
    fuzz_repomd) echo $fx/repo/rpm/repomd.xml ;;
    fuzz_rpm_primary) echo $fx/repo/rpm/*primary.xml.gz ;;
    fuzz_openpgp) echo $fx/repo/*.asc $fx/repo/*.pub $fx/repo/*.gpg $fx/repo/oracle/*.gpg $fx/repo/oracle/*.asc $fx/engine/test-key.asc $fx/engine/test-key.gpg ;;
    fuzz_armor) echo $fx/repo/*.asc $fx/repo/*.pub $fx/repo/InRelease* ;;
    fuzz_pci) ;; # built below from the hosts' sysfs trees
    *) echo "fuzz.sh: no seeds listed for $1" >&2; return 1 ;;
    esac
}

# fuzz_pci's input: vendor, class, device and driver link target of every PCI function of a
# fixture host, NUL-separated (fuzz/fuzz_pci.cpp).
pci_seeds() {
    local out=$1 host dev f
    for host in $fx/hosts/*/; do
        [[ -d $host/sys/bus/pci/devices ]] || continue
        for dev in "$host"sys/bus/pci/devices/*/; do
            for f in vendor class device; do
                cat "$dev$f"
                printf '\0'
            done
            if [[ -L ${dev}driver ]]; then readlink "${dev}driver" | tr -d '\n'; fi
            printf '\0'
        done >"$out/$(basename "$host")"
    done
}

work=build-san/fuzz
failed=()
summary=()
for t in "${targets[@]}"; do
    seeds=$work/seeds/$t corpus=$work/corpus/$t artifacts=$work/artifacts/$t
    rm -rf "$seeds"
    mkdir -p "$seeds" "$corpus" "$artifacts"
    if [[ $t == fuzz_pci ]]; then
        pci_seeds "$seeds"
    else
        # -L: a few fixture trees hold relative links (cudnn_version.h); dangling ones are skipped.
        for f in $(seeds_of "$t"); do
            [[ -f $f ]] && cp -L "$f" "$seeds/$(echo "${f#$fx/}" | tr / _)"
        done
    fi
    [[ $t == fuzz_rpm_primary ]] && for f in "$seeds"/*.gz; do gzip -dc "$f" >"${f%.gz}"; done
    dict=()
    [[ -f fuzz/dict/$t.dict ]] && dict=(-dict="fuzz/dict/$t.dict")
    log=$work/$t.log
    [[ -x build-san/fuzz/$t ]] || { echo "fuzz.sh: build-san/fuzz/$t not built (run without --no-build)" >&2; exit 2; }
    echo "== $t: ${seconds}s, $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) in corpus" >&2
    # -timeout: one input taking over 10 s is a finding (every parser must be bounded in time);
    # -rss_limit_mb: so is one needing 2 GB.
    rc=0
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
        "build-san/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" \
        "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s+=$1} END {print s+0}')
    if ((rc)); then
        failed+=("$t")
        echo "!! $t failed (rc $rc): see $log and $artifacts/" >&2
        grep -m5 -E 'ERROR|SUMMARY|contract broken|runtime error' "$log" >&2 || tail -20 "$log" >&2
    fi
    summary+=("$(printf '%-20s %6ss %10s execs %6s in corpus  %s' "$t" "$seconds" "$runs" \
        "$(ls "$corpus" | wc -l)" "$( ((rc)) && echo FAILED || echo ok)")")
done
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "fuzz.sh: findings in ${failed[*]}" >&2
    exit 1
fi
