-- id: site-san-lun-paths
-- title: Every SAN LUN has the site's number of paths
-- severity: warning
-- rationale: The site's fabric gives each host four paths to each LUN (two HBAs, two array
--   ports): fewer means a zoning or cabling mistake, even while two paths still work.
-- remediation: Check the zoning and the host's HBA links (esxcli storage core path list -d
--   DEVICE), then rescan (esxcli storage core adapter rescan --all).
-- param: min_paths = 4 (paths) a SAN LUN with fewer paths is reported
SELECT 'lun' AS object_type,
       NULL AS object_moref,
       canonical_name AS object_name,
       host_name,
       canonical_name AS detail,
       CASE WHEN path_count < 2 THEN 'critical' END AS severity,
       printf('%s on %s has %d path%s; the site wants %d', canonical_name, host_name,
              path_count, CASE WHEN path_count = 1 THEN '' ELSE 's' END, :min_paths) AS message,
       path_count
FROM vsl_luns
WHERE local = 0 AND path_count < :min_paths
