# shellcheck shell=bash
# The payloads of NVIDIA's DCGM 4 stand-ins (the dcgm step's packages, e2e 59): the host engine,
# dcgmi, NVIDIA's unit and the diagnostic plugins' marker. Names, versions and relations are not
# here: the .debs are built by mirror/apt_debs.py from the recorded stanzas in
# tests/fixtures/nvidia-repos/<slug>/Packages.dcgm (X-Payload dcgm-hostengine, dcgmi, dcgm-unit,
# dcgm-plugins cuda=N call the functions below); the rpms by mirror/build-rpm.sh's dcgm_rpms.
# Sourced by apt_debs.py (through bash) and build-rpm.sh; defines functions and DCGM_LIBEXEC only.
DCGM_LIBEXEC=/usr/libexec/datacenter-gpu-manager-4

# nv-hostengine, as NVIDIA's unit runs it (`-n --service-account nvidia-dcgm`: foreground). It
# needs the driver: without /proc/driver/nvidia/version it exits 1 (the message is INFERRED:
# NVIDIA's engine fails to initialise NVML there). Started, it records itself for dcgmi; the
# e2e systemctl stand-in's "active" mark is the other half of "running".
payload_dcgm_hostengine() { # VERSION
    cat <<ENGINE
#!/bin/sh
# gpuprov e2e stand-in for nv-hostengine (DCGM $1)
case " \$* " in *" --version "*|*" -v "*) echo "Version : $1"; exit 0 ;; esac
state=/var/lib/nvidia-stub/dcgm-hostengine
rm -f "\$state"
if [ ! -r /proc/driver/nvidia/version ]; then
    echo "Error: Failed to initialize NVML. DCGM host engine not started." >&2
    exit 1
fi
mkdir -p /var/lib/nvidia-stub && echo "$1" >"\$state"
echo "Started host engine version $1 using port number: 5555"
ENGINE
}

# dcgmi: talks to the host engine on localhost:5555. Without it, DCGM's connection error and
# DCGM_ST_CONNECTION_NOT_VALID (-21) as an unsigned byte, 235 (dcgmi exits with DCGM's negative
# status: NVIDIA/DCGM#158; the value -21 from dcgm_structs.h is INFERRED). `diag -r 1` prints
# DCGM 4's table (tests/fixtures/cmd/smoke/dcgmi-diag-r2-4.4.2-pass.txt): the `software` plugin,
# which fails, as DCGM 3's Deployment checks did (dcgmi-diag-r1-3.1.8-persistence-fail.txt),
# when persistence mode is off, when the driver does not answer, or when no plugins for the
# driver's CUDA major are installed (INFERRED: DCGM loads the plugins of the user-mode driver's
# major); a failure exits 226 (DCGM_ST_NVVS_ERROR, NVIDIA/DCGM#158).
payload_dcgmi() { # VERSION
    cat <<DCGMI
#!/bin/sh
# gpuprov e2e stand-in for dcgmi (DCGM $1)
VERSION=$1
LIBEXEC=$DCGM_LIBEXEC
DCGMI
    cat <<'DCGMI'
row() { printf '| %-25s | %-46s |\n' "$1" "$2"; }
rule() { echo "+---------------------------+------------------------------------------------+"; }
case "${1:-}" in -v|--version) echo "dcgmi  version: $VERSION"; exit 0 ;; esac
if [ ! -f /run/e2e-systemd/nvidia-dcgm.service.active ] || [ ! -f /var/lib/nvidia-stub/dcgm-hostengine ]; then
    echo "Error: unable to establish a connection to the specified host: localhost" >&2
    echo "Error: Unable to connect to host engine. Host engine connection invalid/disconnected." >&2
    exit 235
fi
case "${1:-}" in
    discovery)
        [ "${2:-}" = -l ] || { echo "e2e dcgmi stand-in: only discovery -l is simulated" >&2; exit 1; }
        list=$(nvidia-smi --query-gpu=index,name,pci.bus_id,uuid --format=csv,noheader 2>/dev/null) || list=
        n=$(printf '%s\n' "$list" | grep -c . || true)
        if [ "$n" = 1 ]; then echo "1 GPU found."; else echo "$n GPUs found."; fi
        echo "+--------+----------------------------------------------------------------------+"
        echo "| GPU ID | Device Information                                                   |"
        echo "+--------+----------------------------------------------------------------------+"
        printf '%s\n' "$list" | while IFS=, read -r i name bus uuid; do
            [ -n "$i" ] || continue
            printf '| %-6s | %-68s |\n' "$i" "Name:${name}"
            printf '| %-6s | %-68s |\n' "" "PCI Bus ID:${bus}"
            printf '| %-6s | %-68s |\n' "" "Device UUID:${uuid}"
            echo "+--------+----------------------------------------------------------------------+"
        done
        echo "0 NvSwitches found."
        exit 0 ;;
    diag) ;;
    *) echo "e2e dcgmi stand-in: '$*' is not simulated" >&2; exit 1 ;;
esac
if [ "${2:-}" != -r ] || [ "${3:-}" != 1 ]; then echo "e2e dcgmi stand-in: only diag -r 1 is simulated" >&2; exit 1; fi
error=
if ! banner=$(nvidia-smi 2>/dev/null); then
    error="Unable to initialize NVML: the NVIDIA driver does not answer"
else
    major=$(printf '%s\n' "$banner" | sed -n 's/.*CUDA Version: \([0-9]*\)\..*/\1/p' | head -n 1)
    if [ ! -d "$LIBEXEC/plugins/cuda$major" ]; then
        error="No diagnostic plugins for CUDA $major (the driver's) are installed"
    elif [ "$(nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | sort -u)" != Enabled ]; then
        error="Persistence mode for GPU 0 is currently disabled. The DCGM diagnostic requires peristence mode to be enabled."
    fi
fi
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "Successfully ran diagnostic for group."
rule; row Diagnostic Result
echo "+===========================+================================================+"
echo "|-----  Metadata  ----------+------------------------------------------------|"
up=${VERSION#*:}
row "DCGM Version" "${up%-*}"; row "Driver Version Detected" "${driver:-N/A}"
echo "|-----  Deployment  --------+------------------------------------------------|"
if [ -z "$error" ]; then
    row software Pass
    nvidia-smi --query-gpu=index --format=csv,noheader | while read -r i; do row "" "GPU$i: Pass"; done
    rule
    exit 0
fi
row software Fail
row Error "$(printf '%s' "$error" | cut -c1-45)"
rest=$(printf '%s' "$error" | cut -c46-)
while [ -n "$rest" ]; do row "" "$(printf '%s' "$rest" | cut -c1-45)"; rest=$(printf '%s' "$rest" | cut -c46-); done
rule
exit 226
DCGMI
}

# NVIDIA's unit: ExecStart as the drop-ins of code index ids 55616310032 and 61464112489 quote
# it (they blank and restate it); Restart=on-abort and WantedBy=multi-user.target as the
# hand-written DCGM units of Azure's HPC images (code index id 7802467328).
payload_dcgm_unit() {
    cat <<'UNIT'
[Unit]
Description=NVIDIA DCGM service

[Service]
User=root
PrivateTmp=false
ExecStart=/usr/bin/nv-hostengine -n --service-account nvidia-dcgm
Restart=on-abort

[Install]
WantedBy=multi-user.target
UNIT
}

# The -cuda<N> package's plugin directory (NVIDIA's: libexec/datacenter-gpu-manager-4/plugins/cuda<N>/,
# code index id 61664297199): a marker file, which the stand-in dcgmi's diagnostic looks for.
payload_dcgm_plugins() { # UPSTREAM CUDA-MAJOR
    echo "gpuprov e2e stand-in: DCGM $1 diagnostic plugins for CUDA $2"
}
