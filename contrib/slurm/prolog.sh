#!/bin/sh
# Slurm Prolog example: gate each job on this node's health. On CRITICAL
# fabdiag drains the node with its reason and the prolog fails, so Slurm
# requeues the job (held, unless SchedulerParameters has
# nohold_on_prolog_fail; slurm.conf(5)); the node keeps fabdiag's reason,
# so the HealthCheckProgram resumes it once it passes. WARNING and UNKNOWN
# let the job run. In slurm.conf:  Prolog=/usr/share/fabdiag/slurm/prolog.sh
# (an Epilog can run the same lines to check the node after each job)
# Options for fabdiag health: FABDIAG_HEALTH_ARGS in /etc/default/fabdiag;
# FABDIAG names another fabdiag binary.
[ -r /etc/default/fabdiag ] && . /etc/default/fabdiag
# shellcheck disable=SC2086 # the options are words
out=$("${FABDIAG:-/usr/bin/fabdiag}" health --slurm ${FABDIAG_HEALTH_ARGS:-} 2>&1)
rc=$?
printf '%s\n' "$out" | logger -t fabdiag-health
[ "$rc" -eq 2 ] && exit 1
exit 0
