-- id: site-thin-disk-max-size
-- title: No thin disk larger than the site's limit
-- severity: warning
-- rationale: A large thin disk can grow into the datastore's free space faster than anyone
--   notices; above the limit this site provisions thick, so growth is paid for up front.
-- remediation: Inflate the disk (vmkfstools --inflatedisk) or Storage vMotion it to thick
--   provisioning; or raise max_gb in [check site-thin-disk-max-size].
-- param: max_gb = 500 (GiB) thin disks larger than this are reported
SELECT 'vm' AS object_type,
       d.vm_moref AS object_moref,
       d.vm_name AS object_name,
       d.label AS detail,
       printf('%s of %s is a thin disk of %.0f GiB, above the site limit of %d GiB',
              d.label, d.vm_name, d.capacity_bytes / 1073741824.0, :max_gb) AS message,
       d.datastore_name AS datastore,
       d.capacity_bytes AS capacity_bytes
FROM vsl_vm_disks d
WHERE d.format = 'thin'
  AND d.capacity_bytes > :max_gb * 1073741824
