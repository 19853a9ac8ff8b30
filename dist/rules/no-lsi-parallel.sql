-- id: site-no-lsi-parallel
-- title: No disk on an LSI Logic Parallel controller
-- severity: info
-- rationale: LSI Logic Parallel is the oldest emulated SCSI controller; this site builds every
--   VM on PVSCSI or LSI Logic SAS, and the older controller marks a VM nobody has looked at.
-- remediation: Add a PVSCSI controller, install its driver in the guest, move the disks to it
--   and remove the old controller (VMware KB 1010398).
WITH lsi AS (
    SELECT vm_moref, vm_name, count(*) AS disks
    FROM vsl_vm_disks
    WHERE controller_type = 'VirtualLsiLogicController'
    GROUP BY vm_moref, vm_name
)
SELECT 'vm' AS object_type, vm_moref AS object_moref, vm_name AS object_name,
       printf('%s has %d disk%s on an LSI Logic Parallel controller', vm_name, disks,
              CASE WHEN disks = 1 THEN '' ELSE 's' END) AS message,
       disks
FROM lsi
