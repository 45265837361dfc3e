package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// usageCommand is a command line of the usage text: "  facefusion NAME ...".
var usageCommand = regexp.MustCompile(`(?m)^  facefusion ([a-z-]+)`)

// TestManPageCommands: docs/facefusion.1's synopsis has every command of the usage text (its
// options are held to the flag table by internal/job's TestDocsMan).
func TestUsageInManPage(t *testing.T) {
	data, err := os.ReadFile("../../docs/facefusion.1")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	cmds := usageCommand.FindAllStringSubmatch(usage, -1)
	if len(cmds) == 0 {
		t.Fatal("the usage text has no command lines")
	}
	for _, m := range cmds {
		if want := ".B facefusion " + strings.ReplaceAll(m[1], "-", `\-`) + "\n"; !strings.Contains(page, want) {
			t.Errorf("docs/facefusion.1 has no synopsis line %q for the command %s", strings.TrimSpace(want), m[1])
		}
	}
}
