# shellcheck shell=bash
# The stand-in payload both halves of the test mirror package (mirror/build.sh as .debs,
# mirror/build-rpm.sh as .rpms), so the tools behave the same on both families. Each function
# prints one file's content; the caller decides where it goes. Sourced, never executed.

# mkso SONAME OUTFILE: a tiny real ELF shared object, so ldconfig caches it and `ldconfig -p` lists it.
mkso() {
    local d
    d=$(mktemp -d) # the source's name (so.c) is in the object's symbol table: keep it fixed
    printf 'int gpuprov_e2e_stub_%s(void) { return 0; }\n' "$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)" >"$d/so.c"
    "${CC:-cc}" -shared -fPIC -nostdlib -Wl,-soname,"$1" -o "$2" "$d/so.c"
    rm -rf "$d"
}

# nvidia-persistenced: sets the simulated persistence state and exits; needs the loaded module.
payload_persistenced() {
    cat <<'DAEMON'
#!/bin/sh
# gpuprov e2e stand-in for nvidia-persistenced: sets the simulated persistence state and exits.
if [ ! -r /proc/driver/nvidia/version ]; then
    echo "nvidia-persistenced failed to initialize. Check syslog for more details." >&2
    exit 1
fi
mkdir -p /var/lib/nvidia-stub
case " $* " in
    *" --no-persistence-mode "*) rm -f /var/lib/nvidia-stub/persistence ;;
    *) touch /var/lib/nvidia-stub/persistence ;;
esac
exit 0
DAEMON
}

# NVIDIA's unit starts the daemon with --no-persistence-mode (hence the override NVIDIA's ansible
# role, and gpuprov, install).
payload_persistenced_unit() {
    cat <<'UNIT'
[Unit]
Description=NVIDIA Persistence Daemon
Wants=syslog.target

[Service]
Type=forking
ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose
ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced

[Install]
WantedBy=multi-user.target
UNIT
}

# nv-fabricmanager: as NVIDIA's, it refuses to start unless the loaded driver is exactly its own
# version (fabric manager user guide: "must match the driver version exactly"; the daemon logs
# "fabric manager NVIDIA GPU driver interface version X don't match with driver version Y").
payload_fabricmanager() { # VERSION
    cat <<FM
#!/bin/sh
# gpuprov e2e stand-in for nv-fabricmanager $1
case " \$* " in *" -v "*|*" --version "*) echo "Fabric Manager version is : $1"; exit 0 ;; esac
loaded=\$(sed -n 's/^NVRM version: NVIDIA UNIX .*Kernel Module.*  \([0-9][0-9.]*\)  .*/\1/p' /proc/driver/nvidia/version 2>/dev/null)
if [ "\$loaded" != "$1" ]; then
    echo "fabric manager NVIDIA GPU driver interface version $1 don't match with driver version \${loaded:-<none loaded>}. Please update with matching NVIDIA driver package." >&2
    exit 1
fi
# NVLink 5 (switches managed over InfiniBand, SW_MNG in their VPD, as NVIDIA's start script and
# driver container detect them): FM needs NVLSM, which needs ib_umad; without either it finds
# nothing to manage (fabric manager user guide: "failing to start with error NV_WARN_NOTHING_TO_DO").
if grep -qs SW_MNG /sys/class/infiniband/*/device/vpd; then
    echo "Detected NVL5+ system"
    if [ ! -x /opt/nvidia/nvlsm/sbin/nvlsm ] || [ ! -f /usr/share/nvidia/nvlsm/nvlsm.conf ]; then
        echo "request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]" >&2
        exit 1
    fi
    if [ ! -d /sys/module/ib_umad ]; then
        echo "nvlsm: Failed to open umad device: No such file or directory (ib_umad not loaded)" >&2
        exit 1
    fi
else
    echo "Detected Pre-NVL5 system"
fi
# The GPUs register with the fabric: what stubs/nvidia-smi -q reports as State Completed.
mkdir -p /var/lib/nvidia-stub && echo Completed >/var/lib/nvidia-stub/fabric-state
echo "Fabric Manager version is : $1"
FM
}

# nvidia-imex: as NVIDIA's, a daemon that reads config.cfg (-c), then the node list it names
# (IMEX_NODE_CONFIG_FILE); it aborts unless the loaded driver is of its version ("During
# initialization, the IMEX service checks the currently loaded kernel driver stack version for
# compatibility, and if the loaded driver stack version is not compatible, aborts the process":
# IMEX guide, Getting Started), and with BIND_INTERFACE_IP empty binds to the first address of the
# list that is this node's ("IMEX Service Config Options"); a missing or empty list is a failure
# (the guide has the list written before the service starts; the exact message is INFERRED). The
# node's addresses are the root's /var/lib/nvidia-stub/ip-addresses (the test roots have no
# network of their own). Type=forking: it "daemonizes" (exits 0) with its state, READY, for
# nvidia-imex-ctl.
payload_imex() { # VERSION
    cat <<IMEX
#!/bin/sh
# gpuprov e2e stand-in for nvidia-imex $1
case " \$* " in *" -v "*|*" --version "*) echo "IMEX version is: $1"; exit 0 ;; esac
cfg=/etc/nvidia-imex/config.cfg
while [ \$# -gt 0 ]; do case "\$1" in -c) cfg=\$2; shift 2 ;; *) shift ;; esac; done
state=/var/lib/nvidia-stub/imex-state
rm -f "\$state"
if [ ! -r "\$cfg" ]; then echo "IMEX: failed to open config file \$cfg" >&2; exit 1; fi
loaded=\$(sed -n 's/^NVRM version: NVIDIA UNIX .*Kernel Module.*  \([0-9][0-9.]*\)  .*/\1/p' /proc/driver/nvidia/version 2>/dev/null)
if [ "\$loaded" != "$1" ]; then
    echo "IMEX version $1 is not compatible with the loaded driver version \${loaded:-<none loaded>}" >&2
    exit 1
fi
nodes=\$(sed -n 's/^IMEX_NODE_CONFIG_FILE=//p' "\$cfg" | tail -n 1)
nodes=\${nodes:-/etc/nvidia-imex/nodes_config.cfg}
if [ ! -s "\$nodes" ]; then echo "IMEX: failed to read node config file \$nodes" >&2; exit 1; fi
bind=
while read -r n; do
    [ -n "\$n" ] || continue
    if grep -qxF "\$n" /var/lib/nvidia-stub/ip-addresses 2>/dev/null; then bind=\$n; break; fi
done <"\$nodes"
if [ -z "\$bind" ]; then
    echo "IMEX: none of the addresses in \$nodes is an address of this node" >&2
    exit 1
fi
mkdir -p /var/lib/nvidia-stub && echo READY >"\$state"
cp "\$cfg" /var/lib/nvidia-stub/imex-running.cfg
echo "IMEX version $1 is running, bound to \$bind"
IMEX
}

# nvidia-imex-ctl -q: the local daemon's state, through the command service config.cfg turns on
# (IMEX_CMD_ENABLED=1; "IMEX Service Command Service" in NVIDIA's guide), as the running daemon
# read it at its start.
payload_imex_ctl() {
    cat <<'CTL'
#!/bin/sh
# gpuprov e2e stand-in for nvidia-imex-ctl
running=/var/lib/nvidia-stub/imex-running.cfg
if [ ! -f /var/lib/nvidia-stub/imex-state ] || ! grep -qx 'IMEX_CMD_ENABLED=1' "$running" 2>/dev/null; then
    echo "Failed to connect to the IMEX command service" >&2
    exit 1
fi
case " $* " in
    *" -q "*) cat /var/lib/nvidia-stub/imex-state ;;
    *) echo "e2e nvidia-imex-ctl stand-in: only -q is simulated" >&2; exit 1 ;;
esac
CTL
}

# NVIDIA's unit as packaged (canonical/apt-packaging-imex installs NVIDIA's lib/systemd/system
# unit; AWS ParallelCluster's copy: Type=forking, ExecStart=/usr/bin/nvidia-imex -c
# /etc/nvidia-imex/config.cfg, WantedBy=multi-user.target).
payload_imex_unit() {
    cat <<'UNIT'
[Unit]
Description=NVIDIA IMEX service
After=network-online.target
Requires=network-online.target

[Service]
User=root
PrivateTmp=false
Type=forking
TimeoutStartSec=infinity
ExecStart=/usr/bin/nvidia-imex -c /etc/nvidia-imex/config.cfg
LimitCORE=infinity

[Install]
WantedBy=multi-user.target
UNIT
}

# The package's config.cfg, the keys the stand-ins read. IMEX_NODE_CONFIG_FILE is NVIDIA's default;
# the command service off is INFERRED from NVIDIA's and Azure's Slurm prologs, which turn it on with
# sed before they ask nvidia-imex-ctl.
payload_imex_config() {
    cat <<'CFG'
# gpuprov e2e stand-in for NVIDIA's /etc/nvidia-imex/config.cfg
LOG_LEVEL=4
SERVER_PORT=50000
BIND_INTERFACE_IP=
IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg
IMEX_CMD_ENABLED=0
IMEX_CMD_PORT=50005
CFG
}

# nvlsm: the NVLink Subnet Manager's binary and the config NVIDIA's driver container passes it
# (gpu-driver-container nvidia-driver: --nvlsm-config-file /usr/share/nvidia/nvlsm/nvlsm.conf).
# The binary's path is the one siderolabs/extensions#893's log shows (/opt/nvidia/nvlsm/sbin/nvlsm).
payload_nvlsm() { # VERSION
    printf '#!/bin/sh\n# gpuprov e2e stand-in for nvlsm %s\necho "OpenSM %s"\n' "$1" "$1"
}
payload_fabricmanager_unit() {
    cat <<'UNIT'
[Unit]
Description=NVIDIA fabric manager service

[Service]
Type=forking
ExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg

[Install]
WantedBy=multi-user.target
UNIT
}

# nvcc --version as the real 12.2 / 12.4 / 12.5 / 13.0 print it (tests/fixtures/e2e/nvcc holds
# 12.4's; 13.0's is CUDA 13.0.1's nvcc V13.0.88 as printed in a public build log, code id 56551853030).
payload_nvcc_text() { # X.Y
    case "$1" in
        12.2) printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2023 NVIDIA Corporation\nBuilt on Tue_Aug_15_22:02:13_PDT_2023\nCuda compilation tools, release 12.2, V12.2.140\nBuild cuda_12.2.r12.2/compiler.33191640_0\n' ;;
        12.4) printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\nBuilt on Thu_Mar_28_02:18:24_PDT_2024\nCuda compilation tools, release 12.4, V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0\n' ;;
        12.5) printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\nBuilt on Wed_Jun__5_21:45:11_PDT_2024\nCuda compilation tools, release 12.5, V12.5.82\nBuild cuda_12.5.r12.5/compiler.34385749_0\n' ;;
        13.0) printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n' ;;
        *) echo "payload_nvcc_text: no nvcc text for $1" >&2; return 1 ;;
    esac
}
payload_nvcc() { # X.Y: the nvcc stand-in script
    printf '#!/bin/sh\n# gpuprov e2e stand-in for nvcc %s\ncat <<'"'"'NVCC'"'"'\n' "$1"
    payload_nvcc_text "$1"
    printf 'NVCC\n'
}
payload_cuda_version_json() { # FULL NVCC-VERSION
    cat <<JSON
{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "$1"
   },
   "cuda_cudart" : {
      "name" : "CUDA Runtime (cudart)",
      "version" : "$2"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "$2"
   }
}
JSON
}

payload_container_runtime() { # VERSION
    printf '#!/bin/sh\necho "NVIDIA Container Runtime version %s"\n' "$1"
}
payload_container_cli() { # VERSION
    printf '#!/bin/sh\nprintf '"'"'cli-version: %s\\nlib-version: %s\\n'"'"'\n' "$1" "$1"
}
# The toolkit's config.toml; LDCONFIG is "@/sbin/ldconfig.real" on Debian/Ubuntu, "@/sbin/ldconfig" on EL.
payload_container_config() { # LDCONFIG
    cat <<EOF2
#accept-nvidia-visible-devices-as-volume-mounts = false
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"

[nvidia-container-cli]
environment = []
ldconfig = "$1"
load-kmods = true

[nvidia-container-runtime]
log-level = "info"
mode = "auto"
runtimes = ["docker-runc", "runc", "crun"]
EOF2
}
