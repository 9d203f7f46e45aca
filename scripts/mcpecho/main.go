// Command mcpecho serves internal/mcpecho: a trivial MCP server in Go.
//
//	mcpecho [--faults] [--name N] [--description D]            stdio
//	mcpecho --http 127.0.0.1:0 [...]                           Streamable HTTP at /mcp
//
// Over HTTP it prints "listening URL" on stderr once it serves.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/ewp-go/ewp/internal/mcpecho"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	var o mcpecho.Options
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.StringVar(&o.Name, "name", "", "the server's name (go-echo)")
	flag.StringVar(&o.Description, "description", "", "the echo tool's description")
	flag.BoolVar(&o.Faults, "faults", false, "add the misbehaving tools (hang, die, flood, rug_pull)")
	flag.Parse()
	s := mcpecho.New(o)
	if *addr == "" {
		// Enough workers that 64 concurrent callers (the cost runs) are
		// never queued behind mcp-go's default few.
		if err := server.ServeStdio(s, server.WithWorkerPoolSize(64)); err != nil {
			fmt.Fprintln(os.Stderr, "mcpecho:", err)
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpecho:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "listening http://%s/mcp\n", ln.Addr())
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Fprintln(os.Stderr, "mcpecho:", http.Serve(ln, mux))
	os.Exit(1)
}
