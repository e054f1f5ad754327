// Package deploy holds what an operations team imports to run storeprint:
// the Grafana dashboards (grafana/*.json, with a data source variable)
// and the Prometheus alert rules with their unit tests
// (prometheus/*.yml, prometheus/*_test.yml). Uses lists the metrics they
// read, so that a test can check that the programs serve every one;
// docs/operations.md says what each metric and alert means.
package deploy
