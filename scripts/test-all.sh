#!/usr/bin/env bash
# Runs every test of fencelock against real servers. Installs the Debian server packages the
# tests need when they are missing (the tests start their own throwaway instances; nothing is
# started as a service). Extra arguments go to Maven, e.g. -Dfencelock.tck.schedules=40.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server etcd-client)
command -v faketime >/dev/null 2>&1 || need+=(faketime)
# a PgBouncer in front of the test PostgreSQL: the provider refuses a pooler in transaction mode
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer)
# headless Chromium renders the comparison report to a PNG in lock-bench's CompareQuickRunTest
command -v chromium >/dev/null 2>&1 || need+=(chromium)

if [ ${#need[@]} -gt 0 ]; then
  echo "Installing server packages: ${need[*]}"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install ${need[*]}" >&2; exit 1; }
    sudo_cmd="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The @Exclusive job on virtual threads runs on a second JDK of 21 or later (the build itself targets 17):
# the one running Maven if it is new enough, else the newest one under /usr/lib/jvm.
jdk_major() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
vt_jdk=""
for candidate in "${JAVA_HOME:-}" $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV); do
  candidate="${candidate%/}"
  if [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] && [ "$(jdk_major "$candidate")" -ge 21 ] 2>/dev/null; then
    vt_jdk="$candidate"
    break
  fi
done
vt_args=()
if [ -n "$vt_jdk" ]; then
  vt_args+=("-Dfencelock.virtualThreadsJdk=$vt_jdk")
else
  echo "NOTE: no JDK 21+ found (JAVA_HOME or /usr/lib/jvm): the virtual-thread test of the Spring starter is not run" >&2
  vt_args+=("-Dfencelock.virtualThreads.skip=true")
fi

# Two modules at a time: the contract suites spend most of their time waiting out TTLs, pauses and restarts,
# not on the CPU (etcd's single-server module: 80 s of CPU in 120 s), so two side by side take about 15
# minutes where one at a time took 25. Each module's servers take ports no other JVM holds (LoopbackPorts).
exec ./mvnw -B -ntp -T 2 verify "${vt_args[@]}" "$@"
