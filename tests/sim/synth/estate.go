package main

// The generated estate: every object is computed from its index and the
// seed, nothing is stored. Clusters are blocks of hosts, hosts blocks of
// VMs, and each cluster's VMs are dealt round robin over the cluster's
// datastores, so both directions (VM -> datastore, datastore -> VMs) are
// arithmetic. See README.md for the shape and the proportions.

import "fmt"

type estate struct {
	seed            uint64
	nVM             int
	vmsPerHost      int
	hostsPerCluster int
	vmsPerDS        int
	lunsPerHost     int // SAN LUNs seen by every host of a cluster (at least the cluster's VMFS datastores)
	pathsPerLun     int // 1..4: vmhba2/vmhba3 x target 0/1
	podSize         int // datastores per datastore cluster (one per cluster)
	clustersPerDVS  int
	iscsiEvery      int // every Nth host has software iSCSI

	nHost, nCluster, dsFull, nDS, nDVS int

	// Mutations (the incremental-polling hook): epoch e changes the objects
	// that selected(kind, i, e) picks, about mutatePct[e-1] % of them.
	mutatePct []int
}

func newEstate(seed uint64, nVM, vmsPerHost, hostsPerCluster, vmsPerDS, lunsPerHost, pathsPerLun int) (*estate, error) {
	if nVM < 1 || vmsPerHost < 1 || hostsPerCluster < 1 || vmsPerDS < 1 || lunsPerHost < 0 ||
		pathsPerLun < 1 || pathsPerLun > 4 {
		return nil, fmt.Errorf("bad estate parameters")
	}
	e := &estate{seed: seed, nVM: nVM, vmsPerHost: vmsPerHost, hostsPerCluster: hostsPerCluster,
		vmsPerDS: vmsPerDS, lunsPerHost: lunsPerHost, pathsPerLun: pathsPerLun, podSize: 4,
		clustersPerDVS: 4, iscsiEvery: 4}
	e.nHost = ceilDiv(nVM, vmsPerHost)
	e.nCluster = ceilDiv(e.nHost, hostsPerCluster)
	e.dsFull = ceilDiv(hostsPerCluster*vmsPerHost, vmsPerDS)
	last := e.nCluster - 1
	e.nDS = last*e.dsFull + e.dsCount(last)
	e.nDVS = ceilDiv(e.nCluster, e.clustersPerDVS)
	return e, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// splitmix64: a good, cheap hash of (seed, kind, index, salt).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

const (
	kVM = iota + 1
	kHost
	kDS
	kLun
	kMutate
)

func (e *estate) h(kind, i, salt int) uint64 {
	return mix(e.seed ^ uint64(kind)<<56 ^ uint64(salt)<<40 ^ uint64(i))
}

// ---- clusters, hosts, VMs, datastores --------------------------------------------------------

func (e *estate) clusterHosts(c int) (int, int) {
	lo := c * e.hostsPerCluster
	return lo, minInt(e.nHost, lo+e.hostsPerCluster)
}

func (e *estate) clusterVMs(c int) (int, int) {
	lo := c * e.hostsPerCluster * e.vmsPerHost
	return lo, minInt(e.nVM, lo+e.hostsPerCluster*e.vmsPerHost)
}

// dsCount is the number of datastores of cluster c.
func (e *estate) dsCount(c int) int {
	lo, hi := e.clusterVMs(c)
	return ceilDiv(hi-lo, e.vmsPerDS)
}

func (e *estate) hostCluster(h int) int { return h / e.hostsPerCluster }

func (e *estate) hostVMs(h int) (int, int) {
	lo := h * e.vmsPerHost
	return lo, minInt(e.nVM, lo+e.vmsPerHost)
}

func (e *estate) vmHost(i int) int { return i / e.vmsPerHost }

// vmDS is the global index of VM i's datastore (all its disks live there).
func (e *estate) vmDS(i int) int {
	c := e.hostCluster(e.vmHost(i))
	lo, _ := e.clusterVMs(c)
	return c*e.dsFull + (i-lo)%e.dsCount(c)
}

// dsCluster returns the cluster of datastore g and its index in the cluster.
func (e *estate) dsCluster(g int) (int, int) { return g / e.dsFull, g % e.dsFull }

// dsVMs calls fn for every VM whose disks live on datastore g.
func (e *estate) dsVMs(g int, fn func(i int)) {
	c, k := e.dsCluster(g)
	lo, hi := e.clusterVMs(c)
	for i := lo + k; i < hi; i += e.dsCount(c) {
		fn(i)
	}
}

// Every 8th datastore of a cluster is NFS; the first podSize are in the cluster's pod.
func (e *estate) dsNFS(g int) bool { _, k := e.dsCluster(g); return k%8 == 7 }

func (e *estate) dsInPod(g int) bool { _, k := e.dsCluster(g); return k < e.podSize }

func (e *estate) podMembers(c int) (int, int) {
	lo := c * e.dsFull
	return lo, lo + minInt(e.podSize, e.dsCount(c))
}

// clusterLuns is the number of SAN LUNs each host of cluster c sees.
func (e *estate) clusterLuns(c int) int {
	n := e.dsCount(c)
	if e.lunsPerHost > n {
		return e.lunsPerHost
	}
	return n
}

func (e *estate) hostIscsi(h int) bool { return h%e.iscsiEvery == 0 }

// ---- VM contents ------------------------------------------------------------------------------

type vmFacts struct {
	disks     int
	format    [6]byte // 't' thin, 'l' lazy, 'e' eager
	gib       [6]int
	lsi       bool // LSI Logic SAS instead of PVSCSI
	hw        int
	template  bool
	poweredOn bool
	snapshots int
	snapAge   int // days, of the oldest
}

func (e *estate) vm(i int) vmFacts {
	x := e.h(kVM, i, 0)
	var f vmFacts
	f.disks = 1 + int(x%5) // 1..5, 3 on average
	for d := 0; d < f.disks; d++ {
		y := e.h(kVM, i, 1+d)
		switch r := y % 100; {
		case r < 70:
			f.format[d] = 't'
		case r < 90:
			f.format[d] = 'l'
		default:
			f.format[d] = 'e'
		}
		f.gib[d] = []int{16, 40, 60, 100, 200, 500}[(y>>8)%6]
	}
	f.lsi = (x>>8)%10 == 0
	f.hw = []int{10, 11, 13, 14, 15, 17, 19}[(x>>16)%7]
	f.template = (x>>24)%200 == 0
	f.poweredOn = !f.template && (x>>32)%10 != 0
	if (x>>40)%20 == 0 {
		f.snapshots = 1 + int((x>>48)%4)
		f.snapAge = int((x >> 52) % 30)
	}
	// A mutated VM is powered off or on again, once per epoch that picked it.
	if e.version(kVM, i)%2 == 1 {
		f.poweredOn = !f.poweredOn
	}
	return f
}

// ---- mutations ----------------------------------------------------------------------------------

// version counts the epochs that changed object i of kind.
func (e *estate) version(kind, i int) int {
	v := 0
	for ep, pct := range e.mutatePct {
		if int(e.h(kMutate, i, kind<<8|ep)%10000) < pct*100 {
			v++
		}
	}
	return v
}

// ---- counts ---------------------------------------------------------------------------------------

type counts struct {
	Datastore  int `json:"datastore"`
	StoragePod int `json:"storage_pod"`
	VM         int `json:"vm"`
	Host       int `json:"host"`
	DVSwitch   int `json:"dvswitch"`
	IscsiHBA   int `json:"iscsi_hba"`
	Lun        int `json:"lun"`
	LunPath    int `json:"lun_path"`
	Vnic       int `json:"vnic"`
	Vdisk      int `json:"vdisk"`
	Snapshot   int `json:"snapshot"`
}

// count walks the generators (O(VMs), no memory) for what a poll must store.
func (e *estate) count() counts {
	c := counts{Datastore: e.nDS, StoragePod: e.nCluster, VM: e.nVM, Host: e.nHost, DVSwitch: e.nDVS}
	for h := 0; h < e.nHost; h++ {
		l := e.clusterLuns(e.hostCluster(h))
		c.Lun += l + 1 // + the local boot disk
		c.LunPath += l*e.pathsPerLun + 1
		c.Vnic += 2
		if e.hostIscsi(h) {
			c.IscsiHBA++
			c.Vnic++
		}
	}
	for i := 0; i < e.nVM; i++ {
		f := e.vm(i)
		c.Vdisk += f.disks
		c.Snapshot += f.snapshots
	}
	return c
}
