/* device-identifier: SAN LUNs are identified by a proper NAA, EUI-64 or T10 name; a "sym."
 * name means the Symmetrix port lacks the SPC-2 bit (003). One finding per (host, LUN). */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const char *const good_prefixes[] = {"naa.", "eui.", "t10.", NULL};

static int well_named(const char *canonical)
{
    for (size_t i = 0; good_prefixes[i]; i++)
        if (!strncmp(canonical, good_prefixes[i], strlen(good_prefixes[i])))
            return 1;
    return 0;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    const struct est_host *h;
    const struct est_lun *l;

    /* SAN LUNs of any plug-in (the name is the array's doing, not the plug-in's); local
     * devices (mpx. boot disks, local SAS and NVMe) have no SAN identity to get right, and a
     * device whose locality is unknown is skipped rather than guessed at (est_host_san_lun). */
    for (struct est_san_pos pos = {0}; (l = est_next_san_lun(e, &pos, &h));) {
        char name[512], msg[1024], prefix[16];
        if (well_named(l->canonical_name))
            continue;
        size_t n = strcspn(l->canonical_name, ".");
        snprintf(prefix, sizeof(prefix), "%.*s", (int)(n < 8 ? n : 8), l->canonical_name);
        snprintf(name, sizeof(name), "%s %s", h->name, l->canonical_name);
        snprintf(msg, sizeof(msg),
                 "%s is identified as \"%s.\" instead of by its NAA/EUI/T10 name; on EMC "
                 "Symmetrix this means the SPC-2 bit is not set on the front-end port, so "
                 "hosts may see the device as a different LUN and VMFS creation can fail",
                 name, prefix);
        json_t *ev =
            json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:[sss]}", "host", h->name, "device",
                      l->canonical_name, "prefix", prefix, "vendor", l->vendor, "model", l->model,
                      "satp", l->satp, "expected_prefixes", "naa.", "eui.", "t10.");
        int r = chk_emit_lun(ctx, h, l, SEV_WARNING, msg, ev);
        if (r < 0)
            return r;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"003_c6252f56ada835be.txt", "SPC-2 set or not?",
     "The error message was a bit misleading but I noticed in the detailed section that the LUN "
     "was identified as \"sym.<identifier string>\". This normally should state \"naa.<identifier "
     "string>\" and that triggered me to check the documentation of the array."},
    {"003_c6252f56ada835be.txt", "SPC-2 set or not?",
     "Instead of identifying each device with their proper Network Authority Address (NAA), the "
     "devices will show up with a SYM identification number. Any device provisioned to the "
     "non-SPC-2 compliant port will be identified as a new device by the ESX host system."},
    {0},
};

const struct check chk_device_identifier = {
    .id = "device-identifier",
    .title = "SAN LUNs carry a proper NAA/EUI/T10 identifier",
    .severity = SEV_WARNING,
    .rationale =
        "A SAN device that ESXi names \"sym.<id>\" (or anything but naa., eui. or t10.) is not "
        "reporting its Network Authority Address: on EMC Symmetrix/DMX the SPC-2 bit is unset "
        "on a front-end port, the same device shows up as a new LUN through that port, and VMFS "
        "creation can fail. SAN devices of any multipathing plug-in are checked (NMP, HPP, "
        "PowerPath: the name is the array's); local devices (localDisk, VMW_SATP_LOCAL, or one "
        "path through a local controller) and devices whose locality is unknown are skipped.",
    .reference = "003_c6252f56ada835be.txt (\"SPC-2 set or not?\"; EMC H4116)",
    .sources = sources,
    .own =
        "The seed is about EMC Symmetrix/DMX and the SPC-2 bit; vslint flags a SAN device of any "
        "array named otherwise than naa., eui. or t10., since ESXi names a device so only when it "
        "reports no such identifier. The warning severity is vslint's.",
    .remediation =
        "Have the storage team set the SPC-2 (and related) director bits on the Symmetrix "
        "front-end ports or initiator group for these hosts (EMC white paper H4116, \"Enabling "
        "SPC-2 compliancy\"; EMC Storage Viewer shows the setting), then rescan with `esxcli "
        "storage core adapter rescan --all` and confirm the device is listed as naa.* by "
        "`esxcli storage core device list`.",
    .params = NULL,
    .needs = CHK_NEEDS_HOST,
    .run = run,
};
