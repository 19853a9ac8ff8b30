#!/bin/bash
# Creates the vCenter role vslint needs and gives it to vslint's account at the root folder,
# with propagation, using govc. docs/vcenter-role.md says why each privilege is in it.
#
# usage: vcenter-role.sh [-n] USER [ROLE]
#   USER  the account vslint logs in as, e.g. vslint@vsphere.local or 'EXAMPLE\vslint'
#   ROLE  the role's name (default vslint-reader)
#   -n    print the govc commands without running them
# govc reads the vCenter and the administrator's credentials from GOVC_URL, GOVC_USERNAME and
# GOVC_PASSWORD: no password is ever an argument, of this script or of govc.
set -eu

# The role's privileges, one a line: exactly the table of docs/vcenter-role.md
# (tests/integration/test_role.py compares the two). Host.Config.Storage is for the iSCSI port
# bindings, Host.Config.Settings for esxcli: delete either line to keep that out of the role,
# and vslint records the "iscsi-bindings" or "esxcli" gap on each host concerned instead.
privileges=(
    System.Anonymous
    System.View
    System.Read
    Host.Config.Storage
    Host.Config.Settings
)

usage() {
    echo "usage: $0 [-n] USER [ROLE]" >&2
    echo "  creates ROLE (default vslint-reader) with vslint's privileges and gives it to USER" >&2
    echo "  at the root folder, propagated; -n prints the govc commands without running them." >&2
    echo "  govc reads GOVC_URL, GOVC_USERNAME and GOVC_PASSWORD from the environment." >&2
    exit 2
}

dry=0
while getopts nh opt; do
    case $opt in
    n) dry=1 ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || usage
user=$1
role=${2:-vslint-reader}
# A leading '-' would reach govc as a flag.
case $user in '' | -*) echo "$0: USER must be an account name, not '$user'" >&2; exit 2 ;; esac
case $role in '' | -*) echo "$0: ROLE must be a role name, not '$role'" >&2; exit 2 ;; esac

# Prints a command, quoted so that it can be pasted, then runs it unless -n.
run() {
    printf '+'
    printf ' %q' "$@"
    printf '\n'
    [ "$dry" = 1 ] || "$@"
}

if [ "$dry" = 0 ]; then
    if ! command -v govc >/dev/null; then
        echo "$0: govc not found (https://github.com/vmware/govmomi/tree/main/govc); -n prints the commands" >&2
        exit 1
    fi
    if [ -z "${GOVC_URL:-}" ]; then
        echo "$0: GOVC_URL is not set: export GOVC_URL=https://VCENTER/sdk GOVC_USERNAME=ADMIN, and GOVC_PASSWORD (read -rs)" >&2
        exit 1
    fi
fi

# role.update sets the role's privileges to exactly the list, so a second run (or an older
# vslint-reader) ends with this list, not a union.
if [ "$dry" = 0 ] && govc role.ls "$role" >/dev/null 2>&1; then
    run govc role.update "$role" "${privileges[@]}"
else
    run govc role.create "$role" "${privileges[@]}"
fi
run govc permissions.set -principal "$user" -role "$role" -propagate=true /
if [ "$dry" = 0 ]; then
    run govc role.ls "$role"
    run govc permissions.ls /
fi
