#!/usr/bin/env bash
# Makes sure a Docker engine answers, for the docker backend's tests: installs Debian's
# docker.io when dockerd is missing, starts dockerd when nothing answers, and waits for it
# (bounded). Exits non-zero when no engine could be had; callers carry on, and the docker
# tests then report themselves skipped with the reason.
set -uo pipefail

engine_up() { docker info >/dev/null 2>&1; }

engine_up && exit 0
if ! command -v dockerd >/dev/null; then
  apt-get install -y -qq --no-install-recommends docker.io >/dev/null || { echo "start-docker: could not install docker.io" >&2; exit 1; }
fi
engine_up && exit 0
log=${DOCKERD_LOG:-/tmp/dockerd.log}
setsid dockerd >"$log" 2>&1 < /dev/null &
for _ in $(seq 1 60); do
  engine_up && { echo "start-docker: dockerd is up"; exit 0; }
  sleep 1
done
echo "start-docker: dockerd did not answer within 60 s; its log: $log" >&2
tail -5 "$log" >&2
exit 1
