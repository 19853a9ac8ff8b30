/* `vslint config-check --connect`: connect to each configured vCenter and array, read a little of
 * everything vslint reads, and say what could not be read and why. Stores nothing. */
#ifndef VSL_PROBE_H
#define VSL_PROBE_H

#include <stdio.h>

#include "daemon/config.h"

/* The probe's exit statuses: everything read, something could not be read, a source could not
 * be connected to or logged in to (the worst source decides). */
enum { VSL_PROBE_OK = 0, VSL_PROBE_UNREADABLE = 1, VSL_PROBE_UNREACHABLE = 2 };

/* Probes each source of cfg (only the one named only, when not NULL; -VSL_ENOTFOUND when
 * there is none), at most max_hosts hosts per vCenter for the per-host reads, and writes the
 * report to out as text or (json) one JSON document. Returns a VSL_PROBE_ status. Opens no
 * database and never prints a password. */
int vsl_probe(const struct vsl_config *cfg, const char *only, int max_hosts, int json, FILE *out);

#endif
