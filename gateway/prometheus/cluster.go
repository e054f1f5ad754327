package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/storeprint/storeprint/gateway"
)

var (
	descLeader = prometheus.NewDesc("storeprint_cluster_leader", "1 while this node leads the store's cluster, else 0.", nil, nil)
	descMember = prometheus.NewDesc("storeprint_cluster_member", "1 for each node of the cluster and its state as this node sees it (up, down, unknown).", []string{"node_id", "state"}, nil)
	descRole   = prometheus.NewDesc("storeprint_cluster_member_role", "1 for each node of the cluster and its role as this node knows it (leader, follower, candidate, witness).", []string{"node_id", "role"}, nil)
)

// AttachCluster adds the store's cluster as this node sees it: whether it
// leads, each member's state (a node down is an alert) and its role.
func (m *Metrics) AttachCluster(state func() gateway.ClusterState) {
	m.reg.MustRegister(&clusterCollector{state: state})
}

type clusterCollector struct{ state func() gateway.ClusterState }

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLeader
	ch <- descMember
	ch <- descRole
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.state()
	leads := 0.0
	if st.Role == gateway.RoleLeader {
		leads = 1
	}
	ch <- prometheus.MustNewConstMetric(descLeader, prometheus.GaugeValue, leads)
	for _, mb := range st.Members {
		ch <- prometheus.MustNewConstMetric(descMember, prometheus.GaugeValue, 1, mb.NodeID, mb.State)
		ch <- prometheus.MustNewConstMetric(descRole, prometheus.GaugeValue, 1, mb.NodeID, mb.Role)
	}
}
