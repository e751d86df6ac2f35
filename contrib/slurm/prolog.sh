#!/bin/sh
# Slurm Prolog example: gate each job on this node's health. On CRITICAL
# fabdiag drains the node with its reason and the prolog fails, so Slurm
# requeues the job elsewhere. WARNING and UNKNOWN let the job run.
# In slurm.conf:  Prolog=/usr/share/fabdiag/slurm/prolog.sh
# (an Epilog can run the same lines to check the node after each job)
[ -r /etc/default/fabdiag ] && . /etc/default/fabdiag
# shellcheck disable=SC2086 # the options are words
out=$(/usr/bin/fabdiag health --slurm ${FABDIAG_HEALTH_ARGS:-} 2>&1)
rc=$?
printf '%s\n' "$out" | logger -t fabdiag-health
[ "$rc" -eq 2 ] && exit 1
exit 0
