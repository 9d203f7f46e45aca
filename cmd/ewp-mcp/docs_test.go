package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// toolsListed is the number of tools the server lists over stdio with
// args (the real process, as a client starts it).
func toolsListed(t *testing.T, args ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "EWP_MCP_RUN_MAIN=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()    //nolint:errcheck // the count is what is tested
	defer stdin.Close() // ends the session
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == 1 {
			return len(m.Result.Tools)
		}
	}
	t.Fatal("no tools/list answer")
	return 0
}

// QUICKSTART's count of the tools a client sees is the count the server
// lists, with the decision log on as QUICKSTART runs it.
func TestQuickstartCountsTheTools(t *testing.T) {
	n := toolsListed(t, "--db", seededLedger(t))
	doc, err := os.ReadFile("../../QUICKSTART.md")
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
		"thirteen", "fourteen", "fifteen", "sixteen"}
	found := 0
	// The probe's output line and the sentence that explains it.
	for _, m := range regexp.MustCompile(`(\d+) tools, resources|The (\w+) tools are the`).FindAllStringSubmatch(string(doc), -1) {
		said := strings.ToLower(m[1] + m[2])
		for i, w := range words {
			if said == w {
				said = fmt.Sprint(i)
			}
		}
		found++
		if said != fmt.Sprint(n) {
			t.Errorf("QUICKSTART says %q; the server lists %d tools", m[0], n)
		}
	}
	if found == 0 {
		t.Errorf("QUICKSTART names no count of tools (the server lists %d)", n)
	}
}
