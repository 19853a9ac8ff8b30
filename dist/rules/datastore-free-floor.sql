-- id: site-datastore-free-floor
-- title: Every VMFS datastore keeps an absolute floor of free space
-- severity: critical
-- rationale: The built-in free-space check works in percent; this site also wants room for
--   one more snapshot delta of its largest VMs on every datastore, whatever its size.
-- remediation: Move VMs off the datastore (Storage vMotion), delete old snapshots, or grow the
--   LUN and the VMFS volume.
-- param: min_free_gb = 50 (GiB) the free space every VMFS datastore keeps at least
SELECT 'datastore' AS object_type,
       moref AS object_moref,
       name AS object_name,
       printf('%s has %.1f GiB free, under the site floor of %d GiB', name,
              free_bytes / 1073741824.0, :min_free_gb) AS message,
       json_object('free_bytes', free_bytes, 'capacity_bytes', capacity_bytes,
                   'min_free_gb', :min_free_gb) AS evidence
FROM vsl_datastores
WHERE type = 'VMFS' AND accessible = 1
  AND free_bytes < :min_free_gb * 1073741824
