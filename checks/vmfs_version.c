/* Check vmfs-version: VMFS datastores older than VMFS6. VMFS6 gives freed blocks back to a thin
 * LUN by itself (automatic UNMAP), which VMFS5 does not: vslint's reason, not the seed's (000
 * §3.7.2 lets guests reclaim on VMFS5 as on VMFS6); VMFS3 is no longer supported by ESXi. */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_version", 6, 5, 6, "VMFS major version",
     "VMFS datastores below this major version are flagged (VMFS3 always is: unsupported)"},
    {0},
};

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    const int want = (int)chk_param(ctx, "min_version");

    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        enum vsl_severity sev;
        const char *why;
        char msg[512];

        /* NFS, vSAN and vVol datastores have no VMFS version; a VMFS datastore whose info did
         * not say (an inaccessible one may not) is unknown, not old. */
        if (!d->type || strcmp(d->type, "VMFS") != 0 || d->vmfs_major <= 0)
            continue;
        if (d->vmfs_major <= 3) {
            sev = SEV_CRITICAL;
            why = "ESXi no longer supports it: hosts of 6.7 and later upgrade it to VMFS5 when "
                  "they mount it and leave it unmounted when that fails";
        } else if (d->vmfs_major < want && d->vmfs_local == 1) {
            /* A local VMFS5 volume (the boot datastore every host upgraded from 6.x keeps) has
             * no thin LUN behind it to reclaim space on, and the fix would be reformatting the
             * boot disk: nothing an expert would act on. VMFS3 above stays critical. */
            continue;
        } else if (d->vmfs_major < want) {
            sev = SEV_WARNING;
            why = "it does not reclaim freed space on a thin LUN by itself (no automatic UNMAP)";
        } else {
            continue;
        }
        snprintf(msg, sizeof(msg),
                 "%s is VMFS%d: %s; move its VMs to a new VMFS%d datastore (an existing one "
                 "cannot be converted in place)",
                 d->name, d->vmfs_major, why, want);
        int r = chk_emit_datastore(
            ctx, d, sev, msg,
            json_pack("{s:i, s:i, s:b, s:b}", "vmfs_major", d->vmfs_major, "min_version", want,
                      "supported", d->vmfs_major > 3, "automatic_unmap", d->vmfs_major >= 6));
        if (r < 0)
            return r;
    }
    return 0;
}

const struct check chk_vmfs_version = {
    .id = "vmfs-version",
    .title = "VMFS datastores are VMFS6",
    .severity = SEV_CRITICAL,
    .rationale =
        "VMFS6 gives the blocks of deleted or moved files back to a thin LUN by itself "
        "(automatic UNMAP); on VMFS5 they stay allocated in the pool until someone runs esxcli "
        "storage vmfs unmap, so a thin pool fills with space the datastore no longer uses. For "
        "a guest's own reclaim the Unity guide (§3.7.2) gives VMFS6, and VMFS5 with VM "
        "hardware version 11 and EnableBlockDelete set to 1, as equal ways (space-reclaim "
        "judges those); the warning on VMFS5 is vslint's, for the automatic UNMAP. VMFS3 is "
        "critical, by vslint's judgement (the guide does not mention it): ESXi no longer "
        "supports it (6.7 and later upgrade it to VMFS5 when mounting it, and leave it "
        "unmounted if that fails). Applies to VMFS datastores whose major version vCenter "
        "reported; a local VMFS5 volume (vmfs.local: a host's boot datastore) is skipped, since "
        "the UNMAP reason does not apply to a local disk and the fix is reformatting the boot "
        "disk, while a local VMFS3 one stays critical. NFS, vSAN "
        "and vVol datastores, and VMFS ones of unknown version, are skipped. A finding names "
        "every LUN the volume spans (extents).",
    .reference = "000_5bd48962a767ee9e.txt §3.7.2 (in-guest space reclamation: VMFS6, or VMFS5 "
                 "with hardware version 11 and EnableBlockDelete); vSphere Storage guide, "
                 "\"Upgrading VMFS Datastores\"",
    .sources = chk_reclaim_sources,
    .own =
        "The guide gives VMFS6, and VMFS5 with VM hardware version 11 and EnableBlockDelete set to "
        "1, as equal ways to in-guest space reclamation (space-reclaim judges them); it does not "
        "prefer VMFS6 and never mentions VMFS3. The warning on VMFS5 is vslint's: VMFS6 also "
        "gives the blocks of deleted or moved files back to a thin LUN by itself (automatic "
        "UNMAP, ESXi 6.5 and later), which VMFS5 does only when someone runs esxcli storage vmfs "
        "unmap. VMFS3 is critical by vslint's judgement: ESXi 6.7 and later no longer support it "
        "(they upgrade it to VMFS5 when mounting it, and leave it unmounted if that fails).",
    .remediation =
        "VMFS5 cannot be upgraded to VMFS6 in place: create a new VMFS6 datastore (vSphere Client: "
        "New Datastore > VMFS > VMFS 6; PowerCLI: New-Datastore -VMHost <host> -Name <new> -Path "
        "<naa.id> -Vmfs -FileSystemVersion 6), move the VMs with Storage vMotion (Get-VM "
        "-Datastore <old> | Move-VM -Datastore <new>), then unmount and delete the old one and "
        "reuse its LUN. PowerCLI's Update-VmfsDatastore (VMware.VimAutomation.StorageUtility) "
        "does these steps through a temporary datastore. Hosts must run ESXi 6.5 or later to "
        "mount VMFS6. Until then, reclaim a VMFS5 datastore by hand: esxcli storage vmfs unmap "
        "-l <datastore>. A VMFS3 datastore: upgrade it (right-click > Upgrade to VMFS5) or "
        "evacuate it now, then move to VMFS6 as above.",
    .params = params,
    .run = run,
};
