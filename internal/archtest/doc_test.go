// Package archtest holds the rules that keep the house's shape: imports point down the layer
// table, the job folder knows no media, and no function grows past 100 lines or 8 parameters.
package archtest
