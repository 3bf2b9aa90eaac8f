#!/usr/bin/env bash
# version-up.sh -- a Slurm 24.11 (Debian trixie) or 26.05 (Debian sid) lab BESIDE the host's
# 22.05 lab (slurm-up.sh): its own root filesystem (mmdebstrap), munge key, /etc/slurm and
# ports; munged, slurmctld, one slurmd per node (c1..c4, the host lab's partitions),
# slurmrestd (JWT) and an sshd, all on 127.0.0.1.  Idempotent: re-running it starts only
# what is not running (pid files under $STATE/run).  No accounting by default: sacct says
# "accounting storage is disabled" and the cockpit must degrade.  SLURMV_ACCOUNTING=1 adds a
# slurmdbd in the root that stores into the host lab's mariadb (database slurm_acct_db_24 or
# _26, reached through its socket bind-mounted at $ROOT/run/mysqld): start the host lab
# (slurm-up.sh, accounting on) first.  Switching accounting on or off restarts slurmctld.
#
#   version-up.sh 24|26            build the root if needed, configure, start, wait for sinfo
#   version-up.sh 24|26 --fresh    stop, wipe state (spool, logs, jobs) and start again
#
# Afterwards, $STATE/env.sh (STATE=/tmp/slurmv24 or /tmp/slurmv26) has the same variables as
# the host lab's env.sh plus SLURM_LAB_BIN (squeue/sinfo/scontrol/sacct/sbatch/scancel
# wrappers that run the command inside the root), SLURM_LAB_VERSION, SLURM_LAB_REST_URL and
# SLURM_LAB_REST_TOKEN_FILE; $STATE/ssh/env.sh the sshd's.  `source $STATE/env.sh` puts the
# wrappers first on PATH, so `squeue` and the cockpit's local transport talk to that version.
# Paths are the same inside the root and on the host ($STATE is bind-mounted at $ROOT$STATE),
# so log and job output paths Slurm prints are readable from the host as they are.
#
# Environment (all optional):
#   SLURMV_CACHE=/tmp/slurmv-cache   root tarballs (mmdebstrap output), reused across runs
#   SLURM_LAB_TIMEOUT=90             seconds to wait for each daemon
#   SLURMV_ACCOUNTING=0              1 = slurmdbd in the root, on the host lab's mariadb; unset:
#                                    as the lab already runs, until version-down.sh
# Stop with version-down.sh 24|26 (by pid files: the host lab runs the same program names).
set -euo pipefail

V=${1:-}
case "$V" in
  24) SUITE=trixie BASE=240 ;;
  26) SUITE=sid BASE=260 ;;
  *) echo "usage: $0 24|26 [--fresh]" >&2; exit 2 ;;
esac
FRESH=${2:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${SLURMV_CACHE:-/tmp/slurmv-cache}
STATE=/tmp/slurmv$V
ROOT=/tmp/slurmv$V-root
TMO=${SLURM_LAB_TIMEOUT:-90}
NODES=(c1 c2 c3 c4)
CTLD_PORT=${BASE}17 DBD_PORT=${BASE}19 REST_PORT=${BASE}20 SSH_PORT=${BASE}22  # slurmd cN: ${BASE}0N
PKGS_BASE=slurm-wlm,slurm-client,munge,slurmrestd,slurm-wlm-jwt-plugin,openssh-server,procps
PKGS_ACCT=$PKGS_BASE,slurmdbd,slurm-wlm-mysql-plugin
# the accounting mode sticks to the lab until asked otherwise (a test's restart keeps it)
ACCT=${SLURMV_ACCOUNTING:-$(cat "$STATE/accounting" 2>/dev/null || echo 0)}
PKGS=$PKGS_BASE; [ "$ACCT" = 1 ] && PKGS=$PKGS_ACCT
T0=$(date +%s.%N)

say() { printf '[version-up %s %s] %s\n' "$V" "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
# shellcheck source=lib.sh
source "$HERE/lib.sh"  # alive PIDFILE COMM
waitfor() {
  local s=$1 what=$2 i; shift 2
  for ((i = 0; i < s * 4; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  die "timed out after ${s}s waiting for $what"
}
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
in_root() { chroot "$ROOT" "$@"; }

if [ "$FRESH" = "--fresh" ]; then
  bash "$HERE/version-down.sh" "$V" || true
  rm -rf "$STATE/spool" "$STATE/jobs" "$STATE/log"
fi

# ---------------------------------------------------------------- root filesystem
# The tarball is the cache (~120 MB, ~15 s to build from the mirror); the root is unpacked
# from it when missing (~3 s). A changed package list means a new tarball name.
tarname() { echo "slurm$V-$SUITE-$(echo "$1" | md5sum | cut -c1-8).tar"; }
TAR=$CACHE/$(tarname "$PKGS")
# the root remembers the tarball it came from: another package list unpacks a new one (a
# root with the accounting packages serves a lab without accounting as well)
HAVE=$(cat "$ROOT/.slurmv-ok" 2>/dev/null || true)
if [ "$HAVE" != "${TAR##*/}" ] && ! { [ "$ACCT" = 0 ] && [ "$HAVE" = "$(tarname "$PKGS_ACCT")" ]; }; then
  command -v mmdebstrap >/dev/null || die "mmdebstrap missing: apt-get install -y mmdebstrap"
  install -d "$CACHE"
  if [ ! -s "$TAR" ]; then
    say "building $SUITE root (mmdebstrap)"
    # sid's Release file can be past its Valid-Until date on the mirror: accept it
    mmdebstrap --quiet --format=tar --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
      --include="$PKGS" "$SUITE" "$TAR.part" || die "mmdebstrap $SUITE failed"
    mv "$TAR.part" "$TAR"
  fi
  # never rm -rf a root with something mounted in it (its /dev is the host's /dev)
  if grep -q " $ROOT[/ ]" /proc/mounts; then die "$ROOT has mounts: run version-down.sh $V first"; fi
  rm -rf "$ROOT"; install -d "$ROOT"
  tar -C "$ROOT" -xpf "$TAR"
  echo "${TAR##*/}" >"$ROOT/.slurmv-ok"
  say "root unpacked after $(elapsed)s"
fi

# ---------------------------------------------------------------- mounts + layout
install -d -m 0755 "$STATE" "$STATE/log" "$STATE/run" "$STATE/spool/ctld" "$STATE/bin" "$STATE/ssh"
echo "$ACCT" >"$STATE/accounting"
install -d -m 1777 "$STATE/jobs"
for n in "${NODES[@]}"; do install -d -m 0755 "$STATE/spool/d-$n"; done
install -d "$ROOT$STATE"
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
mountpoint -q "$ROOT/dev" || mount --bind /dev "$ROOT/dev"
mountpoint -q "$ROOT/sys" || mount -t sysfs sys "$ROOT/sys"
# slurmd looks for the cgroup mount even with CgroupPlugin=disabled
mountpoint -q "$ROOT/sys/fs/cgroup" || mount --bind /sys/fs/cgroup "$ROOT/sys/fs/cgroup"
mountpoint -q "$ROOT$STATE" || mount --bind "$STATE" "$ROOT$STATE"
# slurmctld resolves this host's name (NoCtldInAddrAny): the host's /etc/hosts knows it
cp /etc/hosts "$ROOT/etc/hosts"
grep -q "[[:space:]]$(hostname)\([[:space:]]\|\$\)" "$ROOT/etc/hosts" ||
  printf '127.0.1.1\t%s\n' "$(hostname)" >>"$ROOT/etc/hosts"
install -d -m 0755 "$ROOT/etc/slurm"
# slurmrestd refuses to run as root or as SlurmUser
in_root id slurmrest >/dev/null 2>&1 || in_root useradd -r -M -s /usr/sbin/nologin slurmrest

CHANGED=0
write_if_changed() {
  local tmp; tmp=$(mktemp "$1.XXXX")
  cat >"$tmp"; chmod "$2" "$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; CHANGED=1; fi
}

JWT_KEY=/etc/slurm/jwt_hs256.key   # inside the root
if [ ! -s "$ROOT$JWT_KEY" ]; then
  dd if=/dev/urandom of="$ROOT$JWT_KEY" bs=32 count=1 status=none
fi
chmod 0600 "$ROOT$JWT_KEY"

if [ "$ACCT" = 1 ]; then
  ACCT_LINES="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT"
else
  ACCT_LINES="AccountingStorageType=accounting_storage/none"
fi
write_if_changed "$ROOT/etc/slurm/slurm.conf" 0644 <<EOF
# Generated by version-up.sh $V (Slurm lab beside the host's, loopback only). Do not edit.
ClusterName=lab$V
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY
SlurmctldPort=$CTLD_PORT
SlurmdPort=${BASE}18
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$STATE/spool/ctld
SlurmdSpoolDir=$STATE/spool/d-%n
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd-%n.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
MessageTimeout=10
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
SlurmdParameters=config_overrides
# no cgroups in the root (the host lab owns the cgroup v1 hierarchy): memory is watched by
# jobacct_gather and an over-limit job is killed (FAILED, not OUT_OF_MEMORY)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
JobAcctGatherFrequency=task=1
$ACCT_LINES
JobCompType=jobcomp/none
NodeName=c1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${BASE}01 CPUs=2 RealMemory=1000 State=UNKNOWN
NodeName=c2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${BASE}02 CPUs=2 RealMemory=1000 State=UNKNOWN
NodeName=c3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${BASE}03 CPUs=4 RealMemory=2000 State=UNKNOWN
NodeName=c4 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${BASE}04 CPUs=1 RealMemory=500 State=UNKNOWN
PartitionName=debug Nodes=c1,c2 Default=YES MaxTime=10:00 State=UP
PartitionName=batch Nodes=c3,c4 MaxTime=30:00 State=UP
PartitionName=tiny Nodes=c4 MaxCPUsPerNode=1 MaxTime=5:00 State=UP
PartitionName=maint Nodes=c3 MaxTime=5:00 State=DOWN
EOF
write_if_changed "$ROOT/etc/slurm/cgroup.conf" 0644 <<EOF
CgroupPlugin=disabled
EOF
CONF_CHANGED=$CHANGED

# ---------------------------------------------------------------- munge (the root's own key)
if [ ! -s "$ROOT/etc/munge/munge.key" ]; then
  in_root mungekey -c -f >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$ROOT/etc/munge/munge.key" bs=1024 count=1 status=none
fi
in_root sh -c 'install -d -o munge -g munge -m 0755 /run/munge;
  chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge; chmod 0400 /etc/munge/munge.key'
if ! alive "$ROOT/run/munge/munged.pid" munged; then
  in_root runuser -u munge -- /usr/sbin/munged --force
  waitfor "$TMO" munged in_root sh -c 'munge -n | unmunge'
  say "munged up (pid $(cat "$ROOT/run/munge/munged.pid"))"
fi

# ---------------------------------------------------------------- slurmdbd (optional)
if [ "$ACCT" = 1 ]; then
  { [ -S /run/mysqld/mysqld.sock ] && mariadb-admin ping >/dev/null 2>&1; } ||
    die "SLURMV_ACCOUNTING=1 needs the host lab's mariadb: run slurm-up.sh first"
  install -d "$ROOT/run/mysqld"
  mountpoint -q "$ROOT/run/mysqld" || mount --bind /run/mysqld "$ROOT/run/mysqld"
  # sid's client library looks in /run/mariadbd, bookworm's server listens in /run/mysqld
  [ -e "$ROOT/run/mariadbd" ] || ln -s /run/mysqld "$ROOT/run/mariadbd"
  [ "$FRESH" = "--fresh" ] && mariadb -e "DROP DATABASE IF EXISTS slurm_acct_db_$V"
  mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmlab';
              GRANT ALL ON slurm_acct_db_$V.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  CHANGED=0
  # slurmrestd's slurmdb queries come with the caller's JWT: slurmdbd must know that plugin
  write_if_changed "$ROOT/etc/slurm/slurmdbd.conf" 0600 <<EOF
# Generated by version-up.sh $V
AuthType=auth/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$STATE/log/slurmdbd.log
PidFile=$STATE/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmlab
StorageLoc=slurm_acct_db_$V
EOF
  if alive "$STATE/run/slurmdbd.pid" slurmdbd && [ "$CHANGED" = 1 ]; then
    say "slurmdbd.conf changed: restarting slurmdbd"
    p=$(cat "$STATE/run/slurmdbd.pid"); kill -TERM "$p"
    for ((i = 0; i < 80; i++)); do [ -d "/proc/$p" ] || break; sleep 0.25; done
  fi
  if ! alive "$STATE/run/slurmdbd.pid" slurmdbd; then
    in_root slurmdbd
    waitfor "$TMO" "slurmdbd port $DBD_PORT" port_open "$DBD_PORT"
    say "slurmdbd up (pid $(cat "$STATE/run/slurmdbd.pid"))"
  fi
fi

# ---------------------------------------------------------------- wrappers + env
# A command run by the wrapper sees the caller's working directory when it exists in the
# root (the jobs dir does), else /; PATH is the root's own ($STATE/bin is visible inside too)
for c in squeue sinfo scontrol sacct sbatch scancel srun sacctmgr sdiag sprio sshare; do
  write_if_changed "$STATE/bin/$c" 0755 <<EOF
#!/bin/sh
# Slurm $V: $c inside $ROOT (written by version-up.sh)
PATH=/usr/sbin:/usr/bin:/sbin:/bin exec chroot $ROOT /bin/sh -c 'cd "\$0" 2>/dev/null || cd /; exec "\$@"' "\$PWD" $c "\$@"
EOF
done
export PATH="$STATE/bin:$PATH"

# ---------------------------------------------------------------- slurmctld + slurmd
# Debian's slurmctld is an alternatives link: one that re-executed itself runs as slurmctld-wlm
ctld_alive() { alive "$STATE/run/slurmctld.pid" slurmctld || alive "$STATE/run/slurmctld.pid" slurmctld-wlm; }
# A changed slurm.conf restarts slurmctld: AuthAltTypes needs it, and 24.11+ answer
# `scontrol reconfigure` by re-executing slurmctld under a new pid
if ctld_alive && [ "$CONF_CHANGED" = 1 ]; then
  say "config changed: restarting slurmctld"
  p=$(cat "$STATE/run/slurmctld.pid"); kill -TERM "$p"
  for ((i = 0; i < 80; i++)); do [ -d "/proc/$p" ] || break; sleep 0.25; done
fi
if ! ctld_alive; then
  in_root slurmctld
  waitfor "$TMO" slurmctld sh -c 'scontrol ping | grep -q UP'
  say "slurmctld up (pid $(cat "$STATE/run/slurmctld.pid"))"
fi
for n in "${NODES[@]}"; do
  alive "$STATE/run/slurmd-$n.pid" slurmd || in_root slurmd -N "$n"
done
all_nodes_respond() {
  [ "$(sinfo -h -N -r -o '%N %t' | grep -vE 'unk|\*' | awk '{print $1}' | sort -u | wc -l)" -ge "${#NODES[@]}" ]
}
waitfor "$TMO" "all slurmd to register" all_nodes_respond
VERSION=$(sinfo --version | awk '{print $2}')

# ---------------------------------------------------------------- slurmrestd (JWT)
# listens on 127.0.0.1 only; a token is `scontrol token username=root lifespan=S`.
# Only the slurmctld paths: with no accounting the slurmdbd plugin refuses to load, and
# slurmrestd with it ("Failure loading plugin path bindings")
if ! alive "$STATE/run/slurmrestd.pid" slurmrestd; then
  rm -f "$STATE/log/slurmrestd.log"
  setsid chroot "$ROOT" setpriv --reuid=slurmrest --regid=slurmrest --clear-groups \
    env SLURM_JWT= slurmrestd -a rest_auth/jwt -s openapi/slurmctld "127.0.0.1:$REST_PORT" \
    </dev/null >>"$STATE/log/slurmrestd.log" 2>&1 &
  echo $! >"$STATE/run/slurmrestd.pid"
  waitfor "$TMO" "slurmrestd port $REST_PORT" port_open "$REST_PORT"
  say "slurmrestd up (pid $(cat "$STATE/run/slurmrestd.pid"), port $REST_PORT)"
fi
# a day-long token for root, refreshed on every run (tests read the file)
tok=$(scontrol token username=root lifespan=86400 | sed -n 's/^SLURM_JWT=//p')
[ -n "$tok" ] || die "scontrol token gave no token"
(umask 077; printf '%s\n' "$tok" >"$STATE/rest-token")

# ---------------------------------------------------------------- sshd inside the root
D=$STATE/ssh
[ -s "$D/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "slurmv$V-host" -f "$D/ssh_host_ed25519_key"
[ -s "$D/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C "slurmv$V-client" -f "$D/id_ed25519"
cp "$D/id_ed25519.pub" "$D/authorized_keys"; chmod 0600 "$D/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$D/ssh_host_ed25519_key.pub")" >"$D/known_hosts"
write_if_changed "$D/sshd_config" 0644 <<EOF
# Generated by version-up.sh $V -- loopback only, key-only root login, inside $ROOT
ListenAddress 127.0.0.1
Port $SSH_PORT
AddressFamily inet
HostKey $D/ssh_host_ed25519_key
PidFile $STATE/run/sshd.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile $D/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
EOF
if ! alive "$STATE/run/sshd.pid" sshd; then
  in_root install -d -m 0755 /run/sshd
  in_root /usr/sbin/sshd -f "$D/sshd_config" -E "$STATE/log/sshd.log"
  waitfor "$TMO" "sshd port $SSH_PORT" port_open "$SSH_PORT"
fi
cat >"$D/env.sh" <<EOF
# source me: the sshd inside the Slurm $VERSION root (version-up.sh $V)
export SLURM_LAB_SSH_HOST=127.0.0.1
export SLURM_LAB_SSH_PORT=$SSH_PORT
export SLURM_LAB_SSH_USER=root
export SLURM_LAB_SSH_KEY=$D/id_ed25519
export SLURM_LAB_SSH_KNOWN_HOSTS=$D/known_hosts
EOF

cat >"$STATE/env.sh" <<EOF
# source me: the Slurm $VERSION lab started by version-up.sh $V (beside the host's 22.05)
export SLURM_LAB_VERSION=$VERSION
export SLURM_LAB_DIR=$STATE
export SLURM_LAB_ROOT=$ROOT
export SLURM_LAB_CGROUP=0
export SLURM_LAB_ACCOUNTING=$ACCT
export SLURM_LAB_CTLD_LOG=$STATE/log/slurmctld.log
export SLURM_LAB_SLURMD_LOG_PATTERN=$STATE/log/slurmd-%n.log
export SLURM_LAB_JOBS_DIR=$STATE/jobs
export SLURM_LAB_NODES="${NODES[*]}"
export SLURM_LAB_BIN=$STATE/bin
export SLURM_LAB_REST_URL=http://127.0.0.1:$REST_PORT
export SLURM_LAB_REST_TOKEN_FILE=$STATE/rest-token
export PATH="$STATE/bin:\$PATH"
EOF
say "Slurm $VERSION lab up in $(elapsed)s (ctld :$CTLD_PORT, rest :$REST_PORT, ssh :$SSH_PORT)"
sinfo >&2
exit 0
